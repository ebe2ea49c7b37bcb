// A two-proportion test for regressions between releases (servers/api/README.md, Insights).

/** A count of sessions with an event (an error, a poor call) out of all sessions. */
interface Proportion {
  events: number;
  total: number;
}

/** The coefficients of Numerical Recipes' `erfcc` fit (below), constant term first. */
const ERFCC_COEFFICIENTS = [
  -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
  -0.82215223, 0.17087277,
] as const;

/**
 * The complementary error function, erfc(x) = 1 − erf(x), by the Chebyshev fit of Numerical
 * Recipes (Press et al., Numerical Recipes in C, 2nd ed., §6.2, `erfcc`): fractional error
 * below 1.2e-7 everywhere, so the tail probabilities stay accurate relative to their size.
 */
function complementaryErrorFunction(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  // Horner's rule over the polynomial in t.
  const polynomial = ERFCC_COEFFICIENTS.reduceRight((sum, coefficient) => coefficient + t * sum, 0);
  const value = t * Math.exp(-z * z + polynomial);
  return x >= 0 ? value : 2 - value;
}

/**
 * The standard normal upper tail, P(Z > z) = erfc(z / √2) / 2.
 *
 * @example
 * ```ts
 * normalUpperTail(1.96); // ≈ 0.025
 * ```
 */
export function normalUpperTail(z: number): number {
  return complementaryErrorFunction(z / Math.SQRT2) / 2;
}

/**
 * A pooled two-proportion z-test of whether `b`'s proportion (`events / total`) is greater than
 * `a`'s: z = (p_b − p_a) / √(p(1 − p)(1/n_a + 1/n_b)) with the pooled p = (e_a + e_b) / (n_a + n_b),
 * and `pOneSided` = P(Z > z). When the test has no variance (a total of 0, or both proportions
 * 0 or both 1) there is no evidence either way: z is 0 and `pOneSided` 0.5.
 *
 * @example
 * ```ts
 * twoProportionTest({ events: 100, total: 1000 }, { events: 130, total: 1000 }); // { z: ≈2.10, pOneSided: ≈0.018 }
 * ```
 */
export function twoProportionTest(a: Proportion, b: Proportion): { z: number; pOneSided: number } {
  const pooled = (a.events + b.events) / (a.total + b.total);
  const variance = pooled * (1 - pooled) * (1 / a.total + 1 / b.total);
  if (!(variance > 0) || !Number.isFinite(variance)) return { z: 0, pOneSided: 0.5 };
  const z = (b.events / b.total - a.events / a.total) / Math.sqrt(variance);
  return { z, pOneSided: normalUpperTail(z) };
}

/**
 * Whether `current` is significantly worse than `previous`: its proportion of events is greater,
 * by the one-sided pooled two-proportion z-test at level `alpha` (default 0.01). False when either
 * total is below `minTotal` (default 100): too few sessions to tell.
 *
 * @example
 * ```ts
 * isRegression({ events: 50, total: 1000 }, { events: 90, total: 1000 }); // true
 * isRegression({ events: 5, total: 50 }, { events: 40, total: 50 }); // false: fewer than 100 each
 * ```
 */
export function isRegression(
  previous: Proportion,
  current: Proportion,
  options: { minTotal?: number; alpha?: number } = {},
): boolean {
  const { minTotal = 100, alpha = 0.01 } = options;
  if (previous.total < minTotal || current.total < minTotal) return false;
  return twoProportionTest(previous, current).pOneSided < alpha;
}
