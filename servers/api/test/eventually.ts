export interface EventuallyOptions {
  /** How long to keep trying before throwing. Default 20 s. */
  timeoutMs?: number;
  /** The pause between two checks. Default 100 ms. */
  intervalMs?: number;
}

/**
 * Polls `check` until it returns something other than `undefined` or `false`, and resolves with
 * that; throws once `timeoutMs` have passed without it.
 */
export async function eventually<Value>(
  check: () => Value | undefined | false | Promise<Value | undefined | false>,
  { timeoutMs = 20_000, intervalMs = 100 }: EventuallyOptions = {},
): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting (${timeoutMs} ms)`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
