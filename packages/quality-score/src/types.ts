/**
 * One track entry of a call sample (PROTOCOL.md §2), reduced to the fields the score reads.
 *
 * Every metric describes one window (the sample's `windowMs`), computed from differences of
 * cumulative `getStats()` counters: never pass lifetime totals. A metric the platform does not
 * report is omitted; `undefined`, `null`, `NaN` and non-number values all count as missing.
 * The entry type of `@svc/protocol` is assignable to this interface.
 *
 * @example
 * ```ts
 * import type { TrackSample } from '@svc/quality-score';
 *
 * const inboundVideo: TrackSample = {
 *   kind: 'video', dir: 'in', lossPct: 0.4, fps: 29.8, h: 720, freezes: 0, freezeMs: 0,
 * };
 * ```
 */
export interface TrackSample {
  /** `audio` or `video`; a track of any other kind is not scored. */
  readonly kind: 'audio' | 'video' | (string & {});
  /**
   * `in` (what this device receives) or `out` (what it sends; its loss and RTT come from the
   * remote's reports). Both directions are scored with the same formula.
   */
  readonly dir: 'in' | 'out' | (string & {});
  /** Packet loss over the window, 0..100. */
  readonly lossPct?: number | undefined;
  /** Round trip time of the selected candidate pair, ms. */
  readonly rttMs?: number | undefined;
  /** Interarrival jitter, ms. */
  readonly jitterMs?: number | undefined;
  /** Average jitter buffer delay, ms. */
  readonly jitterBufferMs?: number | undefined;
  /** Audio samples invented by the decoder (concealment), 0..100. Audio only. */
  readonly concealmentPct?: number | undefined;
  /** Number of video freezes in the window. Video only. */
  readonly freezes?: number | undefined;
  /** Total frozen video time in the window, ms. Video only. */
  readonly freezeMs?: number | undefined;
  /** Longest single freeze that ended or is ongoing in the window, ms. Video only. */
  readonly maxFreezeMs?: number | undefined;
  /** Dropped over decoded frames, 0..100. Video only. */
  readonly frameDropPct?: number | undefined;
  /** Frames per second. Video only. */
  readonly fps?: number | undefined;
  /** Frame height, pixels. Video only. */
  readonly h?: number | undefined;
  /** `true` when a live, unmuted track moved no packets in the window. */
  readonly stalled?: boolean | undefined;
}

/**
 * One `call.sample` (PROTOCOL.md §2), reduced to the fields the score reads: the window length
 * and the track entries. The `CallSample` type of `@svc/protocol` is assignable to it.
 *
 * @example
 * ```ts
 * import type { CallSample } from '@svc/quality-score';
 *
 * const sample: CallSample = {
 *   windowMs: 5000,
 *   tracks: [{ kind: 'audio', dir: 'in', lossPct: 0.2, rttMs: 40, jitterMs: 5 }],
 * };
 * ```
 */
export interface CallSample {
  /** Length of the window `[t - windowMs, t]` the metrics describe, ms. */
  readonly windowMs: number;
  /** The tracks of the peer connection in this window. */
  readonly tracks: readonly TrackSample[];
}
