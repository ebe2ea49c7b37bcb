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

/**
 * The running sums of {@link scoreCall} over the samples added so far, in their order: what a
 * server keeps between batches of one call's samples instead of the samples themselves. Plain
 * JSON data (finite numbers only).
 *
 * @example
 * ```ts
 * import { addToCallScore, type CallScoreTotals } from '@svc/quality-score';
 *
 * const totals: CallScoreTotals = addToCallScore(undefined, firstSamples);
 * ```
 */
export interface CallScoreTotals {
  /** Samples that scored so far. */
  readonly scoredSamples: number;
  /** The longest window of a sample that scored, ms (0 before one did): the unit of the weights. */
  readonly longestWindowMs: number;
  /** Σ (w / longestWindowMs) · I², over the scored samples in order. */
  readonly weightedSquares: number;
  /** Σ w / longestWindowMs, over the scored samples in order. */
  readonly totalWeight: number;
}

/**
 * Adds samples, in order, after the samples already summed in `totals` (`undefined`: none yet).
 * {@link scoreCallTotals} of the result equals {@link scoreCall} of all those samples in that
 * order, to the last bit, however they were split into batches.
 *
 * The weights are windows divided by the longest window, so a scoring sample with a window
 * longer than every scoring sample before it changes every earlier term: then the result is
 * `null`, and the totals must be computed again from every sample (`addToCallScore(undefined,
 * allSamples)`). Never `null` when `totals` is `undefined`. Never throws.
 *
 * @param totals - the totals of the samples before these, or `undefined`
 * @param samples - the next samples of the call, in order
 * @returns the totals of every sample so far, or `null` when they must be computed again
 * @example
 * ```ts
 * import { addToCallScore, scoreCall, scoreCallTotals } from '@svc/quality-score';
 *
 * const first = addToCallScore(undefined, firstBatch);
 * const both =
 *   addToCallScore(first, secondBatch) ?? addToCallScore(undefined, [...firstBatch, ...secondBatch]);
 * scoreCallTotals(both) === scoreCall([...firstBatch, ...secondBatch]); // true
 * ```
 */
export function addToCallScore(totals: undefined, samples: readonly CallSample[]): CallScoreTotals;
export function addToCallScore(
  totals: CallScoreTotals | undefined,
  samples: readonly CallSample[],
): CallScoreTotals | null;
export function addToCallScore(
  totals: CallScoreTotals | undefined,
  samples: readonly CallSample[],
): CallScoreTotals | null {
  // The same two passes as callImpairment (which stays as it is: the SDK bundles it, not this),
  // started from the totals; a property test checks both agree to the last bit.
  const impairments: number[] = [];
  const windows: number[] = [];
  let longestWindowMs = 0;
  if (Array.isArray(samples)) {
    for (const sample of samples as readonly CallSample[]) {
      const impairment = sampleImpairment(sample);
      if (impairment === null) continue;
      impairments.push(impairment);
      windows.push(sample.windowMs);
      if (sample.windowMs > longestWindowMs) longestWindowMs = sample.windowMs;
    }
  }
  const before = totals ?? { scoredSamples: 0, longestWindowMs: 0, weightedSquares: 0, totalWeight: 0 };
  if (before.scoredSamples > 0) {
    if (longestWindowMs > before.longestWindowMs) return null;
    longestWindowMs = before.longestWindowMs;
  }
  let weightedSquares = before.weightedSquares;
  let totalWeight = before.totalWeight;
  for (let index = 0; index < impairments.length; index++) {
    const weight = (windows[index] as number) / longestWindowMs;
    const impairment = impairments[index] as number;
    weightedSquares += weight * impairment * impairment;
    totalWeight += weight;
  }
  return {
    scoredSamples: before.scoredSamples + impairments.length,
    longestWindowMs,
    weightedSquares,
    totalWeight,
  };
}

/** Unrounded impairment (0..100) of call totals; `null` when no sample scored. */
function totalsImpairment(totals: CallScoreTotals | undefined): number | null {
  if (totals === undefined || !(totals.scoredSamples > 0)) return null;
  return Math.min(100, Math.sqrt(totals.weightedSquares / totals.totalWeight));
}

/**
 * The score of call totals built with {@link addToCallScore}: equals {@link scoreCall} of the
 * samples added, or `null` when none of them scored (or `totals` is `null` or `undefined`).
 * Never throws.
 *
 * @param totals - totals from {@link addToCallScore}
 * @returns 0..100, or `null` when there is nothing to score
 * @example
 * ```ts
 * import { addToCallScore, scoreCallTotals } from '@svc/quality-score';
 *
 * const clean = { kind: 'audio', dir: 'in', lossPct: 0, rttMs: 40, jitterMs: 5 } as const;
 * const totals = addToCallScore(undefined, [{ windowMs: 25_000, tracks: [clean] }]);
 * const more = addToCallScore(totals, [{ windowMs: 5_000, tracks: [{ ...clean, lossPct: 20 }] }]);
 * scoreCallTotals(more); // 78, as scoreCall of both samples
 * ```
 */
export function scoreCallTotals(totals: CallScoreTotals | null | undefined): number | null {
  return toScore(totalsImpairment(totals ?? undefined));
}
