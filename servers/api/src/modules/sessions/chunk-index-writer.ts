import type { Kysely } from 'kysely';
import { retryTransientConflicts } from '../../platform/database/errors.ts';
import type { Database } from '../../platform/database/schema.ts';
import {
  type ChunkRecord,
  findIndexedChunks,
  type IndexedChunk,
  indexChunks,
  placeKey,
} from './ingest-repository.ts';

/** Options of {@link createChunkIndexWriter}. */
export interface ChunkIndexWriterOptions {
  database: Kysely<Database>;
  /**
   * Batches in flight at once. 1 on the embedded store (PGlite has one connection: a second
   * batch would only wait for it); a few on PostgreSQL, below the pool size so reads still get a
   * connection. Default 1.
   */
  concurrency?: number;
  /** The most chunks in one transaction. Default 128. */
  maxBatch?: number;
  /**
   * How long a batch of fewer than `maxBatch` chunks waits for more before its transaction starts,
   * in milliseconds (like PostgreSQL's `commit_delay`). Default 0: start at once. The server uses
   * {@link SERVER_LINGER_MS}.
   */
  lingerMs?: number;
  /**
   * Makes committed transactions durable (`DatabaseHandle.flush`: PGlite's WAL barrier), run
   * after each commit and before any chunk of it is answered.
   */
  flush?: () => Promise<void>;
  /**
   * Meter the batches (usage: sessions started, chunks, bytes; see `indexChunks`). Default true;
   * false only for the benchmark's baseline (`pnpm bench`, metering on against off).
   */
  metered?: boolean;
}

/**
 * The server's linger: a few milliseconds more per acknowledgement buy transactions of 10–20
 * chunks instead of one, which is what lets the embedded store keep up (`pnpm bench`).
 */
export const SERVER_LINGER_MS = 5;

/**
 * What became of a chunk: `stored` (this record's row is indexed now), or `exists` (another row
 * already held its `(project, session, seq)`: nothing changed; `indexed` is that row).
 */
export type IndexOutcome = { status: 'stored' } | { status: 'exists'; indexed: IndexedChunk };

/** Group commit of chunk index rows. */
export interface ChunkIndexWriter {
  /**
   * Indexes one chunk whose blob is durable; resolves once its transaction has committed.
   * Rejects on database failures: the chunk may or may not be indexed then (a failed COMMIT
   * cannot tell), so the caller keeps the blob and the client retries.
   */
  index(record: ChunkRecord): Promise<IndexOutcome>;
  /** Resolves once every chunk handed to {@link index} has been settled. */
  drain(): Promise<void>;
  /** Transactions committed and chunks they indexed or answered, since the writer was created. */
  stats(): { batches: number; chunks: number };
}

interface Pending {
  record: ChunkRecord;
  resolve(outcome: IndexOutcome): void;
  reject(error: unknown): void;
}

/**
 * Indexes chunks with group commit: requests that arrive while a batch is being written wait for
 * the next one, which takes them all (up to `maxBatch`) and indexes them atomically, usually in
 * one statement (`indexChunks`). A single request is never delayed to wait for others: an idle
 * writer starts at once (after `lingerMs`). On the embedded store every statement waits for
 * PGlite's one connection, so a batch of 16 chunks costs little more than one of a single chunk
 * (`pnpm bench`).
 *
 * When a batch fails, its chunks are retried one transaction each, so one bad chunk (or a
 * deadlock between two servers on PostgreSQL) fails only itself.
 *
 * @example
 * ```ts
 * const writer = createChunkIndexWriter({ database, concurrency: 1 });
 * const outcome = await writer.index(record);
 * if (outcome.status === 'exists' && outcome.indexed.blobKey !== record.blobKey) await blobStore.delete(record.blobKey);
 * ```
 */
export function createChunkIndexWriter(options: ChunkIndexWriterOptions): ChunkIndexWriter {
  const { database } = options;
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 128));
  const lingerMs = Math.max(0, options.lingerMs ?? 0);
  const queue: Pending[] = [];
  /** Batches whose transaction runs (at most `concurrency`). */
  let running = 0;
  /** Batches not settled yet: in their transaction, or being flushed and answered. */
  let unsettled = 0;
  const counters = { batches: 0, chunks: 0 };
  let idle: { promise: Promise<void>; resolve(): void } | undefined;

  let lingering: NodeJS.Timeout | undefined;

  function pump(): void {
    if (lingering !== undefined) {
      if (queue.length < maxBatch) return;
      clearTimeout(lingering);
      lingering = undefined;
    } else if (lingerMs > 0 && running < concurrency && queue.length > 0 && queue.length < maxBatch) {
      lingering = setTimeout(() => {
        lingering = undefined;
        startBatches();
      }, lingerMs);
      return;
    }
    startBatches();
  }

  function startBatches(): void {
    while (running < concurrency && queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      running += 1;
      unsettled += 1;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        running -= 1;
        pump();
      };
      void runBatch(batch, release).finally(() => {
        release();
        unsettled -= 1;
        if (isIdle() && idle !== undefined) {
          idle.resolve();
          idle = undefined;
        }
      });
    }
  }

  function isIdle(): boolean {
    return unsettled === 0 && queue.length === 0 && lingering === undefined;
  }

  /** `release` frees the batch's slot: called once its transaction is over, before the flush. */
  async function runBatch(batch: Pending[], release: () => void): Promise<void> {
    try {
      await commit(batch, release);
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      for (const pending of batch) {
        try {
          await commit([pending], () => {});
        } catch (singleError) {
          pending.reject(singleError);
        }
      }
    }
  }

  /**
   * One transaction for the batch, then every record of it settled. The next batch's transaction
   * starts while this one is flushed (the flush of a later commit covers earlier ones too).
   */
  async function commit(batch: Pending[], release: () => void): Promise<void> {
    const records = batch.map((pending) => pending.record);
    let stored: Set<string>;
    try {
      // Two batches with chunks of the same sessions may deadlock on PostgreSQL (the sub-statements
      // of one statement lock rows in no set order): the one aborted runs again.
      stored = await retryTransientConflicts(() =>
        indexChunks(database, records, { metered: options.metered ?? true }),
      );
    } finally {
      release();
    }
    await options.flush?.();
    counters.batches += 1;
    counters.chunks += records.length;

    // The chunks that were not new: a winner in this batch, else a row indexed before.
    const winners = new Map<string, IndexedChunk>();
    for (const record of records) {
      if (stored.has(record.blobKey)) {
        winners.set(placeOf(record), { contentSha256: record.contentSha256, blobKey: record.blobKey });
      }
    }
    const unresolved = records.filter(
      (record) => !stored.has(record.blobKey) && !winners.has(placeOf(record)),
    );
    if (unresolved.length > 0) {
      const found = await findIndexedChunks(
        database,
        unresolved.map((record) => ({
          projectId: record.projectId,
          sessionId: record.chunk.sessionId,
          seq: record.chunk.seq,
        })),
      );
      for (const [place, indexed] of found) winners.set(place, indexed);
    }

    for (const pending of batch) {
      const { record } = pending;
      if (stored.has(record.blobKey)) {
        pending.resolve({ status: 'stored' });
        continue;
      }
      const indexed = winners.get(placeOf(record));
      if (indexed === undefined) {
        // Indexed a moment ago and deleted since: only a session deletion can do that.
        pending.reject(new Error(`Chunk ${placeOf(record)} was neither indexed nor found`));
      } else {
        pending.resolve({ status: 'exists', indexed });
      }
    }
  }

  return {
    index(record) {
      return new Promise<IndexOutcome>((resolve, reject) => {
        queue.push({ record, resolve, reject });
        pump();
      });
    },
    drain() {
      if (isIdle()) return Promise.resolve();
      if (idle === undefined) {
        let resolve!: () => void;
        const promise = new Promise<void>((settle) => {
          resolve = settle;
        });
        idle = { promise, resolve };
      }
      return idle.promise;
    },
    stats() {
      return { ...counters };
    },
  };
}

function placeOf(record: ChunkRecord): string {
  return placeKey({ projectId: record.projectId, sessionId: record.chunk.sessionId, seq: record.chunk.seq });
}
