// The reference for call processing: `summarizeCalls` as it was when every job recomputed a
// session from all its items (before processing became incremental), kept unchanged so that
// tests can check the incremental computation against it. Not used by the server.

import {
  type CallEvent,
  type CallSample,
  detect,
  type Finding,
  SEVERITY_BY_KIND,
  type Severity,
  type Thresholds,
} from '@svc/detectors';
import type { CallEvent as ProtocolCallEvent, CallSample as ProtocolCallSample } from '@svc/protocol';
import { higherSeverity, trackSampleSchema } from '@svc/protocol';
import { scoreCall, scoreSample } from '@svc/quality-score';

/** A validated call item and where it is in the session. */
export interface PlacedCallItem {
  seq: number;
  index: number;
  item: ProtocolCallSample | ProtocolCallEvent;
}

/** The metrics of a track entry (every field but `id`, `kind`, `dir`), in the protocol's order. */
export const TRACK_METRICS: readonly string[] = Object.keys(trackSampleSchema.shape).filter(
  (key) => key !== 'id' && key !== 'kind' && key !== 'dir',
);

/** Time-aligned arrays: `t[i]` is the end of sample i's window; `null` where it lacked a metric. */
export type Series = Record<string, Array<number | string | boolean | null>>;

/** One track of a call with its metric series. */
export interface TrackSeries {
  id: string;
  kind: string;
  dir: string;
  sampleCount: number;
  series: Series;
}

/** What processing stores for one peer connection. */
export interface CallSummary {
  pc: string;
  startedAt: number;
  lastItemAt: number;
  /** When the call ended: its `pc_closed`, or its last item once closed for inactivity. */
  endedAt: number | null;
  state: 'open' | 'closed';
  endReason: 'closed' | 'inactive' | null;
  durationMs: number | null;
  /** `pc_created` to the first `connected` connection state. */
  setupMs: number | null;
  connected: boolean;
  failedToConnect: boolean;
  failureReason: string | null;
  relayed: boolean;
  localTypes: string[];
  remoteTypes: string[];
  protocol: string | null;
  networkType: string | null;
  qualityScore: number | null;
  codec: string | null;
  codecs: string[];
  sampleCount: number;
  tracks: TrackSeries[];
  /** Per sample: `t`, `windowMs`, `score`, `state`, `relayed`, `network`. */
  series: Series;
  findings: Finding[];
  issueKinds: string[];
  /** Findings of severity `low` or higher (`webrtc_relay_fallback` is `info`: not an issue). */
  hasIssue: boolean;
  maxSeverity: string | null;
}

export interface SummarizeOptions {
  thresholds: Thresholds;
  /**
   * The latest client time the session is known to have been alive (its newest chunk's `sentAt`
   * or item): detectors judge timeouts up to it, never on the server's clock.
   */
  aliveUntil: number;
  /**
   * The client time now, estimated from the server's clock and the session's newest chunk, or
   * `undefined` to close no call for inactivity.
   */
  clientNow?: number;
  /** A call with no item for this long (client time) is closed as `inactive`. */
  inactivityMs: number;
}

/** Items in session order: time, then place (what one chunk or many chunks give alike). */
export function sortItems(items: PlacedCallItem[]): PlacedCallItem[] {
  return items.sort((a, b) => a.item.t - b.item.t || a.seq - b.seq || a.index - b.index);
}

function pushDistinct(values: string[], value: string | undefined): void {
  if (value !== undefined && !values.includes(value)) values.push(value);
}

/** The track series of a call's samples, tracks in order of first appearance. */
function trackSeries(samples: readonly ProtocolCallSample[]): TrackSeries[] {
  const tracks = new Map<
    string,
    { id: string; kind: string; dir: string; rows: Array<[number, number, Record<string, unknown>]> }
  >();
  for (const sample of samples) {
    for (const track of sample.tracks) {
      let entry = tracks.get(track.id);
      if (entry === undefined) {
        entry = { id: track.id, kind: track.kind, dir: track.dir, rows: [] };
        tracks.set(track.id, entry);
      }
      entry.rows.push([sample.t, sample.windowMs, track as Record<string, unknown>]);
    }
  }
  return [...tracks.values()].map((entry) => {
    const series: Series = {
      t: entry.rows.map(([t]) => t),
      windowMs: entry.rows.map(([, windowMs]) => windowMs),
    };
    for (const metric of TRACK_METRICS) {
      if (!entry.rows.some(([, , track]) => track[metric] !== undefined)) continue;
      series[metric] = entry.rows.map(([, , track]) => {
        const value = track[metric];
        return value === undefined ? null : (value as number | string | boolean);
      });
    }
    return { id: entry.id, kind: entry.kind, dir: entry.dir, sampleCount: entry.rows.length, series };
  });
}

/** The negotiated codec: the (last seen) video codec when the call had video, else audio's. */
function mainCodec(samples: readonly ProtocolCallSample[]): string | null {
  let video: string | null = null;
  let audio: string | null = null;
  for (const sample of samples) {
    for (const track of sample.tracks) {
      if (track.codec === undefined) continue;
      if (track.kind === 'video') video = track.codec;
      else audio = track.codec;
    }
  }
  return video ?? audio;
}

function failureReasonOf(events: readonly ProtocolCallEvent[], finding: Finding | undefined): string | null {
  const candidateError = events.find((event) => event.name === 'ice_candidate_error');
  if (candidateError !== undefined && candidateError.name === 'ice_candidate_error')
    return `ice_candidate_error_${candidateError.errorCode}`;
  if (finding?.evidence.reason === 'failed') return 'ice_failed';
  if (finding?.evidence.reason === 'timeout') return 'connect_timeout';
  return null;
}

/**
 * The calls of a session from its call items: one per peer connection, with the findings of
 * `@svc/detectors` over the whole session timeline. Pure and deterministic: the same items give
 * the same calls, however they were chunked or in whatever order chunks arrived.
 *
 * @returns the calls (in order of first appearance) and every finding (session-wide ones too).
 */
export function referenceSummarizeCalls(
  placed: PlacedCallItem[],
  options: SummarizeOptions,
): { calls: CallSummary[]; findings: Finding[] } {
  const ordered = sortItems(placed).map((entry) => entry.item);
  const findings = detect(ordered as Array<CallSample | CallEvent>, {
    thresholds: options.thresholds,
    now: options.aliveUntil,
  });

  const byPc = new Map<string, Array<ProtocolCallSample | ProtocolCallEvent>>();
  for (const item of ordered) {
    if (item.pc === undefined) continue;
    const list = byPc.get(item.pc) ?? [];
    list.push(item);
    byPc.set(item.pc, list);
  }

  const calls: CallSummary[] = [];
  for (const [pc, items] of byPc) {
    const first = items[0];
    if (first === undefined) continue;
    const samples = items.filter((item): item is ProtocolCallSample => item.type === 'call.sample');
    const events = items.filter((item): item is ProtocolCallEvent => item.type === 'call.event');
    const created = events.find((event) => event.name === 'pc_created');
    const closed = events.find((event) => event.name === 'pc_closed');
    const startedAt = created?.t ?? first.t;
    const lastItemAt = items.reduce((latest, item) => Math.max(latest, item.t), startedAt);
    const firstConnected = events.find(
      (event) => event.name === 'connection_state' && event.state === 'connected',
    );
    const connected =
      firstConnected !== undefined || samples.some((sample) => sample.conn.state === 'connected');

    const localTypes: string[] = [];
    const remoteTypes: string[] = [];
    let relayed = false;
    let protocol: string | null = null;
    let networkType: string | null = null;
    for (const item of items) {
      const path =
        item.type === 'call.sample' ? item.conn : item.name === 'candidate_pair_change' ? item : undefined;
      if (path === undefined) continue;
      pushDistinct(localTypes, path.localType);
      pushDistinct(remoteTypes, path.remoteType);
      if (path.relayed === true) relayed = true;
      protocol = path.protocol ?? protocol;
      networkType = path.network ?? networkType;
    }

    const codecs: string[] = [];
    for (const sample of samples) for (const track of sample.tracks) pushDistinct(codecs, track.codec);

    const own = findings.filter((finding) => finding.pc === pc);
    const connectFailure = own.find((finding) => finding.kind === 'webrtc_connect_failure');
    const failedToConnect = connectFailure !== undefined && connectFailure.evidence.everConnected !== true;

    let state: CallSummary['state'] = 'open';
    let endReason: CallSummary['endReason'] = null;
    let endedAt: number | null = null;
    if (closed !== undefined) {
      state = 'closed';
      endReason = 'closed';
      endedAt = closed.t;
    } else if (options.clientNow !== undefined && options.clientNow - lastItemAt >= options.inactivityMs) {
      state = 'closed';
      endReason = 'inactive';
      endedAt = lastItemAt;
    }

    let maxSeverity: Severity | undefined;
    for (const finding of own) maxSeverity = higherSeverity(maxSeverity, finding.severity);
    calls.push({
      pc,
      startedAt,
      lastItemAt,
      endedAt,
      state,
      endReason,
      durationMs: endedAt === null ? null : Math.max(0, endedAt - startedAt),
      setupMs:
        created !== undefined && firstConnected !== undefined && firstConnected.t >= created.t
          ? firstConnected.t - created.t
          : null,
      connected,
      failedToConnect,
      failureReason: failedToConnect ? failureReasonOf(events, connectFailure) : null,
      relayed,
      localTypes: localTypes.sort(),
      remoteTypes: remoteTypes.sort(),
      protocol,
      networkType,
      qualityScore: scoreCall(samples),
      codec: mainCodec(samples),
      codecs: codecs.sort(),
      sampleCount: samples.length,
      tracks: trackSeries(samples),
      series: {
        t: samples.map((sample) => sample.t),
        windowMs: samples.map((sample) => sample.windowMs),
        score: samples.map((sample) => scoreSample(sample)),
        state: samples.map((sample) => sample.conn.state ?? null),
        relayed: samples.map((sample) => sample.conn.relayed ?? null),
        network: samples.map((sample) => sample.conn.network ?? null),
      },
      findings: own,
      issueKinds: own.map((finding) => finding.kind),
      hasIssue: own.some((finding) => SEVERITY_BY_KIND[finding.kind] !== 'info'),
      maxSeverity: maxSeverity ?? null,
    });
  }
  return { calls, findings };
}
