import {
  type BatchContext,
  type BatchOutcome,
  createPollingLoop,
  type PollingLoop,
  runConcurrently,
} from '../../platform/jobs/polling-loop.ts';
import { claimProcessingBatch, failProcessingJob, type ProcessingJob } from './jobs.ts';
import { type ProcessingDependencies, type ProcessingResult, processSessionJob } from './process-session.ts';

export interface ProcessingWorkerOptions {
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
  /**
   * After a session's job ran, its next job is left this long (ms) so that the chunks arriving
   * meanwhile are processed together: a live call whose chunks come faster than this costs fewer,
   * larger jobs, and its later chunks' findings come up to this much later. A chunk arriving
   * longer than this after the session's last job is processed at once. Default 0 (a job as soon
   * as a chunk arrives). `runUntilIdle()` never waits.
   */
  coalesceMs?: number;
  /** Called after each job that ran to its end, with what it did (metrics, benchmarks). */
  onJob?: (job: ProcessingJob, result: ProcessingResult) => void;
}

/** Totals since the worker was created. */
interface ProcessingWorkerStats {
  jobs: number;
  failures: number;
  chunksRead: number;
  itemsAdded: number;
  /** Track samples added to series. */
  trackSamples: number;
  /** Jobs that computed their session from all its items rather than going on from its progress. */
  recomputed: number;
}

/** The in-process worker of processing jobs. */
export interface ProcessingWorker extends Omit<PollingLoop, 'wake'> {
  /**
   * Looks for due jobs now instead of at the next poll (ingest calls it for every chunk with call
   * items). Given the chunk's session, when this worker ran that session's job less than
   * `coalesceMs` ago, it looks when the window ends instead: the job is not due before.
   */
  wake(session?: { projectId: string; sessionId: string }): void;
  stats(): ProcessingWorkerStats;
}

/**
 * A worker that claims due `processing_jobs` and runs {@link processSessionJob} on each, one at a time. A
 * job that throws is released with a backoff (its error kept in `last_error`) and never lost.
 * Any number of workers, in this process or others on the same PostgreSQL, can run at once.
 *
 * @example
 * ```ts
 * const worker = createProcessingWorker({ database, blobStore, masterKey, log });
 * worker.start();
 * // ...
 * await worker.stop();
 * ```
 */
export function createProcessingWorker(
  dependencies: ProcessingDependencies,
  options: ProcessingWorkerOptions = {},
): ProcessingWorker {
  const pollMs = options.pollMs ?? 1_000;
  const batchSize = options.batchSize ?? 8;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const leaseMs = options.leaseMs ?? 60_000;
  const coalesceMs = Math.max(0, options.coalesceMs ?? 0);
  const totals: ProcessingWorkerStats = {
    jobs: 0,
    failures: 0,
    chunksRead: 0,
    itemsAdded: 0,
    trackSamples: 0,
    recomputed: 0,
  };
  const add = (result: ProcessingResult) => {
    totals.jobs += 1;
    totals.chunksRead += result.chunksRead;
    totals.itemsAdded += result.itemsAdded;
    totals.trackSamples += result.trackSamples;
    if (result.recomputed) totals.recomputed += 1;
  };

  /**
   * One claim and its jobs: how many ran, whether to claim again at once (a full batch: more may
   * be due) and when the next job not claimed is due (left to coalesce, or due within a poll).
   */
  async function runBatch(context: BatchContext): Promise<BatchOutcome> {
    const started = performance.now();
    const { jobs, nextDueInMs } = await claimProcessingBatch(dependencies.database, {
      limit: batchSize,
      leaseMs,
      coalesceMs: context.background ? coalesceMs : 0,
      horizonMs: pollMs,
    });
    await runConcurrently(jobs, concurrency, runJob);
    const nextInMs = nextDueInMs === undefined ? undefined : nextDueInMs - (performance.now() - started);
    return { ran: jobs.length, more: jobs.length >= batchSize, nextInMs };
  }

  /** When this worker last finished a job of each session (while it may still coalesce). */
  const finishedAt = new Map<string, number>();
  const sessionKey = (session: { projectId: string; sessionId: string }) =>
    `${session.projectId}/${session.sessionId}`;
  const noteFinished = (job: ProcessingJob) => {
    if (coalesceMs === 0) return;
    const now = performance.now();
    if (finishedAt.size >= 10_000) {
      for (const [key, at] of finishedAt) if (at + coalesceMs <= now) finishedAt.delete(key);
      if (finishedAt.size >= 10_000) finishedAt.clear();
    }
    finishedAt.set(sessionKey(job), now);
  };

  async function runJob(job: ProcessingJob): Promise<void> {
    let result: ProcessingResult;
    try {
      result = await processSessionJob(dependencies, job);
    } catch (error) {
      totals.failures += 1;
      dependencies.log.error(
        { err: error, projectId: job.projectId, sessionId: job.sessionId, attempts: job.attempts },
        'processing failed; the job will be retried',
      );
      await failProcessingJob(dependencies.database, job, error).catch((failure: unknown) => {
        dependencies.log.error({ err: failure }, 'could not release a failed processing job');
      });
      return;
    }
    add(result);
    noteFinished(job);
    options.onJob?.(job, result);
  }

  const loop = createPollingLoop(runBatch, {
    pollMs,
    onError: (error) => dependencies.log.error({ err: error }, 'could not claim processing jobs'),
  });

  return {
    ...loop,
    wake(session) {
      const at = session === undefined ? undefined : finishedAt.get(sessionKey(session));
      const left = at === undefined ? 0 : at + coalesceMs - performance.now();
      loop.wake(left > 0 ? left : undefined);
    },
    stats() {
      return { ...totals };
    },
  };
}
