import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rateVital, summarizeVital } from './index.ts';

const metric = fc.constantFrom('LCP', 'INP', 'CLS', 'FCP', 'TTFB' as const);
const value = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 10_000 }));

/** The 75th percentile by its definition: the smallest value with at least 75% of values ≤ it. */
function bruteForceP75(values: readonly number[]): number | null {
  const candidates = values.filter(
    (candidate) => values.filter((other) => other <= candidate).length * 4 >= values.length * 3,
  );
  return candidates.length === 0 ? null : Math.min(...candidates);
}

describe('vitals, properties', () => {
  it('p75 matches the brute-force definition and is one of the values', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 60 }), metric, (values, name) => {
        const { p75 } = summarizeVital(values, name);
        expect(p75).toBe(bruteForceP75(values));
        if (p75 !== null) expect(values).toContain(p75);
      }),
    );
  });

  it('shares are each in 0..1, sum to 1 and agree with rateVital', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 60 }), metric, (values, name) => {
        const summary = summarizeVital(values, name);
        expect(summary.count).toBe(values.length);
        expect(summary.good + summary.needsImprovement + summary.poor).toBeCloseTo(1, 12);
        const good = values.filter((one) => rateVital(name, one) === 'good').length;
        expect(summary.good).toBe(good / values.length);
      }),
    );
  });

  it('a larger value never rates better', () => {
    const order = { good: 0, 'needs-improvement': 1, poor: 2 };
    fc.assert(
      fc.property(metric, value, value, (name, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(order[rateVital(name, low)]).toBeLessThanOrEqual(order[rateVital(name, high)]);
      }),
    );
  });

  it('does not depend on the order of the values', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), metric, (values, name) => {
        expect(summarizeVital([...values].reverse(), name)).toEqual(summarizeVital(values, name));
      }),
    );
  });
});
