import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop, runConcurrently } from '../../platform/jobs/polling-loop.ts';
import { backoffMs, claimStatement, type JobTable, releaseFailedJob } from '../../platform/jobs/queue.ts';
import { type AssetDependencies, archiveSessionAssets } from './archive.ts';

// The archiving job (servers/api/README.md, Archived assets): one row of `asset_jobs` per session
// with new rrweb full snapshots, queued by ingest in the chunk's own statement (for projects that
// list allowed origins). A run archives what the chunks after the session's watermark reference
// (`archiveSessionAssets`) and ends the job; a chunk that arrived meanwhile makes it due again.
// Its own queue and worker, as the facts job of insights: fetching a site's files never delays
// ingest or call processing.

const ASSET_JOBS: JobTable = { name: 'asset_jobs', key: ['project_id', 'session_id'] };

/** A claimed job. */
interface AssetJob {
  projectId: string;
  sessionId: string;
  generation: number;
  attempts: number;
}

/** Claims up to `limit` due jobs for `leaseMs` (`for update skip locked`). */
async function claimAssetJobs(
  database: Kysely<Database>,
  limit: number,
  leaseMs: number,
): Promise<AssetJob[]> {
  const { rows } = await sql<{
    project_id: string;
    session_id: string;
    generation: number;
    attempts: number;
  }>`${sql.raw(
    claimStatement(ASSET_JOBS, {
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

/** Ends a job that ran: deleted unless a chunk arrived meanwhile (its generation moved: due again). */
async function finishAssetJob(
  executor: Kysely<Database> | Transaction<Database>,
  job: AssetJob,
): Promise<void> {
  await executor
    .deleteFrom('asset_jobs')
    .where('project_id', '=', job.projectId)
    .where('session_id', '=', job.sessionId)
    .where('generation', '=', job.generation)
    .execute();
  await executor
    .updateTable('asset_jobs')
    .set({ locked_until: null, attempts: 0, last_error: null, finished_at: new Date() })
    .where('project_id', '=', job.projectId)
    .where('session_id', '=', job.sessionId)
    .execute();
}

/** Totals of an asset worker since it was created. */
interface AssetWorkerStats {
  jobs: number;
  failures: number;
  fetched: number;
}

/** The in-process worker of archiving jobs. */
export interface AssetWorker extends PollingLoop {
  stats(): AssetWorkerStats;
}

/**
 * A worker that claims due archiving jobs and runs them, a few at once. A job that throws (a
 * chunk that cannot be read, the database or blob store down: not a site's failure, which is
 * recorded as the asset's outcome) is released with a backoff (1 s doubling to 10 minutes, its
 * error kept in `last_error`) and never lost.
 *
 * @example
 * ```ts
 * const worker = createAssetWorker({ database, blobStore, masterKey, log, policy });
 * worker.start();
 * ```
 */
export function createAssetWorker(
  dependencies: AssetDependencies,
  options: { pollMs?: number; batchSize?: number; concurrency?: number; leaseMs?: number } = {},
): AssetWorker {
  const batchSize = options.batchSize ?? 4;
  const leaseMs = options.leaseMs ?? 300_000;
  const totals: AssetWorkerStats = { jobs: 0, failures: 0, fetched: 0 };
  const loop = createPollingLoop(
    async () => {
      const jobs = await claimAssetJobs(dependencies.database, batchSize, leaseMs);
      await runConcurrently(jobs, Math.max(1, options.concurrency ?? 1), async (job) => {
        try {
          const result = await archiveSessionAssets(dependencies, job.projectId, job.sessionId);
          await finishAssetJob(dependencies.database, job);
          totals.jobs += 1;
          totals.fetched += result.fetched;
        } catch (error) {
          totals.failures += 1;
          dependencies.log.error(
            { err: error, projectId: job.projectId, sessionId: job.sessionId, attempts: job.attempts },
            'archiving session assets failed; the job will be retried',
          );
          await releaseFailedJob(
            dependencies.database,
            ASSET_JOBS,
            { project_id: job.projectId, session_id: job.sessionId },
            { retryAt: new Date(Date.now() + backoffMs(job.attempts)), error },
          ).catch((failure: unknown) =>
            dependencies.log.error({ err: failure }, 'could not release an asset job'),
          );
        }
      });
      return { ran: jobs.length, more: jobs.length >= batchSize };
    },
    {
      pollMs: options.pollMs ?? 2_000,
      onError: (error) => dependencies.log.error({ err: error }, 'could not claim asset jobs'),
    },
  );
  return { ...loop, stats: () => ({ ...totals }) };
}
