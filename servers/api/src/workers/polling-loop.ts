/** The loop every background worker runs: claim a batch, run it, sleep when there was nothing. */
export interface PollingLoop {
  /** Starts polling in the background (idempotent). */
  start(): void;
  /** Looks for due work now instead of at the next poll. */
  wake(): void;
  /** Runs batches until one finds nothing; resolves with how much ran. For tests, CLIs, benches. */
  runUntilIdle(): Promise<number>;
  /** Stops polling and waits for the batch in hand. */
  stop(): Promise<void>;
}

/**
 * A polling loop around `runBatch` (which claims and runs due work and resolves with how much it
 * ran). It runs batches back to back while there is work, then sleeps `pollMs` or until
 * {@link PollingLoop.wake}. A batch that throws is reported to `onError` and the loop goes on.
 *
 * @example
 * ```ts
 * const loop = createPollingLoop(() => runDueJobs(), { pollMs: 1000, onError: (error) => log.error({ err: error }) });
 * loop.start();
 * ```
 */
export function createPollingLoop(
  runBatch: () => Promise<number>,
  options: { pollMs: number; onError: (error: unknown) => void },
): PollingLoop {
  let running = false;
  let loop: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  async function poll(): Promise<void> {
    while (running) {
      let ran = 0;
      try {
        ran = await runBatch();
      } catch (error) {
        options.onError(error);
      }
      if (ran > 0 || !running) continue;
      if (woken) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        timer = setTimeout(resolve, options.pollMs);
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
  };
}

/**
 * Runs `task` on every item, at most `concurrency` at once, in order of start.
 *
 * @example
 * ```ts
 * await runConcurrently(jobs, 4, (job) => runJob(job));
 * ```
 */
export async function runConcurrently<Item>(
  items: readonly Item[],
  concurrency: number,
  task: (item: Item) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next] as Item;
      next += 1;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, lane));
}
