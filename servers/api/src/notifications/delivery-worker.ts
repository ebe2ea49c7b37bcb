import { createPollingLoop, type PollingLoop, runConcurrently } from '../workers/polling-loop.ts';
import {
  type AttemptRecord,
  attemptResult,
  type ClaimedDelivery,
  claimDeliveries,
  DELIVERY_TIMEOUT_MS,
  type DeliveryDependencies,
  loadDeliveries,
  recordAttempts,
  sendDelivery,
} from './deliveries.ts';

export interface DeliveryWorkerOptions {
  /** How often an idle worker looks for due deliveries (ms). Default 1000. */
  pollMs?: number;
  /** Deliveries claimed at once, and sent at once. Default 16. */
  batchSize?: number;
  /** How long a claimed delivery stays with this worker (ms). Default 30 s: three timeouts. */
  leaseMs?: number;
  /** A receiver's time to answer (ms). Default 10 s (PROTOCOL.md §6). */
  timeoutMs?: number;
  /**
   * The clock that schedules attempts (due times, retry delays, the rotation overlap). Tests
   * inject one to walk through the 24 h schedule; signatures always use the wall clock.
   */
  now?: () => number;
  /** Jitter source (tests pin it). Default Math.random. */
  random?: () => number;
}

/** Totals since the worker was created. */
export interface DeliveryWorkerStats {
  attempts: number;
  delivered: number;
  failedAttempts: number;
  failedForGood: number;
}

/** The in-process worker of webhook deliveries. */
export interface DeliveryWorker extends PollingLoop {
  stats(): DeliveryWorkerStats;
}

/**
 * A worker that claims due deliveries and makes one attempt of each, all of a batch at once
 * (they wait on receivers, not on this process). Any number of workers, in this process or
 * others on one PostgreSQL, can run at once.
 *
 * @example
 * ```ts
 * const worker = createDeliveryWorker({ database, masterKey, policy, log });
 * worker.start();
 * ```
 */
export function createDeliveryWorker(
  dependencies: DeliveryDependencies,
  options: DeliveryWorkerOptions = {},
): DeliveryWorker {
  const batchSize = options.batchSize ?? 16;
  const leaseMs = options.leaseMs ?? 30_000;
  const now = options.now ?? Date.now;
  const attemptOptions = {
    now,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    ...(options.random === undefined ? {} : { random: options.random }),
  };
  const totals: DeliveryWorkerStats = { attempts: 0, delivered: 0, failedAttempts: 0, failedForGood: 0 };

  const count = (record: AttemptRecord) => {
    const result = attemptResult(record);
    totals.attempts += 1;
    if (result.status === 'delivered') totals.delivered += 1;
    else totals.failedAttempts += 1;
    if (result.status === 'failed') totals.failedForGood += 1;
    if (result.outcome !== 'delivered') {
      dependencies.log.warn(
        {
          deliveryId: record.delivery.id,
          eventId: record.delivery.eventId,
          channelId: record.delivery.channelId,
          attempt: record.delivery.attempt,
          outcome: result.outcome,
          statusCode: result.statusCode,
          error: result.error,
          ...(result.nextAttemptAt === undefined
            ? {}
            : { nextAttemptAt: new Date(result.nextAttemptAt).toISOString() }),
        },
        result.status === 'failed'
          ? 'webhook delivery failed for good'
          : 'webhook attempt failed; it will be retried',
      );
    }
  };

  // Attempts finish at different times: each is recorded with whatever else finished while the
  // previous group was being written (one transaction per group, like ingest's group commit).
  let pending: Array<{ record: AttemptRecord; done: (error?: unknown) => void }> = [];
  let flushing = false;
  async function flush(): Promise<void> {
    while (pending.length > 0) {
      const group = pending;
      pending = [];
      try {
        await recordAttempts(
          dependencies.database,
          group.map((entry) => entry.record),
        );
        for (const entry of group) entry.done();
      } catch (error) {
        for (const entry of group) entry.done(error);
      }
    }
    flushing = false;
  }
  const record = (attempt: AttemptRecord) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ record: attempt, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!flushing) {
        flushing = true;
        void flush();
      }
    });

  async function runOne(delivery: ClaimedDelivery, loaded: Awaited<ReturnType<typeof loadDeliveries>>) {
    try {
      const attempt = await sendDelivery(dependencies, delivery, loaded.get(delivery.id), attemptOptions);
      await record(attempt);
      count(attempt);
    } catch (error) {
      // The attempt could not be recorded: the lease runs out and a worker tries again.
      dependencies.log.error(
        { err: error, deliveryId: delivery.id },
        'webhook attempt could not be recorded',
      );
    }
  }

  async function runBatch(): Promise<number> {
    const claimed = await claimDeliveries(dependencies.database, batchSize, leaseMs, now());
    if (claimed.length === 0) return 0;
    const loaded = await loadDeliveries(dependencies.database, claimed);
    await runConcurrently(claimed, batchSize, (delivery) => runOne(delivery, loaded));
    return claimed.length;
  }

  const loop = createPollingLoop(runBatch, {
    pollMs: options.pollMs ?? 1_000,
    onError: (error) => dependencies.log.error({ err: error }, 'could not claim deliveries'),
  });
  return {
    ...loop,
    stats() {
      return { ...totals };
    },
  };
}
