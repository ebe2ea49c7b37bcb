/** The loop every background worker runs: claim a batch, run it, sleep when there was nothing. */
export interface PollingLoop {
  /** Starts polling in the background (idempotent). */
  start(): void;
  /**
   * Looks for due work now instead of at the next poll; with `inMs`, no later than that from now
   * (work known to be due then).
   */
  wake(inMs?: number): void;
  /** Runs batches until one finds nothing; resolves with how much ran. For tests, CLIs, benches. */
  runUntilIdle(): Promise<number>;
  /** Stops polling and waits for the batch in hand. */
  stop(): Promise<void>;
}

/**
 * What a batch did, when it knows more than how much it ran: whether to look again at once (by
 * default, when it ran anything), and when work may be due next (the loop sleeps no longer than
 * that, nor than `pollMs`).
 */
export interface BatchOutcome {
  ran: number;
  more?: boolean;
  nextInMs?: number;
}

/** How a batch is run: by the loop in the background, or by {@link PollingLoop.runUntilIdle}. */
export interface BatchContext {
  background: boolean;
}

/** Shortest sleep of an idle loop told that work is due (another worker may hold it a moment). */
const MIN_SLEEP_MS = 5;

/**
 * A polling loop around `runBatch` (which claims and runs due work and resolves with how much it
 * ran, or with a {@link BatchOutcome}). It runs batches back to back while there is work, then
 * sleeps `pollMs` (or until the work it was told of is due) or until {@link PollingLoop.wake}. A
 * batch that throws is reported to `onError` and the loop goes on.
 *
 * @example
 * ```ts
 * const loop = createPollingLoop(() => runDueJobs(), { pollMs: 1000, onError: (error) => log.error({ err: error }) });
 * loop.start();
 * ```
 */
export function createPollingLoop(
  runBatch: (context: BatchContext) => Promise<number | BatchOutcome>,
  options: { pollMs: number; onError: (error: unknown) => void },
): PollingLoop {
  let running = false;
  let loop: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  /** When to look again at the latest, from `wake(inMs)` while a batch ran (`performance.now()`). */
  let wakeAt: number | undefined;
  /** While sleeping: when the sleep ends. */
  let sleepUntil = 0;

  async function poll(): Promise<void> {
    while (running) {
      let outcome: BatchOutcome = { ran: 0 };
      try {
        const result = await runBatch({ background: true });
        outcome = typeof result === 'number' ? { ran: result } : result;
      } catch (error) {
        options.onError(error);
      }
      if ((outcome.more ?? outcome.ran > 0) || !running) continue;
      if (woken) {
        woken = false;
        continue;
      }
      let sleepMs =
        outcome.nextInMs === undefined
          ? options.pollMs
          : Math.min(options.pollMs, Math.max(MIN_SLEEP_MS, outcome.nextInMs));
      if (wakeAt !== undefined) sleepMs = Math.min(sleepMs, Math.max(0, wakeAt - performance.now()));
      wakeAt = undefined;
      sleepUntil = performance.now() + sleepMs;
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        timer = setTimeout(resolve, sleepMs);
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
    wake(inMs) {
      if (inMs === undefined || inMs <= 0) {
        woken = true;
        if (wakeUp !== undefined) {
          clearTimeout(timer);
          wakeUp();
        }
        return;
      }
      const at = performance.now() + inMs;
      if (wakeUp === undefined) {
        // A batch is running: the sleep after it ends by then.
        wakeAt = Math.min(wakeAt ?? at, at);
      } else if (at < sleepUntil) {
        // Sleeping longer than that: wake up then instead.
        clearTimeout(timer);
        sleepUntil = at;
        timer = setTimeout(wakeUp, inMs);
        timer.unref();
      }
    },
    async runUntilIdle() {
      let total = 0;
      for (;;) {
        const result = await runBatch({ background: false });
        const ran = typeof result === 'number' ? result : result.ran;
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
