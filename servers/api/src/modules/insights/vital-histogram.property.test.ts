import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addVitalValue,
  mergeVitalHistograms,
  summarizeHistogram,
  type VitalHistogram,
} from './vital-histogram.ts';
import { rateVital, summarizeVital, type VitalName } from './vitals.ts';

const metric = fc.constantFrom<VitalName>('LCP', 'INP', 'CLS', 'FCP', 'TTFB');
/** Values as the SDK reports them: ms with decimals, CLS fractions, zeros, and the thresholds themselves. */
const value = fc.oneof(
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.double({ min: 0, max: 60_000, noNaN: true }),
  fc.integer({ min: 0, max: 10_000 }),
  fc.constantFrom(0, 0.1, 0.25, 200, 500, 800, 1800, 2500, 3000, 4000),
);

function histogramOf(name: VitalName, values: readonly number[]): VitalHistogram {
  const histogram: VitalHistogram = {};
  for (const one of values) addVitalValue(histogram, name, one);
  return histogram;
}

describe('vital histograms, properties', () => {
  it('count and ratings are exact; p75 is within 1 % of the exact one and rated the same', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 300 }), metric, (values, name) => {
        const exact = summarizeVital(values, name);
        const summary = summarizeHistogram(histogramOf(name, values));
        expect(summary.count).toBe(exact.count);
        expect(summary.good).toBe(values.filter((one) => rateVital(name, one) === 'good').length);
        expect(summary.poor).toBe(values.filter((one) => rateVital(name, one) === 'poor').length);
        if (exact.p75 === null) expect(summary.p75).toBeNull();
        else {
          const p75 = summary.p75 as number;
          expect(Math.abs(p75 - exact.p75)).toBeLessThanOrEqual(exact.p75 * 0.01);
          expect(rateVital(name, p75)).toBe(rateVital(name, exact.p75));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is exact when values are at least 5 % apart (one a bucket)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 100_000 }), { maxLength: 50 }),
        metric,
        (raw, name) => {
          // Values at least 5 % apart never share a bucket.
          const values = [...new Set(raw.map((one) => Math.round(1.05 ** (one / 1000) * 100) / 100))];
          const spread = values
            .sort((a, b) => a - b)
            .filter((one, i, all) => i === 0 || one > (all[i - 1] as number) * 1.05);
          expect(summarizeHistogram(histogramOf(name, spread)).p75).toBe(summarizeVital(spread, name).p75);
        },
      ),
    );
  });

  it('merging the histograms of any split equals the histogram of all values', () => {
    fc.assert(
      fc.property(fc.array(fc.array(value, { maxLength: 40 }), { maxLength: 8 }), metric, (parts, name) => {
        const merged: VitalHistogram = {};
        for (const part of parts) mergeVitalHistograms(merged, histogramOf(name, part));
        expect(merged).toEqual(histogramOf(name, parts.flat()));
      }),
    );
  });

  it('survives JSON, as stored in jsonb', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 100 }), metric, (values, name) => {
        const histogram = histogramOf(name, values);
        expect(summarizeHistogram(JSON.parse(JSON.stringify(histogram)))).toEqual(
          summarizeHistogram(histogram),
        );
      }),
    );
  });
});
