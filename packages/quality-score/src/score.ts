import { audioImpairment, audioRating, delayImpairment, oneWayDelayMs } from './e-model.ts';
import { readTrack, type TrackMetrics } from './read-track.ts';
import type { CallSample, TrackSample } from './types.ts';
import {
  frameDropImpairment,
  frameRateImpairment,
  freezeImpairment,
  frozenShare,
  resolutionImpairment,
  videoLossImpairment,
} from './video.ts';

/*
 * Everything is computed as an *impairment* in score points (0 = perfect, 100 = unusable);
 * score = 100 − impairment, rounded once at the very end. The unrounded functions here are
 * internal: the vector generator and the tests use them, the public API rounds.
 */

function isUsableWindow(windowMs: unknown): windowMs is number {
  return typeof windowMs === 'number' && Number.isFinite(windowMs) && windowMs > 0;
}

function clampImpairment(impairment: number): number {
  return Math.min(100, Math.max(0, impairment));
}

function hasAudioMetric(metrics: TrackMetrics): boolean {
  return (
    metrics.lossPct !== undefined ||
    metrics.concealmentPct !== undefined ||
    metrics.rttMs !== undefined ||
    metrics.jitterMs !== undefined ||
    metrics.jitterBufferMs !== undefined
  );
}

function hasVideoMetric(metrics: TrackMetrics): boolean {
  return (
    metrics.lossPct !== undefined ||
    metrics.rttMs !== undefined ||
    metrics.jitterMs !== undefined ||
    metrics.jitterBufferMs !== undefined ||
    metrics.freezes !== undefined ||
    metrics.freezeMs !== undefined ||
    metrics.maxFreezeMs !== undefined ||
    metrics.frameDropPct !== undefined ||
    metrics.fps !== undefined ||
    metrics.h !== undefined
  );
}

function audioTrackImpairment(metrics: TrackMetrics): number {
  const delayMs = oneWayDelayMs(metrics.rttMs, metrics.jitterMs, metrics.jitterBufferMs);
  const effectiveLossPct = Math.max(metrics.lossPct ?? 0, metrics.concealmentPct ?? 0);
  // Never better than the share of the media that arrived (the E-model alone leaves R ≈ 17 at 100 % loss).
  return Math.max(audioImpairment(audioRating(delayMs, effectiveLossPct)), effectiveLossPct);
}

function videoTrackImpairment(metrics: TrackMetrics, windowMs: number): number {
  const delayMs = oneWayDelayMs(metrics.rttMs, metrics.jitterMs, metrics.jitterBufferMs);
  const share = frozenShare(windowMs, metrics.freezes, metrics.freezeMs, metrics.maxFreezeMs);
  const impairment =
    delayImpairment(delayMs) +
    videoLossImpairment(metrics.lossPct ?? 0) +
    freezeImpairment(share) +
    frameRateImpairment(metrics.fps ?? Number.POSITIVE_INFINITY) +
    frameDropImpairment(metrics.frameDropPct ?? 0) +
    resolutionImpairment(metrics.h ?? Number.POSITIVE_INFINITY);
  // Never better than the share of the media that arrived.
  return Math.max(impairment, metrics.lossPct ?? 0);
}

/** Unrounded impairment (0..100) of one track, or `null` when it has nothing to score. */
export function trackImpairment(track: TrackSample, windowMs: number): number | null {
  if (!isUsableWindow(windowMs) || typeof track !== 'object' || track === null) return null;
  const metrics = readTrack(track);
  if (track.kind === 'audio') {
    if (metrics.stalled) return 100;
    return hasAudioMetric(metrics) ? clampImpairment(audioTrackImpairment(metrics)) : null;
  }
  if (track.kind === 'video') {
    if (metrics.stalled) return 100;
    return hasVideoMetric(metrics) ? clampImpairment(videoTrackImpairment(metrics, windowMs)) : null;
  }
  return null;
}

/**
 * Unrounded impairment (0..100) of one sample: the worst track's impairment combined in
 * quadrature with the second worst, √(I₁² + I₂²), capped at 100. `null` when no track scores.
 */
export function sampleImpairment(sample: CallSample): number | null {
  if (typeof sample !== 'object' || sample === null) return null;
  const { windowMs, tracks } = sample;
  if (!isUsableWindow(windowMs) || !Array.isArray(tracks)) return null;
  let worst = -1;
  let secondWorst = 0;
  for (const track of tracks as readonly TrackSample[]) {
    const impairment = trackImpairment(track, windowMs);
    if (impairment === null) continue;
    if (impairment > worst) {
      secondWorst = Math.max(worst, 0);
      worst = impairment;
    } else if (impairment > secondWorst) {
      secondWorst = impairment;
    }
  }
  if (worst < 0) return null;
  return Math.min(100, Math.sqrt(worst * worst + secondWorst * secondWorst));
}

/**
 * Unrounded impairment (0..100) of a call: the root mean square of the samples' impairments,
 * weighted by `windowMs` (weights divided by the longest window first, which changes nothing
 * but keeps the sums finite). Samples that do not score carry no weight; `null` when none scores.
 */
export function callImpairment(samples: readonly CallSample[]): number | null {
  if (!Array.isArray(samples)) return null;
  const impairments: number[] = [];
  const windows: number[] = [];
  let longestWindowMs = 0;
  for (const sample of samples as readonly CallSample[]) {
    const impairment = sampleImpairment(sample);
    if (impairment === null) continue;
    impairments.push(impairment);
    windows.push(sample.windowMs);
    if (sample.windowMs > longestWindowMs) longestWindowMs = sample.windowMs;
  }
  if (impairments.length === 0) return null;
  let weightedSquares = 0;
  let totalWeight = 0;
  for (let index = 0; index < impairments.length; index++) {
    const weight = (windows[index] as number) / longestWindowMs;
    const impairment = impairments[index] as number;
    weightedSquares += weight * impairment * impairment;
    totalWeight += weight;
  }
  return Math.min(100, Math.sqrt(weightedSquares / totalWeight));
}

/** Score from an unrounded impairment: round half up of 100 − impairment. */
export function toScore(impairment: number | null): number | null {
  return impairment === null ? null : Math.round(100 - impairment);
}

/**
 * Scores one track over one window: an integer 0..100 (higher is better), or `null` when the
 * track has no metric the score reads for its kind, the kind is neither `audio` nor `video`, or
 * `windowMs` is not a finite number above 0. Never throws. `stalled: true` scores 0.
 *
 * Missing metrics count as perfect; `NaN` counts as missing; out-of-range values are clamped
 * (negative → 0, percentages above 100 → 100). Metrics must be per-window values (the deltas of
 * PROTOCOL.md §2), never lifetime counters.
 *
 * @param track - one track entry of a call sample
 * @param windowMs - the sample's window, ms (the freeze metrics are judged against it)
 * @returns 0..100, or `null` when there is nothing to score
 * @example
 * ```ts
 * import { scoreTrack } from '@svc/quality-score';
 *
 * scoreTrack({ kind: 'audio', dir: 'in', lossPct: 0, rttMs: 40, jitterMs: 5 }, 5000); // 100
 * scoreTrack({ kind: 'video', dir: 'in', freezeMs: 5000 }, 5000); // 0: frozen all window
 * scoreTrack({ kind: 'video', dir: 'in' }, 5000); // null: no scored metric
 * ```
 */
export function scoreTrack(track: TrackSample, windowMs: number): number | null {
  return toScore(trackImpairment(track, windowMs));
}

/**
 * Scores one call sample (one peer connection, one window): an integer 0..100, or `null` when
 * no track scores or `windowMs` is not a finite number above 0. Never throws.
 *
 * The sample is as good as its worst track, lowered further by the second worst: impairments
 * (100 − unrounded track score) combine as √(I₁² + I₂²). Removing a track or a metric therefore
 * never lowers the score, and worsening any one metric never raises it.
 *
 * @param sample - a `call.sample` (only `windowMs` and `tracks` are read)
 * @returns 0..100, or `null` when there is nothing to score
 * @example
 * ```ts
 * import { scoreSample } from '@svc/quality-score';
 *
 * const score = scoreSample({
 *   windowMs: 5000,
 *   tracks: [
 *     { kind: 'audio', dir: 'in', lossPct: 0.5, rttMs: 60, jitterMs: 8 },
 *     { kind: 'video', dir: 'in', lossPct: 0.4, fps: 29.8, h: 720, freezes: 0, freezeMs: 0 },
 *   ],
 * }); // 97
 * ```
 */
export function scoreSample(sample: CallSample): number | null {
  return toScore(sampleImpairment(sample));
}

/**
 * Scores a call from its samples: an integer 0..100, or `null` when no sample scores. Never
 * throws. Samples are weighted by `windowMs` (one 30 s sample counts like six identical 5 s
 * samples) and their impairments combine as a root mean square, so bad stretches weigh more
 * than in a plain average; the result always lies between the worst and the best sample score.
 * Pass the samples of one peer connection (or of all of a call's peer connections).
 *
 * @param samples - the call's samples, in any order
 * @returns 0..100, or `null` when there is nothing to score
 * @example
 * ```ts
 * import { scoreCall } from '@svc/quality-score';
 *
 * const clean = { kind: 'audio', dir: 'in', lossPct: 0, rttMs: 40, jitterMs: 5 } as const;
 * const lossy = { ...clean, lossPct: 20 };
 * scoreCall([
 *   { windowMs: 25_000, tracks: [clean] },
 *   { windowMs: 5_000, tracks: [lossy] },
 * ]); // 78
 * scoreCall([]); // null
 * ```
 */
export function scoreCall(samples: readonly CallSample[]): number | null {
  return toScore(callImpairment(samples));
}
