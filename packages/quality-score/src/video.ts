/**
 * The video part: impairments in score points (0..100) that add up, like the E-model's, and
 * are clamped to 100 by the caller. Each term is continuous and non-decreasing in how bad its
 * metric is; a missing metric contributes 0. The constants are this package's choices (there is
 * no standard like G.107 for WebRTC video); the README explains each one.
 */

/** Impairment of a fully frozen window. */
export const FREEZE_WEIGHT = 100;
/** Curvature of the freeze term: at a frozen share f the term is ∝ 1 − e^(−f / 0.2). */
export const FREEZE_SCALE = 0.2;
/** Frozen-equivalent time each freeze adds for the interruption itself, ms. */
export const FREEZE_INTERRUPTION_MS = 200;

/** Packet-loss robustness of video, in the G.107 form 95 · P / (P + B). */
export const VIDEO_PACKET_LOSS_ROBUSTNESS = 15;

/** Impairment at 0 fps. */
export const FRAME_RATE_WEIGHT = 80;
/** Frame rate with no impairment. */
export const REFERENCE_FRAME_RATE = 30;
/** Exponent of the frame-rate term: W · (1 − fps / 30)³. */
export const FRAME_RATE_EXPONENT = 3;

/** Impairment as frame drops approach 100 %. */
export const FRAME_DROP_WEIGHT = 40;
/** Scale of the frame-drop term: W · (1 − e^(−drop / 20)). */
export const FRAME_DROP_SCALE_PCT = 20;

/** Impairment at or below {@link LOWEST_HEIGHT}. */
export const RESOLUTION_WEIGHT = 30;
/**
 * Height with no impairment, pixels. 480 p is what a good call commonly receives (simulcast
 * layers, tiles in a gallery): going from 480 p to 720 p is not a quality problem worth points.
 */
export const REFERENCE_HEIGHT = 480;
/** Height with the full resolution impairment, pixels (three halvings below 480). */
export const LOWEST_HEIGHT = 60;

const FREEZE_NORMALISER = 1 - Math.exp(-1 / FREEZE_SCALE);

/**
 * Frozen share of the window, 0..1: the larger of `freezeMs` and `maxFreezeMs` (each a lower
 * bound of the frozen time, `maxFreezeMs` capped at the window because the freeze may have
 * started before it), plus 200 ms per freeze, over `windowMs`.
 */
export function frozenShare(
  windowMs: number,
  freezes: number | undefined,
  freezeMs: number | undefined,
  maxFreezeMs: number | undefined,
): number {
  const frozenMs = Math.max(freezeMs ?? 0, Math.min(maxFreezeMs ?? 0, windowMs));
  const share = (frozenMs + FREEZE_INTERRUPTION_MS * (freezes ?? 0)) / windowMs;
  return Math.min(1, share);
}

/** 100 · (1 − e^(−f / 0.2)) / (1 − e^(−5)): 0 at f = 0, 100 at f = 1, steepest at the start. */
export function freezeImpairment(share: number): number {
  return (FREEZE_WEIGHT * (1 - Math.exp(-share / FREEZE_SCALE))) / FREEZE_NORMALISER;
}

/** 95 · P / (P + 15), the G.107 loss form with a video robustness factor. */
export function videoLossImpairment(lossPct: number): number {
  return (95 * lossPct) / (lossPct + VIDEO_PACKET_LOSS_ROBUSTNESS);
}

/** 80 · (1 − min(1, fps / 30))³. */
export function frameRateImpairment(fps: number): number {
  const deficit = 1 - Math.min(1, fps / REFERENCE_FRAME_RATE);
  return FRAME_RATE_WEIGHT * deficit ** FRAME_RATE_EXPONENT;
}

/** 40 · (1 − e^(−drop / 20)), drop in percent. */
export function frameDropImpairment(frameDropPct: number): number {
  return FRAME_DROP_WEIGHT * (1 - Math.exp(-frameDropPct / FRAME_DROP_SCALE_PCT));
}

/** 30 · clamp(ln(480 / h) / ln(480 / 60), 0, 1): 10 points per halving of the height below 480. */
export function resolutionImpairment(height: number): number {
  const halvings = Math.log(REFERENCE_HEIGHT / height) / Math.log(REFERENCE_HEIGHT / LOWEST_HEIGHT);
  return RESOLUTION_WEIGHT * Math.min(1, Math.max(0, halvings));
}
