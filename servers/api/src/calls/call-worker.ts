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
   * which is harmless (processing is deterministic and its writes are upserts).
   */
  leaseMs?: number;
}

/** Totals since the worker was created. */
export interface CallWorkerStats {
  jobs: number;
  failures: number;
  chunksRead: number;
  itemsAdded: number;
  trackSamples: number;
}

/** The in-process worker of call processing jobs. */
export interface CallWorker {
  /** Starts polling in the background (idempotent). */
  start(): void;
  /** Looks for due jobs now instead of at the next poll (ingest calls it after a call chunk). */
  wake(): void;
  /** Runs due jobs until none is due; resolves with how many ran. For tests, the CLI and benches. */
  runUntilIdle(): Promise<number>;
  /** Stops polling and waits for the job in hand. */
  stop(): Promise<void>;
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
  const totals: CallWorkerStats = { jobs: 0, failures: 0, chunksRead: 0, itemsAdded: 0, trackSamples: 0 };
  let running = false;
  let loop: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const add = (result: CallProcessingResult) => {
    totals.jobs += 1;
    totals.chunksRead += result.chunksRead;
    totals.itemsAdded += result.itemsAdded;
    totals.trackSamples += result.trackSamples;
  };

  /** One claim and its jobs: how many jobs ran. */
  async function runBatch(): Promise<number> {
    const jobs = await claimCallJobs(dependencies.database, batchSize, leaseMs);
    let next = 0;
    const lane = async () => {
      while (next < jobs.length) {
        const job = jobs[next];
        next += 1;
        if (job !== undefined) await runJob(job);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, lane));
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

  async function poll(): Promise<void> {
    while (running) {
      let ran = 0;
      try {
        ran = await runBatch();
      } catch (error) {
        dependencies.log.error({ err: error }, 'could not claim call jobs');
      }
      if (ran > 0 || !running) continue;
      if (woken) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        timer = setTimeout(resolve, pollMs);
        timer.unref();
      });
      wakeUp = undefined;
      woken = false;
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = poll();
    },
    wake() {
      woken = true;
      if (wakeUp !== undefined) {
        clearTimeout(timer);
        wakeUp();
      }
    },
    async runUntilIdle() {
      let total = 0;
      for (;;) {
        const ran = await runBatch();
        if (ran === 0) return total;
        total += ran;
      }
    },
    async stop() {
      running = false;
      if (wakeUp !== undefined) {
        clearTimeout(timer);
        wakeUp();
      }
      await loop;
    },
    stats() {
      return { ...totals };
    },
  };
}
