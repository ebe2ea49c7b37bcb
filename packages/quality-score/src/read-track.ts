import type { TrackSample } from './types.ts';

/**
 * The metrics of one track after sanitising: `undefined` when missing (absent, `null`, `NaN`
 * or not a number), otherwise clamped into range (percentages to 0..100, times, counts, rates
 * and sizes to 0..+Infinity).
 */
export interface TrackMetrics {
  readonly lossPct: number | undefined;
  readonly rttMs: number | undefined;
  readonly jitterMs: number | undefined;
  readonly jitterBufferMs: number | undefined;
  readonly concealmentPct: number | undefined;
  readonly freezes: number | undefined;
  readonly freezeMs: number | undefined;
  readonly maxFreezeMs: number | undefined;
  readonly frameDropPct: number | undefined;
  readonly fps: number | undefined;
  readonly h: number | undefined;
  readonly stalled: boolean;
}

function readNonNegative(value: unknown): number | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return undefined;
  return value > 0 ? value : 0;
}

function readPercentage(value: unknown): number | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return undefined;
  return value > 100 ? 100 : value > 0 ? value : 0;
}

/** Sanitises the metrics of a track entry; never throws, whatever the input. */
export function readTrack(track: TrackSample): TrackMetrics {
  return {
    lossPct: readPercentage(track.lossPct),
    rttMs: readNonNegative(track.rttMs),
    jitterMs: readNonNegative(track.jitterMs),
    jitterBufferMs: readNonNegative(track.jitterBufferMs),
    concealmentPct: readPercentage(track.concealmentPct),
    freezes: readNonNegative(track.freezes),
    freezeMs: readNonNegative(track.freezeMs),
    maxFreezeMs: readNonNegative(track.maxFreezeMs),
    frameDropPct: readPercentage(track.frameDropPct),
    fps: readNonNegative(track.fps),
    h: readNonNegative(track.h),
    stalled: track.stalled === true,
  };
}
