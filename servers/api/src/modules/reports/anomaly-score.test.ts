import { describe, expect, it } from 'vitest';
import {
  ANOMALY_THRESHOLD,
  type HourObservation,
  median,
  medianAbsoluteDeviation,
  scoreHour,
} from './anomaly-score.ts';

const weeks = (values: readonly number[], volume: number): HourObservation[] =>
  values.map((value) => ({ value, volume }));

describe('median and medianAbsoluteDeviation', () => {
  it('are the middle value (the mean of the middle two) and the median distance from it', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([3, 1, 2, 10])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(medianAbsoluteDeviation([1, 2, 3, 4, 100])).toBe(1);
    expect(medianAbsoluteDeviation([5, 5, 5, 5])).toBe(0);
  });
});

describe('scoreHour', () => {
  it('fires on an error rate far above the same hour of the weeks before', () => {
    const scored = scoreHour(
      'error_rate',
      { value: 0.4, volume: 40 },
      weeks([0.05, 0.075, 0.05, 0.025, 0.05], 40),
    );
    expect(scored).toMatchObject({
      status: 'anomaly',
      direction: 'up',
      baseline: { median: 0.05, mad: 0, weeks: 5 },
    });
    if (scored.status !== 'anomaly') throw new Error('not scored');
    // MAD 0: the hour's binomial noise at the median floors it, 0.6745 √(0.05 · 0.95 / 40).
    const dispersion = 0.6745 * Math.sqrt((0.05 * 0.95) / 40);
    expect(scored.dispersion).toBeCloseTo(dispersion, 12);
    expect(scored.score).toBeCloseTo((0.6745 * 0.35) / dispersion, 12);
  });

  it('keeps a usual hour normal, and a better one (fewer errors) too', () => {
    const baseline = weeks([0.05, 0.075, 0.05, 0.025, 0.05, 0.1], 40);
    expect(scoreHour('error_rate', { value: 0.075, volume: 40 }, baseline).status).toBe('normal');
    const better = scoreHour('error_rate', { value: 0, volume: 40 }, baseline);
    expect(better).toMatchObject({ status: 'normal', direction: 'down' });
  });

  it('judges call quality downwards: a drop fires, a rise does not', () => {
    const baseline = weeks([80, 82, 79, 81, 80], 20);
    const drop = scoreHour('median_call_quality', { value: 60, volume: 20 }, baseline);
    expect(drop).toMatchObject({ status: 'anomaly', direction: 'down' });
    if (drop.status !== 'anomaly') throw new Error('not scored');
    // MAD 1 is below the floor of 2 points: 0.6745 · (60 − 80) / 2.
    expect(drop.score).toBeCloseTo((0.6745 * -20) / 2, 12);
    expect(scoreHour('median_call_quality', { value: 99, volume: 20 }, baseline).status).toBe('normal');
  });

  it('needs the minimum change besides the score: a steady baseline does not make a small move an anomaly', () => {
    // Connect failures at 0 every week; one call of 30 failing is 3.3 points, under the 10-point minimum.
    const scored = scoreHour(
      'connect_failure_rate',
      { value: 1 / 30, volume: 30 },
      weeks([0, 0, 0, 0, 0], 30),
    );
    expect(scored.status).toBe('normal');
    if (scored.status !== 'normal') throw new Error('not scored');
    expect(scored.score).toBeLessThan(ANOMALY_THRESHOLD);
  });

  it('scores nothing for a quiet hour or a short baseline', () => {
    // One error in two sessions: 50%, but two sessions are no evidence.
    expect(scoreHour('error_rate', { value: 0.5, volume: 2 }, weeks([0, 0, 0, 0, 0], 2))).toEqual({
      metric: 'error_rate',
      status: 'low_volume',
      value: 0.5,
      volume: 2,
    });
    expect(scoreHour('median_call_quality', { value: null, volume: 0 }, [])).toMatchObject({
      status: 'low_volume',
    });
    // Busy now, but only three weeks of the baseline had the volume.
    const baseline = [...weeks([0.05, 0.05, 0.05], 40), ...weeks([0.5, 0.5], 5)];
    expect(scoreHour('error_rate', { value: 0.5, volume: 40 }, baseline)).toEqual({
      metric: 'error_rate',
      status: 'short_baseline',
      value: 0.5,
      volume: 40,
      baselineWeeks: 3,
    });
  });

  it('is seasonal: a busy hour is compared with the same busy hour, not with the quiet night before', () => {
    // Quality is lower at busy hours (74) than at night (86): a busy hour of 73 is normal against
    // its own hour of the week, and would be an anomaly against the night's hours.
    const busy = { value: 73, volume: 16 };
    expect(scoreHour('median_call_quality', busy, weeks([74, 75, 73, 74, 76], 16)).status).toBe('normal');
    expect(scoreHour('median_call_quality', busy, weeks([86, 85, 87, 86, 86], 16)).status).toBe('anomaly');
  });
});
