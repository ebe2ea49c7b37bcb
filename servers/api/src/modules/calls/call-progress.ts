import {
  type CallEvent,
  type CallSample,
  createDetector,
  type DetectorSnapshot,
  type Finding,
  restoreDetector,
  SEVERITY_BY_KIND,
  type Severity,
  snapshotDetector,
  type Thresholds,
} from '@svc/detectors';
import type { CallEvent as ProtocolCallEvent, CallSample as ProtocolCallSample } from '@svc/protocol';
import { higherSeverity, trackSampleSchema } from '@svc/protocol';
import { addToCallScore, type CallScoreTotals, scoreCallTotals, scoreSample } from '@svc/quality-score';
import type { Series } from './series.ts';

// A session's calls, computed as their items arrive: `SessionProgress` is everything the calls
// of a session need from the items seen so far (the detector's snapshot, a few numbers and lists
// per call, the score's running sums), small and independent of the call's length, kept as
// JSON between jobs. Items are added in session order; each batch yields the new samples'
// series as pieces to append. A summary of the progress equals the summary of every item at
// once (`summarizeCalls`), which is the same code from an empty progress.

/** A validated call item and where it is in the session. */
export interface PlacedCallItem {
  seq: number;
  index: number;
  item: ProtocolCallSample | ProtocolCallEvent;
}

/** Where an item is in session order: time, then chunk, then place in the chunk. */
interface ItemPosition {
  t: number;
  seq: number;
  index: number;
}

/** Session order: time, then place (what one chunk or many chunks give alike). */
function compareItems(a: ItemPosition, b: ItemPosition): number {
  return a.t - b.t || a.seq - b.seq || a.index - b.index;
}

/** The position of a placed item. */
function positionOf(entry: PlacedCallItem): ItemPosition {
  return { t: entry.item.t, seq: entry.seq, index: entry.index };
}

/** Items in session order (sorted in place). */
export function sortItems(items: PlacedCallItem[]): PlacedCallItem[] {
  return items.sort((a, b) => compareItems(positionOf(a), positionOf(b)));
}

/** The metrics of a track entry (every field but `id`, `kind`, `dir`), in the protocol's order. */
const TRACK_METRICS: readonly string[] = Object.keys(trackSampleSchema.shape).filter(
  (key) => key !== 'id' && key !== 'kind' && key !== 'dir',
);

/** One track of a call as seen so far. */
interface TrackProgress {
  id: string;
  kind: string;
  dir: string;
  sampleCount: number;
}

/** One peer connection of a session as seen so far: what its `calls` row is computed from. */
interface CallProgress {
  pc: string;
  /** The `t` of its first item, and of its first `pc_created`, `connected` state and `pc_closed`. */
  firstItemAt: number;
  createdAt: number | null;
  connectedAt: number | null;
  closedAt: number | null;
  lastItemAt: number;
  /** A `connected` connection state, in an event or a sample. */
  connected: boolean;
  /** `ice_candidate_error_<code>` of its first candidate error. */
  candidateError: string | null;
  /** Candidate types in order of first appearance (sorted when summarized). */
  localTypes: string[];
  remoteTypes: string[];
  relayed: boolean;
  protocol: string | null;
  networkType: string | null;
  /** Codecs in order of first appearance, and the last video and other codec seen. */
  codecs: string[];
  videoCodec: string | null;
  audioCodec: string | null;
  sampleCount: number;
  /** `scoreCall`'s running sums over its samples. */
  score: CallScoreTotals;
  /** Tracks in order of first appearance. */
  tracks: TrackProgress[];
  /** Pieces of its series stored apart from its rows since they were last written whole. */
  segments: number;
}

/** The format of {@link SessionProgress}: a stored progress of another format is recomputed. */
export const PROGRESS_VERSION = 1;

/** Everything a session's calls need from the items added so far, as JSON. */
export interface SessionProgress {
  version: typeof PROGRESS_VERSION;
  /** `@svc/detectors` over the items so far, before any `advance`. */
  detector: DetectorSnapshot;
  /** Peer connections in order of first appearance. */
  calls: CallProgress[];
  itemCount: number;
  /** The latest `t` of an item. */
  latestItemAt: number | null;
  /** The last item in session order: the next items must come after it. */
  last: ItemPosition | null;
}

/** New samples of one series: the connection's (`track` null) or one track's. */
export interface SeriesPiece {
  pc: string;
  track: string | null;
  /** The index of its first sample in the whole series. */
  firstSample: number;
  series: Series;
}

/** A progress with no item yet, for these thresholds. */
export function startProgress(thresholds: Thresholds): SessionProgress {
  const detector = snapshotDetector(createDetector({ thresholds }));
  if (detector === undefined) throw new Error('@svc/detectors gave no snapshot');
  return { version: PROGRESS_VERSION, detector, calls: [], itemCount: 0, latestItemAt: null, last: null };
}

/** Whether two resolved thresholds are the same. */
export function sameThresholds(a: Thresholds, b: Thresholds): boolean {
  const keys = Object.keys(a) as Array<keyof Thresholds>;
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/** Whether every item comes after the progress's last item (so they can be added to it). */
export function comesAfter(progress: SessionProgress, items: readonly PlacedCallItem[]): boolean {
  const last = progress.last;
  return last === null || items.every((entry) => compareItems(positionOf(entry), last) > 0);
}

function pushDistinct(values: string[], value: string | undefined): void {
  if (value !== undefined && !values.includes(value)) values.push(value);
}

function startCall(pc: string, t: number): CallProgress {
  return {
    pc,
    firstItemAt: t,
    createdAt: null,
    connectedAt: null,
    closedAt: null,
    lastItemAt: t,
    connected: false,
    candidateError: null,
    localTypes: [],
    remoteTypes: [],
    relayed: false,
    protocol: null,
    networkType: null,
    codecs: [],
    videoCodec: null,
    audioCodec: null,
    sampleCount: 0,
    score: addToCallScore(undefined, []),
    tracks: [],
    segments: 0,
  };
}

/** What {@link addItems} did. */
export interface AddedItems {
  /** The new samples' series, to append. */
  pieces: SeriesPiece[];
  /**
   * Peer connections whose score must be summed again from all their samples (a sample's window
   * was longer than every one before): call {@link rescoreCall} for each.
   */
  rescore: string[];
}

/**
 * Adds items, in session order and all after the progress's last item ({@link comesAfter}), to
 * the progress (changed in place): the detector, every call's facts, its score's sums. Returns
 * the series of the new samples, per call and per track. Throws when the stored detector cannot
 * be restored (a progress from another version: recompute it from every item).
 */
export function addItems(progress: SessionProgress, items: readonly PlacedCallItem[]): AddedItems {
  if (items.length === 0) return { pieces: [], rescore: [] };
  const detector = restoreDetector(progress.detector);
  if (detector === undefined) throw new Error('The stored detector snapshot cannot be restored');
  const byPc = new Map<string, Array<ProtocolCallSample | ProtocolCallEvent>>();
  for (const entry of items) {
    const { item } = entry;
    detector.push(item as CallSample | CallEvent);
    progress.latestItemAt = Math.max(progress.latestItemAt ?? item.t, item.t);
    if (item.pc === undefined) continue;
    const own = byPc.get(item.pc) ?? [];
    own.push(item);
    byPc.set(item.pc, own);
  }
  const snapshot = snapshotDetector(detector);
  if (snapshot === undefined) throw new Error('@svc/detectors gave no snapshot');
  progress.detector = snapshot;
  progress.itemCount += items.length;
  progress.last = positionOf(items[items.length - 1] as PlacedCallItem);

  const pieces: SeriesPiece[] = [];
  const rescore: string[] = [];
  for (const [pc, own] of byPc) {
    let call = progress.calls.find((candidate) => candidate.pc === pc);
    if (call === undefined) {
      call = startCall(pc, (own[0] as ProtocolCallSample | ProtocolCallEvent).t);
      progress.calls.push(call);
    }
    const samples = addToCall(call, own);
    if (samples.length === 0) continue;
    const score = addToCallScore(call.score, samples);
    if (score === null) rescore.push(pc);
    else call.score = score;
    pieces.push(...seriesPieces(call, samples));
    call.sampleCount += samples.length;
  }
  return { pieces, rescore };
}

/** Folds a call's new items (in order) into its facts; returns its new samples. */
function addToCall(call: CallProgress, items: ReadonlyArray<ProtocolCallSample | ProtocolCallEvent>) {
  const samples: ProtocolCallSample[] = [];
  for (const item of items) {
    call.lastItemAt = Math.max(call.lastItemAt, item.t);
    if (item.type === 'call.sample') {
      samples.push(item);
      if (item.conn.state === 'connected') call.connected = true;
      for (const track of item.tracks) {
        pushDistinct(call.codecs, track.codec);
        if (track.codec === undefined) continue;
        if (track.kind === 'video') call.videoCodec = track.codec;
        else call.audioCodec = track.codec;
      }
    } else if (item.name === 'pc_created') call.createdAt ??= item.t;
    else if (item.name === 'pc_closed') call.closedAt ??= item.t;
    else if (item.name === 'connection_state' && item.state === 'connected') {
      call.connectedAt ??= item.t;
      call.connected = true;
    } else if (item.name === 'ice_candidate_error')
      call.candidateError ??= `ice_candidate_error_${item.errorCode}`;
    const path =
      item.type === 'call.sample' ? item.conn : item.name === 'candidate_pair_change' ? item : undefined;
    if (path === undefined) continue;
    pushDistinct(call.localTypes, path.localType);
    pushDistinct(call.remoteTypes, path.remoteType);
    if (path.relayed === true) call.relayed = true;
    call.protocol = path.protocol ?? call.protocol;
    call.networkType = path.network ?? call.networkType;
  }
  return samples;
}

/** The new samples' connection series and track series (tracks in order of first appearance). */
function seriesPieces(call: CallProgress, samples: readonly ProtocolCallSample[]): SeriesPiece[] {
  const pieces: SeriesPiece[] = [
    {
      pc: call.pc,
      track: null,
      firstSample: call.sampleCount,
      series: {
        t: samples.map((sample) => sample.t),
        windowMs: samples.map((sample) => sample.windowMs),
        score: samples.map((sample) => scoreSample(sample)),
        state: samples.map((sample) => sample.conn.state ?? null),
        relayed: samples.map((sample) => sample.conn.relayed ?? null),
        network: samples.map((sample) => sample.conn.network ?? null),
      },
    },
  ];
  const rows = new Map<TrackProgress, Array<[number, number, Record<string, unknown>]>>();
  for (const sample of samples) {
    for (const track of sample.tracks) {
      let progress = call.tracks.find((candidate) => candidate.id === track.id);
      if (progress === undefined) {
        progress = { id: track.id, kind: track.kind, dir: track.dir, sampleCount: 0 };
        call.tracks.push(progress);
      }
      const own = rows.get(progress) ?? [];
      own.push([sample.t, sample.windowMs, track as Record<string, unknown>]);
      rows.set(progress, own);
    }
  }
  for (const [track, own] of rows) {
    const series: Series = { t: own.map(([t]) => t), windowMs: own.map(([, windowMs]) => windowMs) };
    for (const metric of TRACK_METRICS) {
      if (!own.some(([, , entry]) => entry[metric] !== undefined)) continue;
      series[metric] = own.map(([, , entry]) => {
        const value = entry[metric];
        return value === undefined ? null : (value as number | string | boolean);
      });
    }
    pieces.push({ pc: call.pc, track: track.id, firstSample: track.sampleCount, series });
    track.sampleCount += own.length;
  }
  return pieces;
}

/** Sums a call's score again from all its samples, in session order (see {@link AddedItems}). */
export function rescoreCall(progress: SessionProgress, pc: string, samples: readonly ProtocolCallSample[]) {
  const call = progress.calls.find((candidate) => candidate.pc === pc);
  if (call !== undefined) call.score = addToCallScore(undefined, samples);
}

/** What processing stores in a call's row, its series apart. */
export interface CallFacts {
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
  trackCount: number;
  findings: Finding[];
  issueKinds: string[];
  /** Findings of severity `low` or higher (`webrtc_relay_fallback` is `info`: not an issue). */
  hasIssue: boolean;
  maxSeverity: string | null;
}

export interface SummarizeOptions {
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

/**
 * The calls of a progress (in order of first appearance) and every finding of `@svc/detectors`
 * over the session's items so far, judged up to `aliveUntil`: exactly `detect()` over every item.
 * The progress is not changed.
 */
export function summarizeProgress(
  progress: SessionProgress,
  options: SummarizeOptions,
): { calls: CallFacts[]; findings: Finding[] } {
  const detector = restoreDetector(progress.detector);
  if (detector === undefined) throw new Error('The stored detector snapshot cannot be restored');
  // As detect(items, { now: aliveUntil }): advanced to the later of `now` and the last item.
  const end = Math.max(options.aliveUntil, progress.latestItemAt ?? Number.NEGATIVE_INFINITY);
  if (Number.isFinite(end)) detector.advance(end);
  const findings = detector.findings();
  const calls = progress.calls.map((call): CallFacts => {
    const own = findings.filter((finding) => finding.pc === call.pc);
    const connectFailure = own.find((finding) => finding.kind === 'webrtc_connect_failure');
    const failedToConnect = connectFailure !== undefined && connectFailure.evidence.everConnected !== true;
    const startedAt = call.createdAt ?? call.firstItemAt;
    const lastItemAt = Math.max(startedAt, call.lastItemAt);
    let state: CallFacts['state'] = 'open';
    let endReason: CallFacts['endReason'] = null;
    let endedAt: number | null = null;
    if (call.closedAt !== null) {
      state = 'closed';
      endReason = 'closed';
      endedAt = call.closedAt;
    } else if (options.clientNow !== undefined && options.clientNow - lastItemAt >= options.inactivityMs) {
      state = 'closed';
      endReason = 'inactive';
      endedAt = lastItemAt;
    }
    let maxSeverity: Severity | undefined;
    for (const finding of own) maxSeverity = higherSeverity(maxSeverity, finding.severity);
    return {
      pc: call.pc,
      startedAt,
      lastItemAt,
      endedAt,
      state,
      endReason,
      durationMs: endedAt === null ? null : Math.max(0, endedAt - startedAt),
      setupMs:
        call.createdAt !== null && call.connectedAt !== null && call.connectedAt >= call.createdAt
          ? call.connectedAt - call.createdAt
          : null,
      connected: call.connected,
      failedToConnect,
      failureReason: failedToConnect ? (call.candidateError ?? connectFailureReason(connectFailure)) : null,
      relayed: call.relayed,
      localTypes: [...call.localTypes].sort(),
      remoteTypes: [...call.remoteTypes].sort(),
      protocol: call.protocol,
      networkType: call.networkType,
      qualityScore: scoreCallTotals(call.score),
      codec: call.videoCodec ?? call.audioCodec,
      codecs: [...call.codecs].sort(),
      sampleCount: call.sampleCount,
      trackCount: call.tracks.length,
      findings: own,
      issueKinds: own.map((finding) => finding.kind),
      hasIssue: own.some((finding) => SEVERITY_BY_KIND[finding.kind] !== 'info'),
      maxSeverity: maxSeverity ?? null,
    };
  });
  return { calls, findings };
}

function connectFailureReason(finding: Finding | undefined): string | null {
  if (finding?.evidence.reason === 'failed') return 'ice_failed';
  if (finding?.evidence.reason === 'timeout') return 'connect_timeout';
  return null;
}
