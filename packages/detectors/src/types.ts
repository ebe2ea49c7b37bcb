import type { TrackSample as ScoredTrackSample } from '@svc/quality-score';
import type { DetectorKind, Severity } from './kinds.ts';

/**
 * One track entry of a `call.sample` (PROTOCOL.md §2): the metrics `@svc/quality-score` reads
 * (loss, RTT, jitter, concealment, freezes, frame rate, height, `stalled`, ...) plus what only
 * the detectors read. Every metric describes the sample's window `[t - windowMs, t]`; a metric
 * the platform does not report is omitted (`undefined`, `null`, `NaN` and non-numbers all count
 * as missing, and a missing metric never fires a detector). The track entry type of
 * `@svc/protocol` is assignable to this interface. Which detector reads which metric is in the
 * README's rules table.
 *
 * @example
 * ```ts
 * import type { TrackSample } from '@svc/detectors';
 *
 * const inboundVideo: TrackSample = {
 *   id: 'trk_3f9a', kind: 'video', dir: 'in', lossPct: 0.4, fps: 29.8, h: 720, freezes: 0, freezeMs: 0,
 * };
 * ```
 */
export interface TrackSample extends ScoredTrackSample {
  /** Opaque track identifier, stable per track within the session: sustained runs are per `id`. */
  readonly id: string;
  /** Why an outbound video encoder is limited, at the end of the window (`webrtc_cpu_limited`). */
  readonly qualityLimitation?: 'none' | 'cpu' | 'bandwidth' | 'other' | (string & {}) | undefined;
  /** Share of the window the encoder was limited by CPU, 0..100 (`webrtc_cpu_limited`). */
  readonly limitedByCpuPct?: number | undefined;
}

/**
 * The `conn` of a call sample, reduced to what the detectors read.
 *
 * @example
 * ```ts
 * import type { ConnectionInfo } from '@svc/detectors';
 *
 * const conn: ConnectionInfo = { state: 'connected', localType: 'relay', remoteType: 'host', protocol: 'udp', relayed: true };
 * ```
 */
export interface ConnectionInfo {
  /** RTCPeerConnectionState at the end of the window: `connected` and `failed` are read. */
  readonly state?: string | undefined;
  /** `true` when the selected candidate pair goes through a TURN relay (`webrtc_relay_fallback`). */
  readonly relayed?: boolean | undefined;
  /** Local candidate type (evidence only). */
  readonly localType?: string | undefined;
  /** Remote candidate type (evidence only). */
  readonly remoteType?: string | undefined;
  /** Transport protocol (evidence only). */
  readonly protocol?: string | undefined;
}

/**
 * A `call.sample` (PROTOCOL.md §2): one peer connection over the window `[t - windowMs, t]`.
 * `@svc/protocol`'s `CallSample` is assignable to it without conversion.
 *
 * @example
 * ```ts
 * import type { CallSample } from '@svc/detectors';
 *
 * const sample: CallSample = {
 *   t: 1763700005000, type: 'call.sample', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', windowMs: 5000,
 *   conn: { state: 'connected', relayed: false },
 *   tracks: [{ id: 'trk_a1', kind: 'audio', dir: 'in', lossPct: 0.2, concealmentPct: 0.1 }],
 * };
 * ```
 */
export interface CallSample {
  /** End of the window, ms since the Unix epoch (client clock). */
  readonly t: number;
  readonly type: 'call.sample';
  /** The peer connection. */
  readonly pc: string;
  /** Length of the window, ms. */
  readonly windowMs: number;
  /** Connection state and selected path. */
  readonly conn: ConnectionInfo;
  /** The tracks of the peer connection in this window. */
  readonly tracks: readonly TrackSample[];
}

/**
 * A `call.event` (PROTOCOL.md §3), as one structural type with the fields the detectors read.
 * Every member of `@svc/protocol`'s `CallEvent` union is assignable to it without conversion.
 * Events the detectors do not use (`ice_state`, `codec_change`, `media_acquired`, ...) are
 * accepted and ignored.
 *
 * @example
 * ```ts
 * import type { CallEvent } from '@svc/detectors';
 *
 * const closed: CallEvent = { t: 1763700060000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'pc_closed', durationMs: 60000 };
 * ```
 */
export interface CallEvent {
  /** When it happened, ms since the Unix epoch (client clock). */
  readonly t: number;
  readonly type: 'call.event';
  /** The event name: `pc_created`, `connection_state`, `candidate_pair_change`, `media_error`, ... */
  readonly name: string;
  /** The peer connection; absent on `media_*` and `device_*` events that belong to none. */
  readonly pc?: string | undefined;
  /** `pc_created`, `connection_state`: the (new) connection state. */
  readonly state?: string | undefined;
  /** `pc_created`: false when the peer connection is counted but not sampled. */
  readonly tracked?: boolean | undefined;
  /** `candidate_pair_change`: whether the new path goes through a TURN relay. */
  readonly relayed?: boolean | undefined;
  /** `candidate_pair_change`: true for the first selected pair of the connection. */
  readonly initial?: boolean | undefined;
  /** `candidate_pair_change`: local candidate type (evidence only). */
  readonly localType?: string | undefined;
  /** `candidate_pair_change`: remote candidate type (evidence only). */
  readonly remoteType?: string | undefined;
  /** `candidate_pair_change`: transport protocol (evidence only). */
  readonly protocol?: string | undefined;
  /** `track_*`: the track id (the `id` of its track entries). */
  readonly track?: string | undefined;
  /** `track_*`: `audio` | `video`; `media_error`: `audio` | `video` | `screen`. */
  readonly kind?: string | undefined;
  /** `track_*`: `in` | `out`. */
  readonly dir?: string | undefined;
  /** `track_unmuted`: how long the track was frozen (muted), ms. */
  readonly freezeMs?: number | undefined;
  /** `media_error`: the DOMException name (`NotAllowedError`, `NotReadableError`, ...). */
  readonly errorName?: string | undefined;
  /** `pc_closed`: time since `pc_created`, ms. */
  readonly durationMs?: number | undefined;
}

/**
 * What the detectors consume: the `call.*` events of one session.
 *
 * @example
 * ```ts
 * import type { DetectorItem } from '@svc/detectors';
 *
 * const items: DetectorItem[] = events.filter((event) => event.type === 'call.sample' || event.type === 'call.event');
 * ```
 */
export type DetectorItem = CallSample | CallEvent;

/**
 * One detected problem. `t` is when the condition was first met (for sustained rules the end of
 * the required duration, which can be earlier than the sample that proved it). `pc` is absent
 * only for capture errors that belong to no peer connection; `track` names the track that caused
 * it when one did. Evidence values are numbers, strings or booleans only (the README lists every
 * kind's keys).
 *
 * @example
 * ```ts
 * import type { Finding } from '@svc/detectors';
 *
 * const finding: Finding = {
 *   kind: 'webrtc_packet_loss', severity: 'medium', t: 1763700010000, pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', track: 'trk_a1',
 *   evidence: { lossPct: 8.2, sustainedMs: 10000, threshold: 5, mediaKind: 'audio', dir: 'in' },
 * };
 * ```
 */
export interface Finding {
  readonly kind: DetectorKind;
  readonly severity: Severity;
  readonly t: number;
  readonly pc?: string;
  readonly track?: string;
  readonly evidence: Readonly<Record<string, number | string | boolean>>;
}
