import { parentPort, workerData } from 'node:worker_threads';
import { createPGliteExecutor } from './pglite-dialect.ts';
import { newPGlite } from './pglite-instance.ts';

// The embedded store's PGlite, on a thread of its own (see pglite-thread.ts): it opens the data
// directory, then runs each statement it is sent and answers with the rows or the error.

/** What the thread is sent. */
export type ThreadRequest =
  | { kind: 'query'; id: number; sql: string; parameters: readonly unknown[] }
  | { kind: 'close'; id: number };

/** A database error as it crosses threads: its message and its own fields (`code`, `detail`, ...). */
export interface SerializedError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

/** What the thread answers. */
export type ThreadResponse =
  | { kind: 'ready' }
  | { kind: 'failed'; error: SerializedError }
  | { kind: 'result'; id: number; rows: unknown[]; numAffectedRows?: bigint }
  | { kind: 'error'; id: number; error: SerializedError };

function serialize(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}

const port = parentPort;
if (port === null) throw new Error('pglite-thread.worker.ts runs as a worker thread');
const { directory } = workerData as { directory: string };
const send = (response: ThreadResponse) => port.postMessage(response);

const pglite = newPGlite(directory);
try {
  await pglite.waitReady;
  const executor = createPGliteExecutor(pglite);
  port.on('message', (request: ThreadRequest) => {
    if (request.kind === 'close') {
      pglite.close().then(
        () => send({ kind: 'result', id: request.id, rows: [] }),
        (error: unknown) => send({ kind: 'error', id: request.id, error: serialize(error) }),
      );
      return;
    }
    executor.executeQuery(request.sql, request.parameters).then(
      (result) =>
        send({
          kind: 'result',
          id: request.id,
          rows: result.rows,
          ...(result.numAffectedRows === undefined ? {} : { numAffectedRows: result.numAffectedRows }),
        }),
      (error: unknown) => send({ kind: 'error', id: request.id, error: serialize(error) }),
    );
  });
  send({ kind: 'ready' });
} catch (error) {
  send({ kind: 'failed', error: serialize(error) });
}
