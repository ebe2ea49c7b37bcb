import { type ConnectionPath, readConnectionPath, selectCandidatePairs } from './connection.ts';
import { type RTCStatsLike, readString, type StatsSnapshot } from './snapshot.ts';
import { readTrack, type WindowTrack } from './track.ts';

/**
 * The metrics of one peer connection over one window (PROTOCOL.md §2), before the caller adds
 * `t`, `pc`, `conn.state` and track ids.
 *
 * @example
 * ```ts
 * const measured: StatsWindow = statsWindow(previous, current);
 * const sample = {
 *   t: Date.now(), type: 'call.sample', pc, windowMs: measured.windowMs,
 *   conn: { state: peerConnection.connectionState, ...measured.conn },
 *   tracks: measured.tracks.map(({ key, ...metrics }) => ({ id: trackIds.idFor(key), ...metrics })),
 * };
 * ```
 */
export interface StatsWindow {
  /**
   * `current.takenAt − previous.takenAt` rounded to ms; 0 on a first poll (no window: gauges
   * only, not a sample to emit: the protocol's `windowMs` is 1..600000, which the caller's
   * cadence keeps to).
   */
  windowMs: number;
  /** The selected candidate pair's path; omitted when no pair is selected. */
  conn?: ConnectionPath;
  /** One entry per inbound-rtp and outbound-rtp stream of kind audio or video, in report order (at most 256). */
  tracks: WindowTrack[];
}

/** The most track entries a call sample holds (PROTOCOL_LIMITS.maxTracksPerSample). */
const MAX_TRACKS = 256;

/**
 * The window `[previous.takenAt, current.takenAt]` of one peer connection: counter metrics from
 * the differences between the two snapshots (none on a first poll, for an object that is new in
 * `current`, or after a counter reset), gauges from `current`. A `previous` that is missing or
 * not older than `current` by at least 1 ms makes a first poll. Linear in the number of stats
 * objects; never throws on odd input (a field of the wrong type counts as missing).
 *
 * @param previous - the snapshot the window starts at, `undefined` on the first poll
 * @param current - the snapshot the window ends at
 * @example
 * ```ts
 * const before = toSnapshot(await peerConnection.getStats(), performance.now());
 * // ... one second later
 * const after = toSnapshot(await peerConnection.getStats(), performance.now());
 * const { windowMs, conn, tracks } = statsWindow(before, after);
 * ```
 */
export function statsWindow(previous: StatsSnapshot | undefined, current: StatsSnapshot): StatsWindow {
  const elapsed = Math.round(current.takenAt - (previous ?? current).takenAt);
  const windowMs = elapsed >= 1 ? elapsed : 0;
  const { stats } = current;
  const streams: RTCStatsLike[] = [];
  const pairs: RTCStatsLike[] = [];
  const transports: RTCStatsLike[] = [];
  const remotes = new Map<string, RTCStatsLike>();
  for (const item of stats.values()) {
    if (item.type === 'inbound-rtp' || item.type === 'outbound-rtp') streams.push(item);
    else if (item.type === 'candidate-pair') pairs.push(item);
    else if (item.type === 'transport') transports.push(item);
    else if (item.type === 'remote-inbound-rtp' || item.type === 'remote-outbound-rtp') {
      const localId = readString(item, 'localId');
      if (localId !== undefined) remotes.set(localId, item);
    }
  }
  const selected = selectCandidatePairs(pairs, transports, stats);
  const result: StatsWindow = { windowMs, tracks: [] };
  if (selected.connection !== undefined) result.conn = readConnectionPath(selected.connection, stats);
  const previousStats = windowMs > 0 ? previous?.stats : undefined;
  for (const stream of streams) {
    const track = readTrack(stream, {
      stats,
      previous: previousStats,
      windowMs,
      pair: selected.byTransport.get(stream.transportId as string) ?? selected.connection,
      remote: remotes.get(stream.id),
    });
    if (track !== undefined && result.tracks.push(track) === MAX_TRACKS) break;
  }
  return result;
}
