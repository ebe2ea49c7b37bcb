import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../database/schema.ts';
import { createPollingLoop, type PollingLoop, runConcurrently } from './polling-loop.ts';
import { backoffMs, claimStatement, type JobTable, releaseFailedJob } from './queue.ts';

// Queues of one job per session (insights' facts, archived assets): a row per (project, session)
// queued by ingest in the chunk's own statement, its `generation` moved by every chunk that
// arrives. A run claims the row, does the session's work, and ends it: deleted unless a chunk
// arrived meanwhile, which makes it due again. The claim, the end and the worker around them.

/** A claimed job of a session queue. */
export interface SessionJob {
  projectId: string;
  sessionId: string;
  /** The row's generation when claimed: a chunk that arrives after moves it. */
  generation: number;
  /** Runs of the job so far, this one included. */
  attempts: number;
}

/** A session queue: its table, keyed by `(project_id, session_id)`. */
export function sessionQueue(name: string): JobTable {
  return { name, key: ['project_id', 'session_id'] };
}

/**
 * Claims up to `limit` due jobs of `queue` for `leaseMs` (`for update skip locked`).
 *
 * @example
 * ```ts
 * for (const job of await claimSessionJobs(database, sessionQueue('insight_jobs'), 8, 60_000)) await run(job);
 * ```
 */
export async function claimSessionJobs(
  database: Kysely<Database>,
  queue: JobTable,
  limit: number,
  leaseMs: number,
): Promise<SessionJob[]> {
  const { rows } = await sql<{
    project_id: string;
    session_id: string;
    generation: number;
    attempts: number;
  }>`${sql.raw(
    claimStatement(queue, {
      now: 'now()',
      leaseUntil: `now() + make_interval(secs => ${Number(leaseMs) / 1000})`,
      limit: String(Math.max(1, Math.floor(limit))),
      returning: ['project_id', 'session_id', 'generation', 'attempts'],
    }),
  )}`.execute(database);
  return rows.map((row) => ({
    projectId: row.project_id,
    sessionId: row.session_id,
    generation: row.generation,
    attempts: row.attempts,
  }));
}

/**
 * Ends a job that ran: deleted unless a chunk arrived meanwhile (its generation moved: it stays,
 * due again, its lease and attempts reset).
 *
 * @example
 * ```ts
 * await finishSessionJob(transaction, sessionQueue('asset_jobs'), job);
 * ```
 */
export async function finishSessionJob(
  executor: Kysely<Database> | Transaction<Database>,
  queue: JobTable,
  job: SessionJob,
): Promise<void> {
  const table = sql.table(queue.name);
  await sql`
    delete from ${table}
    where project_id = ${job.projectId} and session_id = ${job.sessionId} and generation = ${job.generation}`.execute(
    executor,
  );
  await sql`
    update ${table} set locked_until = null, attempts = 0, last_error = null, finished_at = ${new Date()}
    where project_id = ${job.projectId} and session_id = ${job.sessionId}`.execute(executor);
}

/**
 * A worker of a session queue: claims due jobs (`batchSize`, leased `leaseMs`), runs them a few at
 * once (`concurrency`), and releases a job whose run threw with a backoff (1 s doubling to 10
 * minutes, its error kept in `last_error`), so it is never lost. `run` ends its job itself
 * ({@link finishSessionJob}, in the transaction of its writes when it has one).
 *
 * @example
 * ```ts
 * const worker = createSessionJobWorker({ database, log }, sessionQueue('asset_jobs'), {
 *   run: (job) => archiveAndFinish(job),
 *   what: 'archiving session assets',
 * });
 * ```
 */
export function createSessionJobWorker(
  dependencies: { database: Kysely<Database>; log: FastifyBaseLogger },
  queue: JobTable,
  work: {
    run(job: SessionJob): Promise<void>;
    /** What the work is, for the log (`deriving session facts`). */
    what: string;
  },
  options: { pollMs?: number; batchSize: number; concurrency?: number; leaseMs: number },
): PollingLoop & { failures(): number } {
  let failures = 0;
  const { log } = dependencies;
  const loop = createPollingLoop(
    async () => {
      const jobs = await claimSessionJobs(dependencies.database, queue, options.batchSize, options.leaseMs);
      await runConcurrently(jobs, Math.max(1, options.concurrency ?? 1), async (job) => {
        try {
          await work.run(job);
        } catch (error) {
          failures += 1;
          log.error(
            { err: error, projectId: job.projectId, sessionId: job.sessionId, attempts: job.attempts },
            `${work.what} failed; the job will be retried`,
          );
          await releaseFailedJob(
            dependencies.database,
            queue,
            { project_id: job.projectId, session_id: job.sessionId },
            { retryAt: new Date(Date.now() + backoffMs(job.attempts)), error },
          ).catch((failure: unknown) =>
            log.error({ err: failure }, `could not release a job of ${queue.name}`),
          );
        }
      });
      return { ran: jobs.length, more: jobs.length >= options.batchSize };
    },
    {
      pollMs: options.pollMs ?? 2_000,
      onError: (error) => log.error({ err: error }, `could not claim jobs of ${queue.name}`),
    },
  );
  return { ...loop, failures: () => failures };
}
