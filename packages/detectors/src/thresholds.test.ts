import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DEFAULT_THRESHOLDS,
  resolveThresholds,
  THRESHOLD_BOUNDS,
  THRESHOLD_NAMES,
  type Thresholds,
} from './thresholds.ts';
import { type ThresholdOverrides, thresholdOverridesSchema } from './thresholds-schema.ts';

describe('thresholds', () => {
  it('has the defaults of PROTOCOL.md §5 under their protocol names', () => {
    expect(DEFAULT_THRESHOLDS).toEqual({
      connectTimeoutMs: 15000,
      oneWayMs: 6000,
      freezeSingleMs: 2000,
      freezeRatioPct: 5,
      minObservedMs: 30000,
      concealmentPct: 5,
      concealmentSustainMs: 10000,
      reconnectCount: 3,
      reconnectWindowMs: 60000,
      abandonMs: 30000,
      abandonScore: 60,
      lossPct: 5,
      lossSustainMs: 10000,
      rttMs: 300,
      rttSustainMs: 15000,
      cpuLimitedPct: 20,
      lowResHeight: 240,
      lowResSustainMs: 20000,
    });
    expect([...THRESHOLD_NAMES]).toEqual(Object.keys(DEFAULT_THRESHOLDS));
    expect(Object.keys(THRESHOLD_BOUNDS)).toEqual(Object.keys(DEFAULT_THRESHOLDS));
  });

  it('every default lies within its bounds, integer where required', () => {
    for (const name of THRESHOLD_NAMES) {
      const { min, max, integer } = THRESHOLD_BOUNDS[name];
      expect(DEFAULT_THRESHOLDS[name], name).toBeGreaterThanOrEqual(min);
      expect(DEFAULT_THRESHOLDS[name], name).toBeLessThanOrEqual(max);
      if (integer) expect(Number.isInteger(DEFAULT_THRESHOLDS[name]), name).toBe(true);
    }
  });

  it('resolveThresholds merges finite overrides of known names and ignores the rest', () => {
    expect(resolveThresholds()).toEqual(DEFAULT_THRESHOLDS);
    expect(resolveThresholds({ lossPct: 2, rttMs: 0 })).toEqual({
      ...DEFAULT_THRESHOLDS,
      lossPct: 2,
      rttMs: 0,
    });
    const junk = {
      lossPct: Number.NaN,
      rttMs: '400',
      oneWayMs: null,
      bogus: 1,
      abandonMs: Number.POSITIVE_INFINITY,
    };
    expect(resolveThresholds(junk as never)).toEqual(DEFAULT_THRESHOLDS);
    expect(resolveThresholds(null)).toEqual(DEFAULT_THRESHOLDS);
  });
});

describe('thresholdOverridesSchema', () => {
  it('accepts a partial set, the defaults, and every bound', () => {
    expect(thresholdOverridesSchema.parse({})).toEqual({});
    expect(thresholdOverridesSchema.parse({ lossPct: 2.5, lossSustainMs: 5000 })).toEqual({
      lossPct: 2.5,
      lossSustainMs: 5000,
    });
    expect(thresholdOverridesSchema.parse(DEFAULT_THRESHOLDS)).toEqual(DEFAULT_THRESHOLDS);
    for (const name of THRESHOLD_NAMES) {
      const { min, max } = THRESHOLD_BOUNDS[name];
      expect(thresholdOverridesSchema.safeParse({ [name]: min }).success, `${name} min`).toBe(true);
      expect(thresholdOverridesSchema.safeParse({ [name]: max }).success, `${name} max`).toBe(true);
    }
  });

  it('rejects unknown names, values out of bounds, non-finite values and fractions of integer thresholds', () => {
    expect(thresholdOverridesSchema.safeParse({ lossPercent: 3 }).success).toBe(false);
    for (const name of THRESHOLD_NAMES) {
      const { min, max, integer } = THRESHOLD_BOUNDS[name];
      for (const value of [min - 1, max + 1, Number.NaN, Number.POSITIVE_INFINITY, '5', null]) {
        expect(thresholdOverridesSchema.safeParse({ [name]: value }).success, `${name} = ${value}`).toBe(
          false,
        );
      }
      expect(thresholdOverridesSchema.safeParse({ [name]: min + 0.5 }).success, `${name} fraction`).toBe(
        !integer,
      );
    }
  });

  it('its output type is a partial Thresholds', () => {
    expectTypeOf<ThresholdOverrides>().toExtend<Partial<Thresholds>>();
    expectTypeOf<keyof ThresholdOverrides>().toEqualTypeOf<keyof Thresholds>();
  });
});
