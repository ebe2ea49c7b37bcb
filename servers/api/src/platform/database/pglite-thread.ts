import { Worker } from 'node:worker_threads';
import type { QueryResult } from 'kysely';
import type { PGliteExecutor } from './pglite-dialect.ts';
import type { SerializedError, ThreadRequest, ThreadResponse } from './pglite-thread.worker.ts';

/** Each member of a union without its `id`. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** PGlite running on a worker thread of its own: its executor, and how to close it. */
export interface PGliteThread {
  executor: PGliteExecutor;
  /** Closes the database, then ends the thread. Statements sent after it fail. */
  close(): Promise<void>;
}

/** An error from the database thread: the original's name and message, and its fields (`code`, ...). */
function deserialize(error: SerializedError): Error {
  const restored = new Error(error.message);
  restored.name = error.name;
  Object.assign(restored, error.fields);
  return restored;
}

/**
 * Opens the PGlite database in `directory` (which must hold one: see `initializePGliteDirectory`)
 * on a worker thread and resolves once it is ready. Each statement is one message each way; the
 * thread runs them one at a time, in the order sent. Errors come back with their fields, so a
 * unique violation still has `code: '23505'`.
 *
 * @example
 * ```ts
 * const thread = await startPGliteThread('./data/pglite');
 * const database = new Kysely<Database>({ dialect: new PGliteDialect(thread.executor) });
 * ```
 */
export function startPGliteThread(directory: string): Promise<PGliteThread> {
  const worker = new Worker(new URL('./pglite-thread.worker.ts', import.meta.url), {
    workerData: { directory },
    // The process's flags, except those only an entry script may take (`--input-type`).
    execArgv: process.execArgv.filter((flag) => !flag.startsWith('--input-type')),
  });
  const pending = new Map<number, { resolve(response: ThreadResponse): void; reject(error: Error): void }>();
  let nextId = 0;
  let ended: Error | undefined;

  const failAll = (error: Error) => {
    ended ??= error;
    for (const job of pending.values()) job.reject(error);
    pending.clear();
  };

  function request(message: WithoutId<ThreadRequest>): Promise<ThreadResponse> {
    if (ended !== undefined) return Promise.reject(ended);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id });
    });
  }

  const executor: PGliteExecutor = {
    async executeQuery<Row>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<Row>> {
      const response = await request({ kind: 'query', sql, parameters });
      if (response.kind === 'error') throw deserialize(response.error);
      if (response.kind !== 'result')
        throw new Error(`Unexpected answer from the database thread: ${response.kind}`);
      return response.numAffectedRows === undefined
        ? { rows: response.rows as Row[] }
        : { rows: response.rows as Row[], numAffectedRows: response.numAffectedRows };
    },
  };

  return new Promise((resolve, reject) => {
    worker.on('message', (response: ThreadResponse) => {
      if (response.kind === 'ready') {
        resolve({
          executor,
          async close() {
            if (ended === undefined) {
              const answer = await request({ kind: 'close' });
              ended = new Error('The database is closed');
              if (answer.kind === 'error') {
                await worker.terminate();
                throw deserialize(answer.error);
              }
            }
            await worker.terminate();
          },
        });
        return;
      }
      if (response.kind === 'failed') {
        const error = deserialize(response.error);
        failAll(error);
        void worker.terminate();
        reject(error);
        return;
      }
      const job = pending.get(response.id);
      if (job === undefined) return;
      pending.delete(response.id);
      job.resolve(response);
    });
    worker.on('error', (error) => {
      failAll(error);
      reject(error);
    });
    worker.on('exit', (code) => {
      const error = new Error(`The database thread exited (code ${code})`);
      failAll(error);
      reject(error);
    });
  });
}
