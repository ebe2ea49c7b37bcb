import { createPollingLoop, type PollingLoop, runConcurrently } from '../workers/polling-loop.ts';
import {
  type CallProcessingDependencies,
  type CallProcessingResult,
  type ClaimedCallJob,
  claimCallJobs,
  failCallJob,
  processCallJob,
} from './call-processing.ts';

export interface CallWorkerOptions {
  /** How often an idle worker looks for due jobs (ms). Default 1000. */
  pollMs?: number;
  /** Jobs claimed at once. Default 8. */
  batchSize?: number;
  /**
   * Jobs of a claimed batch run at once. Default 1. A job waits on the database most of its time,
   * so on PostgreSQL a few at once keep the worker busy; PGlite has one connection, so 1.
   */
  concurrency?: number;
  /**
   * How long a claimed job stays with this worker before another may take it (ms). Default 60 s:
   * a worker that died loses its jobs after that. A job that runs longer may run twice at once,
   * which is harmless: only one run writes the session's progress (over the version it read), the
   * other gives up its work and runs again from what the first wrote.
   */
  leaseMs?: number;
}

/** Totals since the worker was created. */
export interface CallWorkerStats {
  jobs: number;
  failures: number;
  chunksRead: number;
  itemsAdded: number;
  /** Track samples added to series. */
  trackSamples: number;
  /** Jobs that computed their session from all its items rather than going on from its progress. */
  recomputed: number;
}

/** The in-process worker of call processing jobs. */
export interface CallWorker extends PollingLoop {
  stats(): CallWorkerStats;
}

/**
 * A worker that claims due `call_jobs` and runs {@link processCallJob} on each, one at a time. A
 * job that throws is released with a backoff (its error kept in `last_error`) and never lost.
 * Any number of workers, in this process or others on the same PostgreSQL, can run at once.
 *
 * @example
 * ```ts
 * const worker = createCallWorker({ database, blobStore, masterKey, log });
 * worker.start();
 * // ...
 * await worker.stop();
 * ```
 */
export function createCallWorker(
  dependencies: CallProcessingDependencies,
  options: CallWorkerOptions = {},
): CallWorker {
  const pollMs = options.pollMs ?? 1_000;
  const batchSize = options.batchSize ?? 8;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const leaseMs = options.leaseMs ?? 60_000;
  const totals: CallWorkerStats = {
    jobs: 0,
    failures: 0,
    chunksRead: 0,
    itemsAdded: 0,
    trackSamples: 0,
    recomputed: 0,
  };
  const add = (result: CallProcessingResult) => {
    totals.jobs += 1;
    totals.chunksRead += result.chunksRead;
    totals.itemsAdded += result.itemsAdded;
    totals.trackSamples += result.trackSamples;
    if (result.recomputed) totals.recomputed += 1;
  };

  /** One claim and its jobs: how many jobs ran. */
  async function runBatch(): Promise<number> {
    const jobs = await claimCallJobs(dependencies.database, batchSize, leaseMs);
    await runConcurrently(jobs, concurrency, runJob);
    return jobs.length;
  }

  async function runJob(job: ClaimedCallJob): Promise<void> {
    try {
      add(await processCallJob(dependencies, job));
    } catch (error) {
      totals.failures += 1;
      dependencies.log.error(
        { err: error, projectId: job.projectId, sessionId: job.sessionId, attempts: job.attempts },
        'call processing failed; the job will be retried',
      );
      await failCallJob(dependencies.database, job, error).catch((failure: unknown) => {
        dependencies.log.error({ err: failure }, 'could not release a failed call job');
      });
    }
  }

  const loop = createPollingLoop(runBatch, {
    pollMs,
    onError: (error) => dependencies.log.error({ err: error }, 'could not claim call jobs'),
  });

  return {
    ...loop,
    stats() {
      return { ...totals };
    },
  };
}
