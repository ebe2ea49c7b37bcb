/** A sealed chunk waiting for its acknowledgement: exactly the bytes every attempt sends. */
export interface StoredChunk {
  sessionId: string;
  seq: number;
  /** The deflated chunk JSON. */
  body: Uint8Array;
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
