import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createGovernor, GOVERNOR_LEVELS, type GovernorMeasure, governorPolicy } from './governor.ts';

const KB = 1024;
const MB = 1024 * KB;
const at = (now: number, backlogBytes = 0, failures = 0, heapBytes?: number): GovernorMeasure => ({
  now,
  backlogBytes,
  failures,
  ...(heapBytes === undefined ? {} : { heapBytes }),
});

describe('the governor', () => {
  it('goes up at once to the level the worst measure reaches', () => {
    const governor = createGovernor();
    expect(governor.observe(at(0, 100 * KB))).toBeUndefined();
    expect(governor.observe(at(1, 300 * KB))).toBe('constrained');
    expect(governor.observe(at(2, 0, 4))).toBe('degraded');
    expect(governor.observe(at(3, 0, 0, 2_000 * MB))).toBe('survival');
  });

  it('comes down one level per 30 s of calm below half the thresholds, and never flaps at one', () => {
    const governor = createGovernor();
    governor.observe(at(0, 2 * MB)); // degraded
    // Hovering just under the degraded threshold (over half of it): stays degraded.
    for (let now = 1_000; now <= 120_000; now += 1_000)
      expect(governor.observe(at(now, 1 * MB - 1))).toBeUndefined();
    expect(governor.level()).toBe('degraded');
    // Calm: below half of every threshold.
    expect(governor.observe(at(121_000, 100 * KB))).toBeUndefined();
    expect(governor.observe(at(150_999, 100 * KB))).toBeUndefined();
    expect(governor.observe(at(151_000, 100 * KB))).toBe('constrained');
    expect(governor.observe(at(181_000, 100 * KB))).toBe('healthy');
    // A measure in between restarts the calm period.
    governor.observe(at(200_000, 300 * KB)); // constrained
    governor.observe(at(210_000, 0));
    governor.observe(at(225_000, 200 * KB)); // over half of 256 KB: not calm
    expect(governor.observe(at(241_000, 0))).toBeUndefined();
    expect(governor.observe(at(271_000, 0))).toBe('healthy');
  });

  it('maps each level to the PROTOCOL.md cadence', () => {
    expect(GOVERNOR_LEVELS.map((level) => governorPolicy(level).sampleIntervalSec)).toEqual([
      5,
      15,
      30,
      null,
    ]);
    expect(governorPolicy('degraded').thresholdCrossingsOnly).toBe(true);
    expect(governorPolicy('survival')).toMatchObject({ lifecycleEventsOnly: true, recording: 'paused' });
  });

  it('is monotone: a worse measure never gives a lower level (property)', () => {
    const measure = fc.record({
      backlogBytes: fc.integer({ min: 0, max: 8 * MB }),
      failures: fc.integer({ min: 0, max: 20 }),
      heapBytes: fc.integer({ min: 0, max: 2_000 * MB }),
    });
    fc.assert(
      fc.property(fc.array(measure, { maxLength: 20 }), measure, measure, (history, a, b) => {
        const worse = {
          backlogBytes: Math.max(a.backlogBytes, b.backlogBytes),
          failures: Math.max(a.failures, b.failures),
          heapBytes: Math.max(a.heapBytes, b.heapBytes),
        };
        const run = (last: typeof a) => {
          const governor = createGovernor();
          for (const [index, entry] of history.entries()) governor.observe({ ...entry, now: index * 1_000 });
          governor.observe({ ...last, now: history.length * 1_000 });
          return GOVERNOR_LEVELS.indexOf(governor.level());
        };
        expect(run(worse)).toBeGreaterThanOrEqual(run(a));
      }),
    );
  });
});
