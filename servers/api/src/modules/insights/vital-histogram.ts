// Mergeable histograms of web vital values (servers/api/README.md, Insights: Rollups). The
// daily rollups keep one per vital for every group of page views, so a month's p75 is read from
// a few thousand histograms instead of sorting every page view again.
//
// A value falls in a bucket of relative width 2 % (values v with ⌊ln v / ln 1.02⌋ = i, as a
// DDSketch with α ≈ 1 %), split by its web.dev rating so no bucket straddles a threshold; each
// bucket keeps its count and the smallest and largest value in it. So:
// - counts and the shares of each rating are exact;
// - the p75 is exact when it is the smallest or largest value of its bucket (always so with a
//   few values per bucket), and otherwise the bucket's representative value clamped to the
//   bucket's smallest and largest value: within 1 % of the exact nearest-rank p75, and always
//   rated as the exact one.
import { rateVital, type VitalName } from './vitals.ts';

/** A bucket: how many values, the smallest, the largest. */
type HistogramBucket = [count: number, min: number, max: number];

/**
 * A histogram of one vital's values, by bucket key: the rating's letter (`g`, `n`, `p`) and the
 * bucket's index (`z` for values ≤ 0). Plain JSON: it is stored as `jsonb`.
 */
export type VitalHistogram = Record<string, HistogramBucket>;

const GAMMA = 1.02;
const LOG_GAMMA = Math.log(GAMMA);
const RATING_LETTER = { good: 'g', 'needs-improvement': 'n', poor: 'p' } as const;
const LETTER_ORDER: Readonly<Record<string, number>> = { g: 0, n: 1, p: 2 };

/** The bucket key of a value: its rating's letter and its index. */
function bucketKey(metric: VitalName, value: number): string {
  const letter = RATING_LETTER[rateVital(metric, value)];
  return value > 0 ? `${letter}${Math.floor(Math.log(value) / LOG_GAMMA)}` : `${letter}z`;
}

/** Where a bucket sorts among the buckets of a histogram: by rating, then by index. */
function bucketOrder(key: string): [number, number] {
  const index = key.slice(1);
  return [LETTER_ORDER[key[0] as string] ?? 0, index === 'z' ? Number.NEGATIVE_INFINITY : Number(index)];
}

/**
 * Adds one value (finite values only; others are left out, as `summarizeVital` does).
 *
 * @example
 * ```ts
 * const histogram: VitalHistogram = {};
 * addVitalValue(histogram, 'LCP', 2100);
 * ```
 */
export function addVitalValue(histogram: VitalHistogram, metric: VitalName, value: number): void {
  if (!Number.isFinite(value)) return;
  const key = bucketKey(metric, value);
  const bucket = histogram[key];
  if (bucket === undefined) histogram[key] = [1, value, value];
  else {
    bucket[0] += 1;
    if (value < bucket[1]) bucket[1] = value;
    if (value > bucket[2]) bucket[2] = value;
  }
}

/**
 * Adds every bucket of `from` into `into`: the histogram of both sets of values.
 *
 * @example
 * ```ts
 * const month: VitalHistogram = {};
 * for (const day of days) mergeVitalHistograms(month, day.lcp);
 * ```
 */
export function mergeVitalHistograms(into: VitalHistogram, from: Readonly<VitalHistogram>): void {
  for (const [key, [count, min, max]] of Object.entries(from)) {
    const bucket = into[key];
    if (bucket === undefined) into[key] = [count, min, max];
    else {
      bucket[0] += count;
      if (min < bucket[1]) bucket[1] = min;
      if (max > bucket[2]) bucket[2] = max;
    }
  }
}

/** A histogram's count, p75 and the counts of good and poor values. */
export interface HistogramSummary {
  count: number;
  /** The nearest-rank p75 (see the top of this file for its precision); null without values. */
  p75: number | null;
  good: number;
  poor: number;
}

/**
 * The count, the p75 and the good and poor counts of a histogram. The p75 is the value of
 * rank ⌈0.75 · n⌉: exact when it is its bucket's smallest or largest value, else within 1 %.
 *
 * @example
 * ```ts
 * const histogram: VitalHistogram = {};
 * for (const value of [1000, 2000, 3000, 5000]) addVitalValue(histogram, 'LCP', value);
 * summarizeHistogram(histogram); // { count: 4, p75: 3000, good: 2, poor: 1 }
 * ```
 */
export function summarizeHistogram(histogram: Readonly<VitalHistogram>): HistogramSummary {
  const buckets = Object.entries(histogram)
    .map(([key, bucket]) => [bucketOrder(key), key, bucket] as const)
    .sort(([a], [b]) => a[0] - b[0] || a[1] - b[1]);
  let count = 0;
  let good = 0;
  let poor = 0;
  for (const [, key, [n]] of buckets) {
    count += n;
    if (key[0] === 'g') good += n;
    else if (key[0] === 'p') poor += n;
  }
  if (count === 0) return { count: 0, p75: null, good: 0, poor: 0 };
  const rank = Math.ceil(0.75 * count);
  let before = 0;
  for (const [[, index], , [n, min, max]] of buckets) {
    if (before + n >= rank) {
      let p75: number;
      if (rank === before + n) p75 = max;
      else if (rank === before + 1) p75 = min;
      else {
        // The bucket [γ^i, γ^(i+1)) is represented by 2γ^(i+1)/(γ+1): no value in it is more
        // than (γ−1)/(γ+1) ≈ 0.99 % away (six significant digits add at most 0.0005 %).
        const represented = Number.isFinite(index)
          ? Number(((2 * GAMMA ** (index + 1)) / (GAMMA + 1)).toPrecision(6))
          : min;
        p75 = Math.min(max, Math.max(min, represented));
      }
      return { count, p75, good, poor };
    }
    before += n;
  }
  throw new Error('unreachable: the rank lies within the histogram');
}
