import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { AiJobKind } from '../../platform/database/tables/ai-jobs.table.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import {
  type ClaimedAiJob,
  claimAiJobs,
  completeAiJob,
  failAiJob,
  hourStart,
  type JsonValue,
  scheduleAiJobs,
} from './jobs.ts';

/** What a handler is given besides its job. */
interface AiJobContext {
  database: Kysely<Database>;
  /** The worker's clock at the start of the attempt. */
  now: Date;
  log: FastifyBaseLogger;
}

/**
 * Runs one attempt of a job and resolves with its result (kept as the job's `result`); a throw
 * fails the attempt (retried with backoff, `failed` after the job's last attempt). A handler must
 * be safe to run again: an attempt whose worker died is run again when its lease ends.
 */
type AiJobHandler = (job: ClaimedAiJob, context: AiJobContext) => Promise<JsonValue>;

/** The handlers of a process, by job kind: the composition (services.ts) passes them in. */
export type AiJobHandlers = Partial<Record<AiJobKind, AiJobHandler>>;

/** The AI job worker of a process: its polling loop, and what it did. */
export interface AiJobWorker extends PollingLoop {
  /** Attempts that threw since the worker was made. */
  failures(): number;
}

/** How long an attempt holds its job: the explanations to come may take minutes of a model's time. */
const DEFAULT_LEASE_MS = 10 * 60 * 1000;
/** How often an idle worker looks for due jobs. */
const DEFAULT_POLL_MS = 30_000;
/** Jobs claimed per batch (run one after the other). */
const DEFAULT_BATCH_SIZE = 4;

/**
 * The worker of `ai_jobs` on the polling loop: each batch first runs the scheduler when the UTC
 * hour of its clock changed since its last tick (`scheduleAiJobs`: the hour's anomaly scans and
 * the day's and week's digests, once per dedupe key whichever process ticks), then claims due jobs
 * and runs each with the handler of its kind. An attempt that throws is released with backoff and
 * the job is `failed` after its last attempt; a job whose kind has no handler in this process
 * fails its attempts the same way (another process, of a newer version, may have the handler),
 * with the error naming the kind. `now` is the clock of the scheduler, the claims and the handlers
 * (tests pass theirs); `schedule: false` leaves scheduling to other processes.
 *
 * @example
 * ```ts
 * const worker = createAiJobWorker({ database, handlers: { digest: runDigestJob }, log });
 * worker.start();
 * ```
 */
export function createAiJobWorker(options: {
  database: Kysely<Database>;
  handlers: AiJobHandlers;
  log: FastifyBaseLogger;
  now?: () => Date;
  pollMs?: number;
  leaseMs?: number;
  batchSize?: number;
  schedule?: boolean;
}): AiJobWorker {
  const { database, handlers, log } = options;
  const clock = options.now ?? (() => new Date());
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  let scheduledHour: number | undefined;
  let failures = 0;

  async function runJob(job: ClaimedAiJob): Promise<void> {
    const now = clock();
    try {
      if (job.attempt > job.maxAttempts)
        throw new Error(
          `the worker of its last attempt stopped before it ended${job.lastError === null ? '' : ` (its last error: ${job.lastError})`}`,
        );
      const handler = handlers[job.kind];
      if (handler === undefined)
        throw new Error(`No handler for AI jobs of kind "${job.kind}" in this process`);
      const result = await handler(job, { database, now, log });
      if (!(await completeAiJob(database, job, result, clock())))
        log.warn({ jobId: job.id, kind: job.kind }, 'an AI job ran past its lease: another attempt holds it');
    } catch (error) {
      failures += 1;
      const outcome = await failAiJob(database, job, error, clock());
      log.error(
        { err: error, jobId: job.id, projectId: job.projectId, kind: job.kind, attempt: job.attempt },
        outcome === 'failed' ? 'an AI job failed for good' : 'an AI job failed; it will be retried',
      );
    }
  }

  const loop = createPollingLoop(
    async () => {
      const now = clock();
      const hour = hourStart(now).getTime();
      if (options.schedule !== false && scheduledHour !== hour) {
        const created = await scheduleAiJobs(database, now);
        scheduledHour = hour;
        if (created > 0) log.info({ created }, `scheduled ${created} AI job(s)`);
      }
      const jobs = await claimAiJobs(database, {
        now,
        leaseMs,
        limit: options.batchSize ?? DEFAULT_BATCH_SIZE,
      });
      for (const job of jobs) await runJob(job);
      // The scheduler's next tick is at the next hour of the clock.
      return { ran: jobs.length, nextInMs: hour + 3600 * 1000 - now.getTime() };
    },
    {
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
      onError: (error) => log.error({ err: error }, 'could not run AI jobs'),
    },
  );
  return { ...loop, failures: () => failures };
}
