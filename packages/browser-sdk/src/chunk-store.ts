/** A sealed chunk waiting for its acknowledgement: exactly the bytes every attempt sends. */
export interface StoredChunk {
  sessionId: string;
  seq: number;
  /** The deflated chunk JSON, or the JSON itself when `json` (sealed as the page left). */
  body: Uint8Array;
  json?: true;
  /** Events in the chunk (for gap accounting when it must be dropped). */
  firstT: number;
  lastT: number;
}

/**
 * Where unacknowledged chunks wait, so a page that closes or crashes sends them on its next load:
 * IndexedDB in browsers, memory where it is unavailable (or in tests).
 */
export interface ChunkStore {
  put(chunk: StoredChunk): Promise<void>;
  delete(sessionId: string, seq: number): Promise<void>;
  /** Every stored chunk, sessions in any order, each session's chunks by seq. */
  all(): Promise<StoredChunk[]>;
}

/**
 * A store in memory: chunks live as long as the page.
 *
 * @example
 * ```ts
 * const store = createMemoryChunkStore();
 * ```
 */
export function createMemoryChunkStore(): ChunkStore {
  const chunks = new Map<string, StoredChunk>();
  const key = (sessionId: string, seq: number) => `${sessionId}/${seq}`;
  return {
    async put(chunk) {
      chunks.set(key(chunk.sessionId, chunk.seq), chunk);
    },
    async delete(sessionId, seq) {
      chunks.delete(key(sessionId, seq));
    },
    async all() {
      return [...chunks.values()].sort((a, b) =>
        a.sessionId === b.sessionId ? a.seq - b.seq : a.sessionId < b.sessionId ? -1 : 1,
      );
    },
  };
}

/** A store that also keeps chunks at once, for a page that is leaving. */
export interface ExitChunkStore extends ChunkStore {
  /** Keeps a chunk sealed at exit synchronously (or, failing that, puts it in the store). */
  keep(chunk: StoredChunk): void;
}

const KEPT = 'svc:chunk:';

/**
 * `store`, plus the chunks sealed as the page leaves: IndexedDB writes are asynchronous and a
 * leaving page is gone before they finish, so those wait in `storage` (the tab's
 * `sessionStorage`, key `svc:chunk:<sessionId>/<seq>`, the chunk with its JSON as text), written
 * synchronously. `all` lists them with the store's, and `delete` removes them too. Where `storage`
 * refuses one (full, denied) it goes to the store, as far as the page lives.
 *
 * @example
 * ```ts
 * const store = withExitChunks(await openChunkStore(), sessionStorage);
 * for (const chunk of writer.sealNow(KEEPALIVE_BUDGET_BYTES)) store.keep(chunk);
 * ```
 */
export function withExitChunks(store: ChunkStore, storage: Storage | undefined): ExitChunkStore {
  const key = (sessionId: string, seq: number) => `${KEPT}${sessionId}/${seq}`;
  return {
    put: (chunk) => store.put(chunk),
    async delete(sessionId, seq) {
      storage?.removeItem(key(sessionId, seq));
      await store.delete(sessionId, seq);
    },
    async all() {
      const kept: StoredChunk[] = [];
      for (const name of Object.keys(storage ?? {}))
        if (name.startsWith(KEPT)) {
          const chunk = JSON.parse(storage?.getItem(name) ?? '{}');
          kept.push({ ...chunk, body: new TextEncoder().encode(chunk.body) });
        }
      return [...(await store.all()), ...kept].sort((a, b) => a.seq - b.seq);
    },
    keep(chunk) {
      try {
        // No storage (not a browser) throws here too: the store is all there is.
        (storage as Storage).setItem(
          key(chunk.sessionId, chunk.seq),
          JSON.stringify({ ...chunk, body: new TextDecoder().decode(chunk.body) }),
        );
      } catch {
        void store.put(chunk).catch(() => {});
      }
    },
  };
}

const DATABASE = 'svc-sdk';
const STORE = 'chunks';

function request<Value>(operation: IDBRequest<Value>): Promise<Value> {
  return new Promise((resolve, reject) => {
    operation.onsuccess = () => resolve(operation.result);
    operation.onerror = () => reject(operation.error);
  });
}

/**
 * A store in IndexedDB (database `svc-sdk`, store `chunks`, keyed by `[sessionId, seq]`), or
 * the memory store when IndexedDB is unavailable or refuses to open (private modes).
 *
 * @example
 * ```ts
 * const store = await openChunkStore();
 * ```
 */
export async function openChunkStore(): Promise<ChunkStore> {
  if (typeof indexedDB === 'undefined') return createMemoryChunkStore();
  let database: IDBDatabase;
  try {
    const opening = indexedDB.open(DATABASE, 1);
    opening.onupgradeneeded = () => {
      opening.result.createObjectStore(STORE, { keyPath: ['sessionId', 'seq'] });
    };
    database = await request(opening);
  } catch {
    return createMemoryChunkStore();
  }
  const store = (mode: IDBTransactionMode) => database.transaction(STORE, mode).objectStore(STORE);
  return {
    async put(chunk) {
      await request(store('readwrite').put(chunk));
    },
    async delete(sessionId, seq) {
      await request(store('readwrite').delete([sessionId, seq]));
    },
    async all() {
      return (await request(store('readonly').getAll())) as StoredChunk[];
    },
  };
}
