import { describe, expect, it } from 'vitest';
import { isRegression, normalUpperTail, twoProportionTest } from './index.ts';

describe('normalUpperTail', () => {
  // P(Z > z) for the standard normal, from scipy.stats.norm.sf.
  it.each([
    [0, 0.5],
    [0.5, 0.3085375387259869],
    [1, 0.15865525393145707],
    [1.96, 0.024997895148220435],
    [2.326347874040841, 0.01],
    [3, 0.0013498980316300933],
    [5, 2.866515718791933e-7],
    [8, 6.22096057427174e-16],
    [-1, 0.8413447460685429],
    [-3, 0.9986501019683699],
  ])('P(Z > %s) = %s within a relative 1.2e-7', (z, expected) => {
    expect(Math.abs(normalUpperTail(z) - expected) / expected).toBeLessThan(1.2e-7);
  });
});

describe('twoProportionTest', () => {
  // z and the one-sided p computed with scipy from the pooled formula.
  it.each([
    [{ events: 100, total: 1000 }, { events: 130, total: 1000 }, 2.102740605622114, 0.017744225233237355],
    [{ events: 50, total: 1000 }, { events: 90, total: 1000 }, 3.505536546997458, 0.00022784396732269805],
    [{ events: 30, total: 200 }, { events: 45, total: 250 }, 0.8485281374238568, 0.19807195457603705],
  ])('%o against %o', (a, b, z, pOneSided) => {
    const result = twoProportionTest(a, b);
    expect(result.z).toBeCloseTo(z, 12);
    expect(Math.abs(result.pOneSided - pOneSided) / pOneSided).toBeLessThan(1.2e-7);
  });

  it('gives no evidence without variance', () => {
    expect(twoProportionTest({ events: 0, total: 0 }, { events: 0, total: 0 })).toEqual({
      z: 0,
      pOneSided: 0.5,
    });
    expect(twoProportionTest({ events: 0, total: 500 }, { events: 0, total: 800 })).toEqual({
      z: 0,
      pOneSided: 0.5,
    });
    expect(twoProportionTest({ events: 500, total: 500 }, { events: 800, total: 800 })).toEqual({
      z: 0,
      pOneSided: 0.5,
    });
  });
});

describe('isRegression', () => {
  it('is true when current is significantly worse', () => {
    expect(isRegression({ events: 50, total: 1000 }, { events: 90, total: 1000 })).toBe(true);
  });

  it('is false when current is not significantly worse at alpha', () => {
    expect(isRegression({ events: 100, total: 1000 }, { events: 130, total: 1000 })).toBe(false);
    expect(isRegression({ events: 100, total: 1000 }, { events: 130, total: 1000 }, { alpha: 0.05 })).toBe(
      true,
    );
    expect(isRegression({ events: 90, total: 1000 }, { events: 50, total: 1000 })).toBe(false);
  });

  it('is false below the minimum sample size on either side', () => {
    expect(isRegression({ events: 5, total: 99 }, { events: 900, total: 1000 })).toBe(false);
    expect(isRegression({ events: 5, total: 1000 }, { events: 90, total: 99 })).toBe(false);
    expect(isRegression({ events: 5, total: 1000 }, { events: 90, total: 100 })).toBe(true);
    expect(isRegression({ events: 5, total: 1000 }, { events: 90, total: 100 }, { minTotal: 101 })).toBe(
      false,
    );
  });
});
