/**
 * The audio part: a simplified ITU-T G.107 E-model as used for WebRTC.
 *
 * R = R0 − Id − Ie,eff, with R0 = 93.2 (the G.107 default R0 − Is with every other parameter at
 * its default value, A = 0), a delay impairment Id from the one-way delay (Cole & Rosenbluth
 * 2001) and an effective equipment impairment Ie,eff from packet loss (G.107 §7.4, codec values
 * from G.113 Appendix I). R is clamped to [0, R0] before it is mapped to a score, so the score
 * never rises again at high loss or delay.
 */

/** G.107 default R0 − Is: the rating of a connection with no delay, loss or codec impairment. */
export const DEFAULT_RATING = 93.2;

/** Cole & Rosenbluth: slope of the delay impairment below the knee, per ms of one-way delay. */
export const DELAY_SLOPE = 0.024;
/** Cole & Rosenbluth: extra slope above the knee, per ms. */
export const DELAY_KNEE_SLOPE = 0.11;
/** Cole & Rosenbluth: one-way delay where interactivity starts to suffer, ms. */
export const DELAY_KNEE_MS = 177.3;

/** G.113 Appendix I, G.711 with packet loss concealment: equipment impairment Ie. */
export const EQUIPMENT_IMPAIRMENT = 0;
/** G.113 Appendix I, G.711 with packet loss concealment: packet-loss robustness factor Bpl. */
export const PACKET_LOSS_ROBUSTNESS = 25.1;
/** G.107 burst ratio; 1 is random loss (window deltas carry no burst information). */
export const BURST_RATIO = 1;

/** G.107 Annex B: MOS from R (no clamping; see {@link meanOpinionScore}). */
function meanOpinionScoreCubic(rating: number): number {
  return 1 + 0.035 * rating + 7e-6 * rating * (rating - 60) * (100 - rating);
}

/**
 * One-way mouth-to-ear delay estimate, ms: half the round trip plus the jitter buffer. When the
 * jitter buffer delay is not reported (or is below it), twice the jitter stands in for it.
 */
export function oneWayDelayMs(
  rttMs: number | undefined,
  jitterMs: number | undefined,
  jitterBufferMs: number | undefined,
): number {
  const bufferMs = Math.max(jitterBufferMs ?? 0, 2 * (jitterMs ?? 0));
  return (rttMs ?? 0) / 2 + bufferMs;
}

/**
 * Delay impairment Id = 0.024 d + 0.11 (d − 177.3) H(d − 177.3) (Cole & Rosenbluth 2001):
 * continuous in d, with a change of slope (not a jump) at 177.3 ms.
 */
export function delayImpairment(delayMs: number): number {
  return DELAY_SLOPE * delayMs + DELAY_KNEE_SLOPE * Math.max(0, delayMs - DELAY_KNEE_MS);
}

/**
 * Effective equipment impairment Ie,eff = Ie + (95 − Ie) · Ppl / (Ppl / BurstR + Bpl)
 * (G.107 §7.4), with Ppl the packet loss in percent (0..100).
 */
export function effectiveEquipmentImpairment(lossPct: number): number {
  return (
    EQUIPMENT_IMPAIRMENT +
    ((95 - EQUIPMENT_IMPAIRMENT) * lossPct) / (lossPct / BURST_RATIO + PACKET_LOSS_ROBUSTNESS)
  );
}

/**
 * MOS from R (G.107 Annex B) on R clamped to [0, R0]. Below R ≈ 6.5 the cubic dips under 1 and
 * decreases towards R = 0; taking max(1, cubic) makes the mapping non-decreasing everywhere.
 */
export function meanOpinionScore(rating: number): number {
  const clamped = Math.min(DEFAULT_RATING, Math.max(0, rating));
  return Math.max(1, meanOpinionScoreCubic(clamped));
}

/** MOS of a perfect connection (R = R0 = 93.2): ≈ 4.4093. */
export const BEST_MEAN_OPINION_SCORE = meanOpinionScore(DEFAULT_RATING);

/**
 * Audio impairment in score points (0..100): 100 · (1 − (MOS(R) − 1) / (MOS(R0) − 1)), so a
 * perfect connection is 0 and R ≤ 6.5 is 100.
 */
export function audioImpairment(rating: number): number {
  return 100 * (1 - (meanOpinionScore(rating) - 1) / (BEST_MEAN_OPINION_SCORE - 1));
}

/**
 * R of an audio track: R0 − Id(d) − Ie,eff(max(lossPct, concealmentPct)).
 */
export function audioRating(delayMs: number, effectiveLossPct: number): number {
  return DEFAULT_RATING - delayImpairment(delayMs) - effectiveEquipmentImpairment(effectiveLossPct);
}
