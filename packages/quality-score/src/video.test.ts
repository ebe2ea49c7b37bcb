import { describe, expect, it } from 'vitest';
import {
  frameDropImpairment,
  frameRateImpairment,
  freezeImpairment,
  frozenShare,
  resolutionImpairment,
  videoLossImpairment,
} from './video.ts';

describe('frozenShare', () => {
  it('is frozen time over the window', () => {
    expect(frozenShare(5000, undefined, 500, undefined)).toBeCloseTo(0.1, 12);
    expect(frozenShare(1000, undefined, 500, undefined)).toBeCloseTo(0.5, 12);
  });

  it('adds 200 ms per freeze and caps at 1', () => {
    expect(frozenShare(5000, 2, 600, undefined)).toBeCloseTo(0.2, 12);
    expect(frozenShare(5000, 100, 0, undefined)).toBe(1);
    expect(frozenShare(5000, undefined, 60_000, undefined)).toBe(1);
  });

  it('uses maxFreezeMs as a lower bound of the frozen time, capped at the window', () => {
    expect(frozenShare(5000, undefined, 400, 1200)).toBeCloseTo(0.24, 12);
    expect(frozenShare(1000, undefined, undefined, 3000)).toBe(1);
  });
});

describe('video impairments', () => {
  it('freeze: 0 at 0, 100 at a fully frozen window, concave in between', () => {
    expect(freezeImpairment(0)).toBe(0);
    expect(freezeImpairment(1)).toBeCloseTo(100, 10);
    expect(freezeImpairment(0.1)).toBeCloseTo((100 * (1 - Math.exp(-0.5))) / (1 - Math.exp(-5)), 12);
    expect(freezeImpairment(0.5)).toBeGreaterThan(50);
  });

  it('loss: 95 · P / (P + 15)', () => {
    expect(videoLossImpairment(0)).toBe(0);
    expect(videoLossImpairment(10)).toBeCloseTo(38, 12);
  });

  it('frame rate: 80 · (1 − fps / 30)³, nothing at 30 fps or more', () => {
    expect(frameRateImpairment(30)).toBe(0);
    expect(frameRateImpairment(60)).toBe(0);
    expect(frameRateImpairment(15)).toBeCloseTo(10, 12);
    expect(frameRateImpairment(0)).toBe(80);
  });

  it('frame drops: 40 · (1 − e^(−drop / 20))', () => {
    expect(frameDropImpairment(0)).toBe(0);
    expect(frameDropImpairment(20)).toBeCloseTo(40 * (1 - Math.exp(-1)), 12);
  });

  it('resolution: 10 points per halving below 480 p, at most 30', () => {
    expect(resolutionImpairment(1080)).toBe(0);
    expect(resolutionImpairment(720)).toBe(0);
    expect(resolutionImpairment(480)).toBe(0);
    expect(resolutionImpairment(240)).toBeCloseTo(10, 12);
    expect(resolutionImpairment(120)).toBeCloseTo(20, 12);
    expect(resolutionImpairment(60)).toBeCloseTo(30, 12);
    expect(resolutionImpairment(10)).toBe(30);
    expect(resolutionImpairment(0)).toBe(30);
  });
});
