import type { Finding, Thresholds } from '@svc/detectors';
import {
  addItems,
  type CallFacts,
  type PlacedCallItem,
  type SummarizeOptions as ProgressOptions,
  type SeriesPiece,
  sortItems,
  startProgress,
  summarizeProgress,
} from './call-progress.ts';
import { joinSeries, type Series } from './series.ts';

export type { PlacedCallItem } from './call-progress.ts';
export type { Series } from './series.ts';

/** One track of a call with its metric series. */
interface TrackSeries {
  id: string;
  kind: string;
  dir: string;
  sampleCount: number;
  series: Series;
}

/** What processing stores for one peer connection, its series included. */
export interface CallSummary extends CallFacts {
  tracks: TrackSeries[];
  /** Per sample: `t`, `windowMs`, `score`, `state`, `relayed`, `network`. */
  series: Series;
}

export interface SummarizeOptions extends ProgressOptions {
  thresholds: Thresholds;
}

/** The connection series of a call without samples. */
export function emptyConnectionSeries(): Series {
  return { t: [], windowMs: [], score: [], state: [], relayed: [], network: [] };
}

/**
 * The calls of a session from all its call items at once: one per peer connection, with the
 * findings of `@svc/detectors` over the whole session timeline. Pure and deterministic: the same
 * items give the same calls, however they were chunked or in whatever order chunks arrived. The
 * same code as incremental processing (`call-progress.ts`), from an empty progress.
 *
 * @returns the calls (in order of first appearance) and every finding (session-wide ones too).
 */
export function summarizeCalls(
  placed: PlacedCallItem[],
  options: SummarizeOptions,
): { calls: CallSummary[]; findings: Finding[] } {
  const progress = startProgress(options.thresholds);
  const { pieces } = addItems(progress, sortItems(placed));
  const { calls, findings } = summarizeProgress(progress, options);
  const byCall = new Map<string, SeriesPiece[]>();
  for (const piece of pieces) byCall.set(piece.pc, [...(byCall.get(piece.pc) ?? []), piece]);
  return {
    calls: calls.map((call) => {
      const own = byCall.get(call.pc) ?? [];
      const tracks = progress.calls.find((candidate) => candidate.pc === call.pc)?.tracks ?? [];
      return {
        ...call,
        series: own.find((piece) => piece.track === null)?.series ?? emptyConnectionSeries(),
        tracks: tracks.map((track) => ({
          ...track,
          series: joinSeries(own.filter((piece) => piece.track === track.id).map((piece) => piece.series)),
        })),
      };
    }),
    findings,
  };
}
