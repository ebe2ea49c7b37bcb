// The scoring of anomalies (servers/api/README.md, AI jobs, anomalies and digests): an hour's rate
// against the same hour of the week in the weeks before it, by a robust z-score (median and
// median absolute deviation), in the direction that is bad, with minimum volumes. Pure: the
// scan (anomalies.ts) reads the numbers and records what fires.

/** The hourly metrics an anomaly scan scores. */
export const ANOMALY_METRICS = [
  'error_rate',
  'connect_failure_rate',
  'median_call_quality',
  'rage_click_rate',
] as const;
export type AnomalyMetric = (typeof ANOMALY_METRICS)[number];

/** How a metric is judged. */
export interface AnomalyRule {
  /** The bad direction: a higher error rate, a lower call quality. */
  bad: 'up' | 'down';
  /** What `volume` counts, for people. */
  unit: string;
  /** The volume an hour needs to be scored, and each baseline hour to count. */
  minVolume: number;
  /** The smallest change from the baseline's median, in the bad direction, that may fire. */
  minChange: number;
  /** The smallest dispersion the score divides by, when the baseline barely moved. */
  madFloor: number;
  /**
   * The hour's own sampling noise, which floors the dispersion too: a share of `volume`
   * (binomial: √(m(1 − m)/n)), a count per unit of `volume` (Poisson: √(m/n)), or none.
   */
  noise: 'share' | 'count' | 'none';
}

/**
 * The rules of each metric:
 *
 * - `error_rate`: sessions started in the hour with an error, of the sessions started in it
 *   (at least 30); fires up from 5 points above the baseline.
 * - `connect_failure_rate`: calls started in the hour that never connected, of its calls (at
 *   least 10); fires up from 10 points above.
 * - `median_call_quality`: the median `quality_score` of the hour's scored calls (at least 10);
 *   fires down from 10 points (of 100) below.
 * - `rage_click_rate`: rage clicks per page view of the page views started in the hour (at least
 *   50); fires up from 0.05 above.
 */
export const ANOMALY_RULES: Readonly<Record<AnomalyMetric, AnomalyRule>> = {
  error_rate: { bad: 'up', unit: 'sessions', minVolume: 30, minChange: 0.05, madFloor: 0.01, noise: 'share' },
  connect_failure_rate: {
    bad: 'up',
    unit: 'calls',
    minVolume: 10,
    minChange: 0.1,
    madFloor: 0.02,
    noise: 'share',
  },
  median_call_quality: {
    bad: 'down',
    unit: 'scored calls',
    minVolume: 10,
    minChange: 10,
    madFloor: 2,
    noise: 'none',
  },
  rage_click_rate: {
    bad: 'up',
    unit: 'page views',
    minVolume: 50,
    minChange: 0.05,
    madFloor: 0.01,
    noise: 'count',
  },
};

/** The robust z-score an hour needs, in the bad direction, to be an anomaly. */
export const ANOMALY_THRESHOLD = 3.5;
/** A score this far in the bad direction makes a `high` anomaly (else `medium`). */
export const HIGH_SEVERITY_SCORE = 7;
/** How many weeks before the hour the baseline looks at (the same hour of the week in each). */
export const BASELINE_WEEKS = 8;
/** How many of those weeks need the metric's minimum volume for the hour to be scored. */
const MIN_BASELINE_WEEKS = 4;
/** The constant that makes the MAD of normal data estimate its standard deviation (Φ⁻¹(0.75)). */
const MAD_CONSTANT = 0.6745;

/** One hour of a metric: its value (null when nothing measured it) and its volume. */
export interface HourObservation {
  value: number | null;
  volume: number;
}

/** The baseline an hour was scored against. */
interface Baseline {
  median: number;
  /** The median absolute deviation of the baseline's values (before any floor). */
  mad: number;
  /** The weeks that counted (with the metric's minimum volume). */
  weeks: number;
}

/** How an hour of a metric scored. */
export type HourScore =
  | { metric: AnomalyMetric; status: 'low_volume'; value: number | null; volume: number }
  | {
      metric: AnomalyMetric;
      status: 'short_baseline';
      value: number;
      volume: number;
      baselineWeeks: number;
    }
  | {
      metric: AnomalyMetric;
      status: 'normal' | 'anomaly';
      value: number;
      volume: number;
      baseline: Baseline;
      /** The dispersion the score divided by: the MAD, floored. */
      dispersion: number;
      /** The robust z-score, 0.6745 (value − median) / dispersion: negative when the value fell. */
      score: number;
      /** Where the value moved from the median. */
      direction: 'up' | 'down';
    };

/** An hour that was scored (it had the volume and the baseline). */
export type ScoredHour = Extract<HourScore, { baseline: Baseline }>;

/**
 * The median of some numbers (the mean of the middle two for an even count); NaN for none.
 *
 * @example
 * ```ts
 * median([3, 1, 2, 10]); // 2.5
 * ```
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The median absolute deviation of some numbers from their median.
 *
 * @example
 * ```ts
 * medianAbsoluteDeviation([1, 2, 3, 4, 100]); // 1
 * ```
 */
export function medianAbsoluteDeviation(values: readonly number[]): number {
  const center = median(values);
  return median(values.map((value) => Math.abs(value - center)));
}

/**
 * The dispersion an hour's score divides by: the baseline's MAD, floored by the metric's
 * `madFloor` and by the sampling noise of an hour of `volume` around the median (scaled as a MAD:
 * 0.6745 σ), so that a small hour's chance swing is not an anomaly.
 */
function dispersionOf(rule: AnomalyRule, baseline: Baseline, volume: number): number {
  const smallest = 1 / Math.max(1, volume);
  let noise = 0;
  if (rule.noise === 'share') {
    const share = Math.min(1 - smallest, Math.max(smallest, baseline.median));
    noise = MAD_CONSTANT * Math.sqrt((share * (1 - share)) / volume);
  } else if (rule.noise === 'count') {
    noise = MAD_CONSTANT * Math.sqrt(Math.max(smallest, baseline.median) / volume);
  }
  return Math.max(baseline.mad, rule.madFloor, noise);
}

/**
 * Scores one hour of `metric` against the same hour of the weeks before it (`baseline`, any
 * order): `low_volume` when the hour has less than the metric's minimum volume, `short_baseline`
 * when fewer than {@link MIN_BASELINE_WEEKS} baseline hours have it, else the robust z-score
 * 0.6745 (x − median) / max(MAD, floor, noise) and `anomaly` when it reaches
 * {@link ANOMALY_THRESHOLD} in the metric's bad direction with a change of at least its
 * `minChange`, `normal` otherwise.
 *
 * @example
 * ```ts
 * const week = (value: number) => ({ value, volume: 40 });
 * scoreHour('error_rate', { value: 0.4, volume: 40 }, [week(0.05), week(0.075), week(0.05), week(0.025), week(0.05)]);
 * // { status: 'anomaly', score: 10.16…, direction: 'up', … }
 * ```
 */
export function scoreHour(
  metric: AnomalyMetric,
  hour: HourObservation,
  baseline: readonly HourObservation[],
): HourScore {
  const rule = ANOMALY_RULES[metric];
  if (hour.value === null || hour.volume < rule.minVolume)
    return { metric, status: 'low_volume', value: hour.value, volume: hour.volume };
  const values = baseline
    .filter((week) => week.value !== null && week.volume >= rule.minVolume)
    .map((week) => week.value as number);
  if (values.length < MIN_BASELINE_WEEKS)
    return {
      metric,
      status: 'short_baseline',
      value: hour.value,
      volume: hour.volume,
      baselineWeeks: values.length,
    };
  const center = median(values);
  const fitted: Baseline = { median: center, mad: medianAbsoluteDeviation(values), weeks: values.length };
  const dispersion = dispersionOf(rule, fitted, hour.volume);
  const score = (MAD_CONSTANT * (hour.value - center)) / dispersion;
  const sign = rule.bad === 'up' ? 1 : -1;
  const anomalous = sign * score >= ANOMALY_THRESHOLD && sign * (hour.value - center) >= rule.minChange;
  return {
    metric,
    status: anomalous ? 'anomaly' : 'normal',
    value: hour.value,
    volume: hour.volume,
    baseline: fitted,
    dispersion,
    score,
    direction: hour.value >= center ? 'up' : 'down',
  };
}
