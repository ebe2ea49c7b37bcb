import type { ChunkStore, StoredChunk } from './chunk-store.ts';

/** Keepalive requests of one page may carry this many body bytes in all (the Fetch standard's limit). */
export const KEEPALIVE_BUDGET_BYTES = 64 * 1024;

/** Retry delays: 1 s doubling up to this, with ±50 % jitter. */
const MAX_BACKOFF_MS = 60_000;

export interface TransportOptions {
  /** The server's base URL, e.g. `https://replay.example.com`. */
  endpoint: string;
  projectKey: string;
  store: ChunkStore;
  fetch?: typeof fetch;
  random?: () => number;
  /** A chunk the server can never accept (400, 413): the caller records a `gap` for it. */
  onDropped?: (chunk: StoredChunk, status: number) => void;
  /**
   * The project key was refused (401/403), or a monthly cap refuses the session (429 with
   * `X-Service-Quota`): the transport stops for good; the chunks stay in the store.
   */
  onRefused?: (status: number) => void;
}

/** What the governor reads. */
export interface TransportState {
  /** Chunks sealed and not acknowledged yet, and their bytes. */
  backlogChunks: number;
  backlogBytes: number;
  /** Failed attempts in a row (0 after a success). */
  failures: number;
}

export interface Transport {
  /** Sends a sealed (and stored) chunk after the ones before it. */
  enqueue(chunk: StoredChunk): void;
  /** Resolves once every queued chunk is acknowledged, or the transport is waiting to retry. */
  flush(): Promise<void>;
  /**
   * The page is going away: queues `chunks` (sealed at exit, kept by the caller) and sends what is
   * queued and not in flight with `keepalive`, within 64 KiB, at once. The queue takes the answers
   * of those requests when the page lives on, so nothing is sent twice.
   */
  sendOnExit(chunks?: StoredChunk[]): void;
  /** Retries at once (the browser came back `online`). */
  retryNow(): void;
  state(): TransportState;
  stop(): void;
}

/**
 * The chunk sender (PROTOCOL.md §1): one request in flight, chunks in the order they were
 * sealed, each the same bytes on every attempt. A chunk is done when the server answers 200
 * `{ seq }` (stored or duplicate), or 409 (that seq is stored already). It is dropped (and
 * reported through `onDropped`, which records a `gap`) on 400 and 413, which no retry can fix.
 * 401 and 403 stop the transport, as does a 429 of a monthly cap (`X-Service-Quota`). Anything
 * else (network errors, a 429 of the rate limit, 5xx) is retried after 1 s,
 * 2 s, 4 s, ... up to 60 s with ±50 % jitter, `Retry-After` honoured; the chunks stay in the
 * store meanwhile, so a closed page resends them on its next load.
 *
 * @example
 * ```ts
 * const transport = createTransport({ endpoint, projectKey, store });
 * transport.enqueue(sealed);
 * await transport.flush();
 * ```
 */
export function createTransport(options: TransportOptions): Transport {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const random = options.random ?? Math.random;
  const url = `${options.endpoint.replace(/\/+$/, '')}/v1/ingest`;
  const queue: StoredChunk[] = [];
  let failures = 0;
  let running: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  let stopped = false;
  /** Keepalive requests sent at exit, whose answers the queue takes instead of sending again. */
  const exits = new Map<StoredChunk, Promise<Response>>();

  const request = (chunk: StoredChunk, keepalive: boolean) =>
    send(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/octet-stream',
        'X-Service-Project-Key': options.projectKey,
        'X-Service-Encoding': chunk.json ? 'json' : 'json+deflate',
      },
      body: chunk.body as BodyInit,
      keepalive,
      credentials: 'omit',
    });

  const done = async (chunk: StoredChunk) => {
    queue.shift();
    failures = 0;
    await options.store.delete(chunk.sessionId, chunk.seq);
  };

  const sleep = (milliseconds: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, milliseconds);
    });

  async function drain(): Promise<void> {
    while (!stopped && queue.length > 0) {
      const chunk = queue[0] as StoredChunk;
      let status = 0;
      let retryAfterMs = 0;
      try {
        const response = await (exits.get(chunk) ?? request(chunk, false));
        status = response.status;
        retryAfterMs = Number(response.headers.get('Retry-After') ?? 0) * 1000 || 0;
        // A monthly cap refuses the session: as final as a refused key.
        if (status === 429 && response.headers.has('X-Service-Quota')) status = 403;
        await response.body?.cancel();
      } catch {
        status = 0;
      }
      exits.delete(chunk);
      if (status === 200 || status === 409) {
        await done(chunk);
      } else if (status === 400 || status === 413) {
        await done(chunk);
        options.onDropped?.(chunk, status);
      } else if (status === 401 || status === 403) {
        stopped = true;
        options.onRefused?.(status);
      } else {
        failures += 1;
        const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1)) * (0.5 + random());
        await sleep(Math.max(backoff, retryAfterMs));
      }
    }
  }

  const start = () => {
    running ??= drain().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    enqueue(chunk) {
      if (stopped) return;
      queue.push(chunk);
      void start();
    },
    async flush() {
      // Waits for the chunks queued now; a transport backing off resolves at its next attempt.
      while (running !== undefined && !stopped) {
        const current = running;
        if (failures > 0) return;
        await current;
      }
    },
    sendOnExit(chunks = []) {
      if (stopped) return;
      let budget = KEEPALIVE_BUDGET_BYTES;
      // The chunks sealed now first (they wait in the tab's storage, not in the store), then what
      // is queued and not in flight already (the first chunk may be on its way); one that does not
      // fit leaves the budget to the next.
      const waiting = chunks.concat(queue.slice(running === undefined ? 0 : 1));
      queue.push(...chunks);
      for (const chunk of waiting) {
        if (chunk.body.byteLength > budget) continue;
        budget -= chunk.body.byteLength;
        if (!exits.has(chunk)) {
          const sending = request(chunk, true);
          sending.catch(() => {});
          exits.set(chunk, sending);
        }
      }
      void start();
    },
    retryNow() {
      if (wake === undefined) return;
      clearTimeout(timer);
      failures = Math.min(failures, 1);
      wake();
    },
    state() {
      return {
        backlogChunks: queue.length,
        backlogBytes: queue.reduce((sum, chunk) => sum + chunk.body.byteLength, 0),
        failures,
      };
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
    },
  };
}
