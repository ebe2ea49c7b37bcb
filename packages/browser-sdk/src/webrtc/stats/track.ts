import { type RTCStatsLike, readDelta, readNumber, readString } from './snapshot.ts';

/**
 * One track entry of a call sample (PROTOCOL.md §2) as the stats give it: `key` in place of the
 * opaque `id` (the caller maps keys to ids), then every metric the browser reports for the
 * window, each omitted when it does not. Structurally the `TrackSample` of `@svc/protocol` once
 * `key` is swapped for `id`.
 *
 * @example
 * ```ts
 * const toEntry = ({ key, ...metrics }: WindowTrack) => ({ id: trackIds.idFor(key), ...metrics });
 * ```
 */
export interface WindowTrack {
  /** `${kind}:${dir}:${ssrc}` (the stats id when there is no ssrc): stable within one peer connection. */
  key: string;
  kind: 'audio' | 'video';
  dir: 'in' | 'out';
  lossPct?: number;
  rttMs?: number;
  jitterMs?: number;
  jitterBufferMs?: number;
  freezes?: number;
  freezeMs?: number;
  maxFreezeMs?: number;
  frameDropPct?: number;
  concealmentPct?: number;
  audioLevel?: number;
  fps?: number;
  w?: number;
  h?: number;
  kbps?: number;
  availableOutgoingKbps?: number;
  availableIncomingKbps?: number;
  qualityLimitation?: 'none' | 'cpu' | 'bandwidth' | 'other';
  limitedByCpuPct?: number;
  limitedByBandwidthPct?: number;
  nackCount?: number;
  pliCount?: number;
  keyFrames?: number;
  codec?: string;
  stalled?: boolean;
}

/** What a track's metrics are read against. */
export interface TrackContext {
  /** The current snapshot's stats. */
  stats: ReadonlyMap<string, RTCStatsLike>;
  /** The previous snapshot's stats; `undefined` when there is no window (a first poll). */
  previous: ReadonlyMap<string, RTCStatsLike> | undefined;
  windowMs: number;
  /** The selected candidate pair of the track's transport. */
  pair: RTCStatsLike | undefined;
  /** The remote's report on the stream: remote-inbound-rtp for `out`, remote-outbound-rtp for `in`. */
  remote: RTCStatsLike | undefined;
}

type NumberMetric = {
  [Name in keyof WindowTrack]-?: WindowTrack[Name] extends number | undefined ? Name : never;
}[keyof WindowTrack];

// The protocol's bounds (PROTOCOL_LIMITS of @svc/protocol, which the browser bundle does not load).
const LATENCY_MS = 60_000;
const KBPS = 10_000_000;
const FRAMES_PER_SECOND = 1_000;
const DIMENSION = 16_384;
const COUNT = 2_147_483_647;
const DURATION_MS = 2_678_400_000;

const LIMITATIONS: readonly string[] = ['none', 'cpu', 'bandwidth', 'other'];
const MIME_TYPE = /^[a-z]+\/[A-Za-z0-9][A-Za-z0-9.+_-]*$/;

/**
 * The {@link WindowTrack.key} of an inbound-rtp or outbound-rtp stream: the collector also keys
 * a `MediaStreamTrack`'s events by it, so they name the same track as the samples.
 *
 * @example
 * ```ts
 * trackKey('video', true, { id: 'IT01V1', type: 'inbound-rtp', timestamp: 0, ssrc: 1234 }); // 'video:in:1234'
 * ```
 */
export function trackKey(kind: string, inbound: boolean, rtp: RTCStatsLike): string {
  return `${kind}:${inbound ? 'in' : 'out'}:${readNumber(rtp, 'ssrc') ?? rtp.id}`;
}

/**
 * Sets a metric rounded to `digits` decimals when it is a number in 0..`maximum`; anything else
 * (missing, NaN, infinite, negative, beyond the protocol's bound) leaves the metric out.
 */
function put(
  track: WindowTrack,
  metric: NumberMetric,
  value: number | undefined,
  maximum: number,
  digits = 0,
) {
  if (value === undefined || !(value >= 0)) return;
  const scale = 10 ** digits;
  const rounded = Math.round(value * scale) / scale;
  if (rounded <= maximum) track[metric] = rounded;
}

/** `part / whole`; `undefined` when either is missing or `whole` is not above 0. */
function quotient(part: number | undefined, whole: number | undefined): number | undefined {
  return part === undefined || whole === undefined || whole <= 0 ? undefined : part / whole;
}

/** `part / whole` as a percentage, capped at 100 (a counter may run ahead of its base). */
function percentage(part: number | undefined, whole: number | undefined): number | undefined {
  const share = quotient(part, whole);
  return share === undefined ? undefined : Math.min(100, share * 100);
}

function times(value: number | undefined, factor: number): number | undefined {
  return value === undefined ? undefined : value * factor;
}

/** Loss over the window from both counters: lost / (received + lost). */
function lossPercentage(lost: number | undefined, received: number | undefined): number | undefined {
  return percentage(lost, lost === undefined || received === undefined ? undefined : lost + received);
}

/**
 * Loss of what this device sends, from the remote receiver's reports (remote-inbound-rtp): from
 * its `packetsReceived`/`packetsLost` counters where the browser reports both, else its
 * `fractionLost` (the share lost since the receiver's previous report; Chromium reports no
 * `packetsReceived`) when a new report arrived within the window (its timestamp changed).
 */
function remoteLossPercentage(
  remote: RTCStatsLike | undefined,
  previous: ReadonlyMap<string, RTCStatsLike> | undefined,
): number | undefined {
  if (remote === undefined || previous === undefined) return undefined;
  const before = previous.get(remote.id);
  const received = readDelta(remote, before, 'packetsReceived');
  if (received !== undefined) return lossPercentage(readDelta(remote, before, 'packetsLost'), received);
  const fraction = readNumber(remote, 'fractionLost');
  return before?.timestamp === remote.timestamp ? undefined : times(fraction, 100);
}

/** Shares of `qualityLimitationDurations` spent limited by CPU and by bandwidth in the window. */
function limitationPercentages(
  current: RTCStatsLike,
  previous: RTCStatsLike | undefined,
): { cpu?: number | undefined; bandwidth?: number | undefined } {
  const now = current.qualityLimitationDurations;
  const before = previous?.qualityLimitationDurations;
  if (typeof now !== 'object' || now === null || typeof before !== 'object' || before === null) return {};
  const spent: Record<string, number> = {};
  let total = 0;
  for (const [reason, seconds] of Object.entries(now)) {
    const earlier: unknown = (before as Record<string, unknown>)[reason];
    if (typeof seconds !== 'number' || typeof earlier !== 'number') continue;
    if (!(seconds >= earlier)) return {};
    spent[reason] = seconds - earlier;
    total += seconds - earlier;
  }
  return { cpu: percentage(spent.cpu, total), bandwidth: percentage(spent.bandwidth, total) };
}

/**
 * Freezes of inbound video. From `freezeCount`/`totalFreezesDuration` where the browser reports
 * them (Chromium counts a freeze when it ends); `maxFreezeMs` only when exactly one freeze ended
 * in the window (it is then that freeze). Where `freezeCount` is missing, from frame counters: a
 * window in which packets arrived but `framesDecoded` did not advance is frozen throughout (one
 * freeze of `windowMs`, also its `maxFreezeMs`; a freeze over several windows counts in each); a
 * window in which frames were decoded reports no freeze (a lower bound: a short freeze between
 * decoded frames is not visible in counters); a window with neither reports nothing (stalled).
 */
function putFreezes(
  track: WindowTrack,
  delta: (field: string) => number | undefined,
  current: RTCStatsLike,
  windowMs: number,
) {
  if (readNumber(current, 'freezeCount') !== undefined) {
    const freezes = delta('freezeCount');
    const freezeMs = times(delta('totalFreezesDuration'), 1000);
    put(track, 'freezes', freezes, COUNT);
    put(track, 'freezeMs', freezeMs, DURATION_MS);
    if (freezes === 1) put(track, 'maxFreezeMs', freezeMs, DURATION_MS);
    return;
  }
  const decoded = delta('framesDecoded');
  const packets = delta('packetsReceived');
  if (decoded === undefined || packets === undefined || (decoded === 0 && packets === 0)) return;
  const frozen = decoded === 0;
  track.freezes = frozen ? 1 : 0;
  put(track, 'freezeMs', frozen ? windowMs : 0, DURATION_MS);
  if (frozen) put(track, 'maxFreezeMs', windowMs, DURATION_MS);
}

/**
 * Reads one inbound-rtp or outbound-rtp object into a track entry over the window; `undefined`
 * when its kind is neither audio nor video. Counter metrics need the same object (same id, type
 * and ssrc) in the previous snapshot; gauges come from the current one. Rounding: percentages
 * to 2 decimals, latencies (`rttMs`, `jitterMs`, `jitterBufferMs`), `fps`, `kbps` and the
 * `available...Kbps` to 1, `audioLevel` to 3, durations, counts and `w`/`h` to integers.
 *
 * Sources where PROTOCOL.md names none: an `out` track's `jitterMs` is the remote receiver's
 * (remote-inbound-rtp `jitter`) and its `audioLevel` the microphone's (media-source);
 * `availableOutgoingKbps` goes on `out` tracks, `availableIncomingKbps` on `in` tracks; `fps`
 * falls back to `framesDecoded` (in) or `framesSent` (out) over the window; `keyFrames` counts
 * `keyFramesDecoded` (in) or `keyFramesEncoded` (out); `limitedBy...Pct` divide by the sum of the
 * `qualityLimitationDurations` differences (the encoder's own clock) rather than `windowMs`.
 */
export function readTrack(rtp: RTCStatsLike, context: TrackContext): WindowTrack | undefined {
  const kind = readString(rtp, 'kind') ?? readString(rtp, 'mediaType');
  if (kind !== 'audio' && kind !== 'video') return undefined;
  const { stats, windowMs, pair, remote } = context;
  const inbound = rtp.type === 'inbound-rtp';
  const video = kind === 'video';
  const ssrc = readNumber(rtp, 'ssrc');
  const earlier = context.previous?.get(rtp.id);
  const previous = earlier?.type === rtp.type && readNumber(earlier, 'ssrc') === ssrc ? earlier : undefined;
  const delta = (field: string) => readDelta(rtp, previous, field);
  const gauge = (field: string) => readNumber(rtp, field);
  const rate = (amount: number | undefined) => (windowMs > 0 ? times(amount, 1000 / windowMs) : undefined);
  const track: WindowTrack = {
    key: trackKey(kind, inbound, rtp),
    kind,
    dir: inbound ? 'in' : 'out',
  };

  const lossPct = inbound
    ? lossPercentage(delta('packetsLost'), delta('packetsReceived'))
    : remoteLossPercentage(remote, context.previous);
  put(track, 'lossPct', lossPct, 100, 2);
  const roundTrip = readNumber(pair, 'currentRoundTripTime') ?? readNumber(remote, 'roundTripTime');
  put(track, 'rttMs', times(roundTrip, 1000), LATENCY_MS, 1);
  put(track, 'jitterMs', times(readNumber(inbound ? rtp : remote, 'jitter'), 1000), LATENCY_MS, 1);
  if (inbound) {
    const delay = quotient(delta('jitterBufferDelay'), delta('jitterBufferEmittedCount'));
    put(track, 'jitterBufferMs', times(delay, 1000), LATENCY_MS, 1);
    if (video) {
      putFreezes(track, delta, rtp, windowMs);
      put(track, 'frameDropPct', percentage(delta('framesDropped'), delta('framesReceived')), 100, 2);
    } else {
      put(
        track,
        'concealmentPct',
        percentage(delta('concealedSamples'), delta('totalSamplesReceived')),
        100,
        2,
      );
    }
  }
  if (!video) {
    const source = inbound ? rtp : stats.get(rtp.mediaSourceId as string);
    put(track, 'audioLevel', readNumber(source, 'audioLevel'), 1, 3);
  } else {
    const fps = gauge('framesPerSecond') ?? rate(delta(inbound ? 'framesDecoded' : 'framesSent'));
    put(track, 'fps', fps, FRAMES_PER_SECOND, 1);
    put(track, 'w', gauge('frameWidth'), DIMENSION);
    put(track, 'h', gauge('frameHeight'), DIMENSION);
  }
  put(track, 'kbps', rate(times(delta(inbound ? 'bytesReceived' : 'bytesSent'), 8 / 1000)), KBPS, 1);
  if (inbound)
    put(track, 'availableIncomingKbps', times(readNumber(pair, 'availableIncomingBitrate'), 1e-3), KBPS, 1);
  else
    put(track, 'availableOutgoingKbps', times(readNumber(pair, 'availableOutgoingBitrate'), 1e-3), KBPS, 1);
  if (!inbound && video) {
    const reason = readString(rtp, 'qualityLimitationReason');
    if (reason !== undefined && LIMITATIONS.includes(reason))
      track.qualityLimitation = reason as WindowTrack['qualityLimitation'];
    const limited = limitationPercentages(rtp, previous);
    put(track, 'limitedByCpuPct', limited.cpu, 100, 2);
    put(track, 'limitedByBandwidthPct', limited.bandwidth, 100, 2);
  }
  put(track, 'nackCount', delta('nackCount'), COUNT);
  put(track, 'pliCount', delta('pliCount'), COUNT);
  put(track, 'keyFrames', delta(inbound ? 'keyFramesDecoded' : 'keyFramesEncoded'), COUNT);
  const codec = readString(stats.get(rtp.codecId as string), 'mimeType');
  if (codec !== undefined && codec.length <= 64 && MIME_TYPE.test(codec)) track.codec = codec;
  // Stalled: packet counters exist in both snapshots and did not move. An outbound stream the
  // application paused (`active: false`) is not live. Whether a track is muted is not in the
  // stats: the caller leaves `stalled` out for muted tracks.
  const packets = delta(inbound ? 'packetsReceived' : 'packetsSent');
  if (packets !== undefined && (inbound || rtp.active !== false)) track.stalled = packets === 0;
  return track;
}
