const noop = () => {};

/**
 * Wraps `task` (an fsync, a flush) so that each call is served by a run that starts after the
 * call: what the caller needs made durable happened before it called, so a run already under way
 * may have missed it. At most one run goes at a time and one waits; every call made meanwhile
 * shares the waiting one. `onIdle` is called when a run ends and none waits.
 *
 * @example
 * ```ts
 * const flush = coalesce(() => handle.sync());
 * await Promise.all([flush(), flush(), flush()]); // two fsyncs at most, not three
 * ```
 */
export function coalesce(task: () => Promise<void>, onIdle?: () => void): () => Promise<void> {
  let running: Promise<void> | undefined;
  let waiting: Promise<void> | undefined;

  const start = (): Promise<void> => {
    const run = task().finally(() => {
      if (running === run) running = undefined;
      if (running === undefined && waiting === undefined) onIdle?.();
    });
    running = run;
    return run;
  };

  return () => {
    if (waiting !== undefined) return waiting;
    if (running === undefined) return start();
    const waitingRun = running.then(noop, noop).then(() => {
      waiting = undefined;
      return start();
    });
    waiting = waitingRun;
    return waitingRun;
  };
}
