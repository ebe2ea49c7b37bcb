import { describe, expect, it } from 'vitest';
import { coalesce } from './coalesce.ts';

describe('coalesce', () => {
  it('serves every call with a run that starts after it, sharing runs between waiting calls', async () => {
    const runs: Array<{ started: number; finish(): void }> = [];
    let clock = 0;
    const task = () =>
      new Promise<void>((resolve) => {
        runs.push({ started: clock, finish: resolve });
      });
    const run = coalesce(task);

    clock = 1;
    const first = run();
    clock = 2;
    const second = run();
    const third = run();
    expect(runs).toHaveLength(1);
    runs[0]?.finish();
    await first;
    // The waiting run starts once the first is done, after the second and third calls.
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toHaveLength(2);
    expect(runs[1]?.started).toBe(2);
    runs[1]?.finish();
    await Promise.all([second, third]);
    expect(runs).toHaveLength(2);

    // Idle again: the next call starts its own run at once.
    const fourth = run();
    expect(runs).toHaveLength(3);
    runs[2]?.finish();
    await fourth;
  });

  it('never runs twice at once, and reports when idle', async () => {
    let active = 0;
    let most = 0;
    let idle = 0;
    const run = coalesce(
      async () => {
        active += 1;
        most = Math.max(most, active);
        await new Promise((resolve) => setTimeout(resolve, 2));
        active -= 1;
      },
      () => {
        idle += 1;
      },
    );
    const calls: Promise<void>[] = [];
    for (let index = 0; index < 30; index += 1) {
      calls.push(run());
      if (index % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(calls);
    expect(most).toBe(1);
    expect(idle).toBeGreaterThanOrEqual(1);
    expect(active).toBe(0);
  });

  it('a failed run fails its callers only; the next call runs again', async () => {
    let calls = 0;
    const run = coalesce(async () => {
      calls += 1;
      if (calls === 1) throw new Error('disk gone');
    });
    await expect(run()).rejects.toThrow('disk gone');
    await run();
    expect(calls).toBe(2);
  });
});
