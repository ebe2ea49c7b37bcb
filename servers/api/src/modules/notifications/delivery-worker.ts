import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
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
  /**
   * Deliveries in flight at most (claimed and sent at once). Default 16. A slot is refilled as
   * soon as its attempt ends, so a receiver that hangs for its whole timeout holds one slot, not
   * the others' deliveries.
   */
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
interface DeliveryWorkerStats {
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

  const pollMs = options.pollMs ?? 1_000;
  const inFlight = new Set<Promise<void>>();
  let started = 0;

  let lastClaim = 0;

  /** Resolves when an attempt in flight ends, or after `ms`. */
  async function settleOrWait(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      ...inFlight,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Claims as many due deliveries as there are free slots and starts them. Slots are refilled
   * once half are free, or 50 ms after the last claim (so a few receivers that hang do not hold
   * the rest back, and a busy worker still claims in batches). With none to start, waits for an
   * attempt in flight to end (or `pollMs`, to look for due ones again). Resolves with 0 only
   * when nothing is due and nothing is in flight.
   */
  async function runBatch(): Promise<number> {
    const free = batchSize - inFlight.size;
    if (free > 0 && (free * 2 >= batchSize || performance.now() - lastClaim >= 50)) {
      lastClaim = performance.now();
      const claimed = await claimDeliveries(dependencies.database, free, leaseMs, now());
      if (claimed.length > 0) {
        const loaded = await loadDeliveries(dependencies.database, claimed);
        started += claimed.length;
        for (const delivery of claimed) {
          const running: Promise<void> = runOne(delivery, loaded).finally(() => inFlight.delete(running));
          inFlight.add(running);
        }
        return claimed.length;
      }
      if (inFlight.size === 0) return 0;
      await settleOrWait(pollMs);
      return 1;
    }
    await settleOrWait(free > 0 ? 50 : pollMs);
    return 1;
  }

  const loop = createPollingLoop(runBatch, {
    pollMs,
    onError: (error) => dependencies.log.error({ err: error }, 'could not claim deliveries'),
  });
  return {
    ...loop,
    /** Runs until nothing is due and nothing is in flight; resolves with the attempts started. */
    async runUntilIdle() {
      const before = started;
      await loop.runUntilIdle();
      return started - before;
    },
    async stop() {
      await loop.stop();
      await Promise.allSettled(inFlight);
    },
    stats() {
      return { ...totals };
    },
  };
}
