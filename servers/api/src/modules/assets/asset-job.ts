import type { PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { createSessionJobWorker, finishSessionJob, sessionQueue } from '../../platform/jobs/session-jobs.ts';
import { type AssetDependencies, archiveSessionAssets } from './archive.ts';

// The archiving job (servers/api/README.md, Archived assets): one row of `asset_jobs` per session
// with new rrweb full snapshots, queued by ingest in the chunk's own statement (for projects that
// list allowed origins). A run archives what the chunks after the session's watermark reference
// (`archiveSessionAssets`) and ends the job; a chunk that arrived meanwhile makes it due again.
// Its own queue and worker, as the facts job of insights: fetching a site's files never delays
// ingest or call processing.

const ASSET_JOBS = sessionQueue('asset_jobs');

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
  const totals = { jobs: 0, fetched: 0 };
  const loop = createSessionJobWorker(
    dependencies,
    ASSET_JOBS,
    {
      what: 'archiving session assets',
      async run(job) {
        const result = await archiveSessionAssets(dependencies, job.projectId, job.sessionId);
        await finishSessionJob(dependencies.database, ASSET_JOBS, job);
        totals.jobs += 1;
        totals.fetched += result.fetched;
      },
    },
    {
      batchSize: options.batchSize ?? 4,
      leaseMs: options.leaseMs ?? 300_000,
      concurrency: options.concurrency ?? 1,
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    },
  );
  return { ...loop, stats: () => ({ ...totals, failures: loop.failures() }) };
}
