import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ANOMALY_METRICS,
  ANOMALY_RULES,
  type AnomalyMetric,
  type HourObservation,
  scoreHour,
} from './anomaly-score.ts';

// Invariants of the anomaly score, over arbitrary hours and baselines of each metric.

/** A value of the metric's scale: a share, a quality score, rage clicks per page view. */
const metricValue = (metric: AnomalyMetric) =>
  metric === 'median_call_quality'
    ? fc.double({ min: 0, max: 100, noNaN: true })
    : metric === 'rage_click_rate'
      ? fc.double({ min: 0, max: 3, noNaN: true })
      : fc.double({ min: 0, max: 1, noNaN: true });

const hourOf = (metric: AnomalyMetric) =>
  fc.record({ value: metricValue(metric), volume: fc.integer({ min: 0, max: 2000 }) });

const metricAndData = fc.constantFrom(...ANOMALY_METRICS).chain((metric) =>
  fc.record({
    metric: fc.constant(metric),
    hour: hourOf(metric),
    baseline: fc.array(hourOf(metric), { minLength: 0, maxLength: 8 }),
  }),
);

const isAnomaly = (metric: AnomalyMetric, hour: HourObservation, baseline: readonly HourObservation[]) =>
  scoreHour(metric, hour, baseline).status === 'anomaly';

describe('scoreHour (properties)', () => {
  it('never fires below the minimum volume, whatever the value', () => {
    fc.assert(
      fc.property(metricAndData, ({ metric, hour, baseline }) => {
        const quiet = { ...hour, volume: Math.min(hour.volume, ANOMALY_RULES[metric].minVolume - 1) };
        expect(scoreHour(metric, quiet, baseline).status).toBe('low_volume');
      }),
    );
  });

  it('does not depend on the order of the baseline weeks', () => {
    fc.assert(
      fc.property(metricAndData, ({ metric, hour, baseline }) => {
        expect(scoreHour(metric, hour, [...baseline].reverse())).toEqual(scoreHour(metric, hour, baseline));
      }),
    );
  });

  it('never fires for an hour at the baseline median, nor for a move in the good direction', () => {
    fc.assert(
      fc.property(metricAndData, ({ metric, hour, baseline }) => {
        const scored = scoreHour(metric, hour, baseline);
        if (scored.status !== 'normal' && scored.status !== 'anomaly') return;
        const atMedian = scoreHour(metric, { ...hour, value: scored.baseline.median }, baseline);
        expect(atMedian.status).toBe('normal');
        const good =
          ANOMALY_RULES[metric].bad === 'up'
            ? scored.value <= scored.baseline.median
            : scored.value >= scored.baseline.median;
        if (good) expect(scored.status).toBe('normal');
      }),
    );
  });

  it('is monotone: a worse value of a firing hour fires too, a better value of a normal hour stays normal', () => {
    fc.assert(
      fc.property(
        metricAndData,
        fc.double({ min: 0, max: 1, noNaN: true }),
        ({ metric, hour, baseline }, step) => {
          const worse = ANOMALY_RULES[metric].bad === 'up' ? hour.value + step : hour.value - step;
          const better = ANOMALY_RULES[metric].bad === 'up' ? hour.value - step : hour.value + step;
          if (isAnomaly(metric, hour, baseline))
            expect(isAnomaly(metric, { ...hour, value: worse }, baseline)).toBe(true);
          else expect(isAnomaly(metric, { ...hour, value: better }, baseline)).toBe(false);
        },
      ),
    );
  });

  it('scores call quality the same when every score moves by the same amount (no floor depends on the level)', () => {
    fc.assert(
      fc.property(
        hourOf('median_call_quality'),
        fc.array(hourOf('median_call_quality'), { maxLength: 8 }),
        fc.integer({ min: -50, max: 50 }),
        (hour, baseline, shift) => {
          const moved = (observation: HourObservation) => ({
            ...observation,
            value: (observation.value ?? 0) + shift,
          });
          const before = scoreHour('median_call_quality', hour, baseline);
          const after = scoreHour('median_call_quality', moved(hour), baseline.map(moved));
          expect(after.status).toBe(before.status);
          if ('score' in before && 'score' in after) expect(after.score).toBeCloseTo(before.score, 6);
        },
      ),
    );
  });
});
