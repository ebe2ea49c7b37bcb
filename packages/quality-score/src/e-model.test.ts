import { describe, expect, it } from 'vitest';
import {
  audioImpairment,
  audioRating,
  BEST_MEAN_OPINION_SCORE,
  DEFAULT_RATING,
  delayImpairment,
  effectiveEquipmentImpairment,
  meanOpinionScore,
  oneWayDelayMs,
} from './e-model.ts';

describe('delayImpairment (Cole & Rosenbluth 2001)', () => {
  it('is 0.024 d below the knee and adds 0.11 (d − 177.3) above it', () => {
    expect(delayImpairment(0)).toBe(0);
    expect(delayImpairment(100)).toBeCloseTo(2.4, 12);
    expect(delayImpairment(177.3)).toBeCloseTo(4.2552, 12);
    expect(delayImpairment(400)).toBeCloseTo(0.024 * 400 + 0.11 * (400 - 177.3), 12);
  });

  it('has no jump at 150 ms or at the 177.3 ms knee', () => {
    for (const knee of [150, 177.3]) {
      expect(Math.abs(delayImpairment(knee + 1e-6) - delayImpairment(knee - 1e-6))).toBeLessThan(1e-6);
    }
  });
});

describe('oneWayDelayMs', () => {
  it('is half the RTT plus the jitter buffer, or twice the jitter when that is larger', () => {
    expect(oneWayDelayMs(100, undefined, undefined)).toBe(50);
    expect(oneWayDelayMs(100, 5, 60)).toBe(110);
    expect(oneWayDelayMs(100, 40, 60)).toBe(130);
    expect(oneWayDelayMs(undefined, undefined, undefined)).toBe(0);
  });
});

describe('effectiveEquipmentImpairment (G.107 §7.4, G.711 with PLC from G.113 Appendix I)', () => {
  it('follows Ie + (95 − Ie) · Ppl / (Ppl / BurstR + Bpl) with Ie = 0, Bpl = 25.1, BurstR = 1', () => {
    expect(effectiveEquipmentImpairment(0)).toBe(0);
    expect(effectiveEquipmentImpairment(10)).toBeCloseTo((95 * 10) / 35.1, 12);
    expect(effectiveEquipmentImpairment(100)).toBeCloseTo((95 * 100) / 125.1, 12);
  });
});

describe('meanOpinionScore (G.107 Annex B, clamped)', () => {
  it('matches the cubic where it is above 1', () => {
    expect(meanOpinionScore(80)).toBeCloseTo(1 + 0.035 * 80 + 7e-6 * 80 * 20 * 20, 12);
    expect(BEST_MEAN_OPINION_SCORE).toBeCloseTo(4.4093, 4);
  });

  it('never dips below 1 and never decreases, even where the raw cubic does (R < 6.5)', () => {
    const rawCubic = (rating: number) => 1 + 0.035 * rating + 7e-6 * rating * (rating - 60) * (100 - rating);
    expect(rawCubic(3)).toBeLessThan(1);
    let previous = meanOpinionScore(-50);
    for (let rating = -50; rating <= 120; rating += 0.05) {
      const current = meanOpinionScore(rating);
      expect(current).toBeGreaterThanOrEqual(previous);
      expect(current).toBeGreaterThanOrEqual(1);
      previous = current;
    }
  });

  it('clamps R to [0, 93.2], so a negative R (heavy loss plus delay) cannot raise the score again', () => {
    expect(meanOpinionScore(-200)).toBe(1);
    expect(meanOpinionScore(150)).toBe(BEST_MEAN_OPINION_SCORE);
  });
});

describe('audioImpairment', () => {
  it('is 0 for a perfect connection and 100 for R at or below ~6.5', () => {
    expect(audioImpairment(DEFAULT_RATING)).toBe(0);
    expect(audioImpairment(0)).toBe(100);
    expect(audioImpairment(6)).toBe(100);
    expect(audioImpairment(7)).toBeLessThan(100);
  });

  it('combines delay and loss in R = 93.2 − Id − Ie,eff', () => {
    expect(audioRating(100, 10)).toBeCloseTo(93.2 - 2.4 - (95 * 10) / 35.1, 12);
  });
});
