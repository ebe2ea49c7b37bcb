import { describe, expect, it } from 'vitest';
import { rateVital, summarizeVital } from './index.ts';

describe('rateVital', () => {
  it.each([
    ['LCP', 2500, 4000],
    ['INP', 200, 500],
    ['CLS', 0.1, 0.25],
    ['FCP', 1800, 3000],
    ['TTFB', 800, 1800],
  ] as const)('%s: good up to %s inclusive, poor above %s', (metric, goodUpTo, poorAbove) => {
    expect(rateVital(metric, 0)).toBe('good');
    expect(rateVital(metric, goodUpTo)).toBe('good');
    expect(rateVital(metric, goodUpTo * 1.001)).toBe('needs-improvement');
    expect(rateVital(metric, poorAbove)).toBe('needs-improvement');
    expect(rateVital(metric, poorAbove * 1.001)).toBe('poor');
  });

  it('rates CLS on its own scale', () => {
    expect(rateVital('CLS', 0.05)).toBe('good');
    expect(rateVital('CLS', 0.2)).toBe('needs-improvement');
    expect(rateVital('CLS', 1)).toBe('poor');
  });
});

describe('summarizeVital', () => {
  it('counts, takes the nearest-rank p75 and the share of each rating', () => {
    expect(summarizeVital([5000, 1000, 3000, 2000], 'LCP')).toEqual({
      count: 4,
      p75: 3000,
      good: 0.5,
      needsImprovement: 0.25,
      poor: 0.25,
    });
  });

  it('takes the value at rank ⌈0.75 n⌉', () => {
    expect(summarizeVital([7], 'INP').p75).toBe(7);
    expect(summarizeVital([1, 2], 'INP').p75).toBe(2);
    expect(summarizeVital([1, 2, 3], 'INP').p75).toBe(3);
    expect(summarizeVital([1, 2, 3, 4, 5], 'INP').p75).toBe(4);
    expect(summarizeVital([10, 20, 30, 40, 50, 60, 70, 80], 'INP').p75).toBe(60);
  });

  it('summarizes no values as empty', () => {
    expect(summarizeVital([], 'CLS')).toEqual({ count: 0, p75: null, good: 0, needsImprovement: 0, poor: 0 });
  });

  it('leaves out values that are not finite numbers', () => {
    expect(summarizeVital([Number.NaN, 100, Number.POSITIVE_INFINITY], 'TTFB')).toEqual({
      count: 1,
      p75: 100,
      good: 1,
      needsImprovement: 0,
      poor: 0,
    });
  });
});
