// Web vitals of page views rated and summarized as web.dev does (servers/api/README.md, Insights).
import type { VitalEvent } from '@svc/protocol';

/** A web vital, named as the SDK sends it in a `vital` event's `name`. */
export type VitalName = VitalEvent['name'];

export type VitalRating = VitalEvent['rating'];

/**
 * Every web vital, in the order the API lists them.
 *
 * @example
 * ```ts
 * for (const name of VITAL_NAMES) console.log(name, rateVital(name, 0));
 * ```
 */
export const VITAL_NAMES: readonly VitalName[] = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'];

/**
 * web.dev's thresholds: [the most a good value may be, the most a needs-improvement value may
 * be], in milliseconds (CLS unitless). Sources: web.dev/articles/lcp, /inp, /cls, /fcp, /ttfb,
 * and the `web-vitals` library's `LCPThresholds`, `INPThresholds`, `CLSThresholds`,
 * `FCPThresholds`, `TTFBThresholds`.
 */
export const VITAL_THRESHOLDS: Readonly<
  Record<VitalName, readonly [good: number, needsImprovement: number]>
> = {
  LCP: [2500, 4000],
  INP: [200, 500],
  CLS: [0.1, 0.25],
  FCP: [1800, 3000],
  TTFB: [800, 1800],
};

/**
 * The web.dev rating of one value. Boundaries as web.dev words them ("an LCP of 2.5 seconds or
 * less" is good, "more than 4 seconds" is poor) and as the `web-vitals` library's `getRating`
 * (src/lib/bindReporter.ts) computes them: `value > poorAbove` is poor, else
 * `value > goodUpTo` is needs-improvement, else good. So a value equal to a bound takes the
 * better rating: LCP 2500 is good, LCP 4000 is needs-improvement.
 *
 * @example
 * ```ts
 * rateVital('LCP', 2500); // 'good'
 * rateVital('CLS', 0.26); // 'poor'
 * ```
 */
export function rateVital(metric: VitalName, value: number): VitalRating {
  const [goodUpTo, poorAbove] = VITAL_THRESHOLDS[metric];
  if (value > poorAbove) return 'poor';
  if (value > goodUpTo) return 'needs-improvement';
  return 'good';
}

/** A summary of one vital's values: how many, their p75, and each rating's share (0..1). */
interface VitalSummary {
  count: number;
  /** The 75th percentile by the nearest-rank method; `null` when there are no values. */
  p75: number | null;
  good: number;
  needsImprovement: number;
  poor: number;
}

/**
 * The count, p75 and the shares of good, needs-improvement and poor values of one vital.
 * Values that are not finite numbers are left out. p75 is the nearest-rank percentile: the
 * value at 1-based rank ⌈0.75 · n⌉ of the values sorted ascending, i.e. the smallest value
 * that at least 75% of the values are less than or equal to. It is always one of the values
 * (never interpolated). With no values, the count and shares are 0 and p75 is `null`.
 *
 * @example
 * ```ts
 * summarizeVital([1000, 2000, 3000, 5000], 'LCP');
 * // { count: 4, p75: 3000, good: 0.5, needsImprovement: 0.25, poor: 0.25 }
 * ```
 */
export function summarizeVital(values: readonly number[], metric: VitalName): VitalSummary {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  const count = sorted.length;
  if (count === 0) return { count: 0, p75: null, good: 0, needsImprovement: 0, poor: 0 };
  const counts = { good: 0, 'needs-improvement': 0, poor: 0 };
  for (const value of sorted) counts[rateVital(metric, value)] += 1;
  return {
    count,
    p75: sorted[Math.ceil(0.75 * count) - 1] as number,
    good: counts.good / count,
    needsImprovement: counts['needs-improvement'] / count,
    poor: counts.poor / count,
  };
}
