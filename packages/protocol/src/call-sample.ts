import { z } from 'zod';
import { idSchema } from './ids.ts';
import { PROTOCOL_LIMITS } from './limits.ts';
import { boundedText, countSchema, durationSchema, percentageSchema, timestampSchema } from './scalars.ts';

/**
 * RTCPeerConnectionState: `new` | `connecting` | `connected` | `disconnected` | `failed` | `closed`.
 *
 * @example
 * ```ts
 * peerConnectionStateSchema.parse('connected');
 * ```
 */
export const peerConnectionStateSchema = z.enum([
  'new',
  'connecting',
  'connected',
  'disconnected',
  'failed',
  'closed',
]);

/**
 * A peer connection state.
 *
 * @example
 * ```ts
 * const state: PeerConnectionState = 'failed';
 * ```
 */
export type PeerConnectionState = z.infer<typeof peerConnectionStateSchema>;

/**
 * An ICE candidate type: `host` | `srflx` | `prflx` | `relay`.
 *
 * @example
 * ```ts
 * candidateTypeSchema.parse('relay');
 * ```
 */
export const candidateTypeSchema = z.enum(['host', 'srflx', 'prflx', 'relay']);

/**
 * An ICE candidate type.
 *
 * @example
 * ```ts
 * const type: CandidateType = 'srflx';
 * ```
 */
export type CandidateType = z.infer<typeof candidateTypeSchema>;

/**
 * The transport protocol of a candidate: `udp` | `tcp` | `tls`.
 *
 * @example
 * ```ts
 * transportProtocolSchema.parse('udp');
 * ```
 */
export const transportProtocolSchema = z.enum(['udp', 'tcp', 'tls']);

/**
 * A candidate's transport protocol.
 *
 * @example
 * ```ts
 * const protocol: TransportProtocol = 'tcp';
 * ```
 */
export type TransportProtocol = z.infer<typeof transportProtocolSchema>;

/**
 * The network type of the local candidate: `wifi` | `cellular` | `ethernet` | `vpn` | `unknown`.
 *
 * @example
 * ```ts
 * networkTypeSchema.parse('wifi');
 * ```
 */
export const networkTypeSchema = z.enum(['wifi', 'cellular', 'ethernet', 'vpn', 'unknown']);

/**
 * A network type.
 *
 * @example
 * ```ts
 * const network: NetworkType = 'cellular';
 * ```
 */
export type NetworkType = z.infer<typeof networkTypeSchema>;

/**
 * A media kind of a track: `audio` | `video`.
 *
 * @example
 * ```ts
 * trackKindSchema.parse('video');
 * ```
 */
export const trackKindSchema = z.enum(['audio', 'video']);

/**
 * A track's media kind.
 *
 * @example
 * ```ts
 * const kind: TrackKind = 'audio';
 * ```
 */
export type TrackKind = z.infer<typeof trackKindSchema>;

/**
 * A track's direction: `in` (received) | `out` (sent).
 *
 * @example
 * ```ts
 * trackDirectionSchema.parse('in');
 * ```
 */
export const trackDirectionSchema = z.enum(['in', 'out']);

/**
 * A track's direction.
 *
 * @example
 * ```ts
 * const direction: TrackDirection = 'out';
 * ```
 */
export type TrackDirection = z.infer<typeof trackDirectionSchema>;

/**
 * A codec MIME type as `getStats()` reports it (`audio/opus`, `video/VP8`, `video/H264`, ...).
 *
 * @example
 * ```ts
 * codecSchema.parse('video/VP8');
 * ```
 */
export const codecSchema = z
  .string()
  .max(64)
  .regex(/^[a-z]+\/[A-Za-z0-9][A-Za-z0-9.+_-]*$/);

/**
 * An opaque track identifier, stable per track within the session (1..128 characters).
 *
 * @example
 * ```ts
 * trackIdSchema.parse('trk_3f9a');
 * ```
 */
export const trackIdSchema = boundedText(128);

/**
 * The `conn` of a call sample: the peer connection `state` and, once a candidate pair is
 * selected, its candidate types, `protocol`, whether it is `relayed` and the local `network`
 * type. Everything but `state` is omitted when the platform does not report it.
 *
 * @example
 * ```ts
 * connectionInfoSchema.parse({ state: 'connected', localType: 'host', remoteType: 'srflx', protocol: 'udp', relayed: false, network: 'wifi' });
 * ```
 */
export const connectionInfoSchema = z.object({
  state: peerConnectionStateSchema,
  localType: candidateTypeSchema.optional(),
  remoteType: candidateTypeSchema.optional(),
  protocol: transportProtocolSchema.optional(),
  relayed: z.boolean().optional(),
  network: networkTypeSchema.optional(),
});

/**
 * The `conn` of a call sample.
 *
 * @example
 * ```ts
 * const isRelayed = (conn: ConnectionInfo) => conn.relayed === true;
 * ```
 */
export type ConnectionInfo = z.infer<typeof connectionInfoSchema>;

const latencySchema = z.number().min(0).max(PROTOCOL_LIMITS.maxLatencyMs);
const kbpsSchema = z.number().min(0).max(PROTOCOL_LIMITS.maxKbps);
const dimensionSchema = z.int().min(0).max(PROTOCOL_LIMITS.maxDimension);

/**
 * One track entry of a call sample (PROTOCOL.md §2). `id`, `kind` and `dir` are required; every
 * metric describes the sample's window and is omitted when the platform does not report it.
 * Percentages are 0..100, `audioLevel` 0..1, counts and `w`/`h` integers, `freezeMs` and
 * `maxFreezeMs` integer milliseconds; `rttMs`, `jitterMs` and `jitterBufferMs` are latencies and
 * may carry fractions of a millisecond.
 *
 * @example
 * ```ts
 * import { trackSampleSchema } from '@svc/protocol';
 *
 * trackSampleSchema.parse({ id: 'trk_3f9a', kind: 'video', dir: 'in', lossPct: 0.4, fps: 29.8, w: 1280, h: 720, freezes: 0, freezeMs: 0, kbps: 1830, codec: 'video/VP8', stalled: false });
 * ```
 */
export const trackSampleSchema = z.object({
  id: trackIdSchema,
  kind: trackKindSchema,
  dir: trackDirectionSchema,
  lossPct: percentageSchema.optional(),
  rttMs: latencySchema.optional(),
  jitterMs: latencySchema.optional(),
  jitterBufferMs: latencySchema.optional(),
  freezes: countSchema.optional(),
  freezeMs: durationSchema.optional(),
  maxFreezeMs: durationSchema.optional(),
  frameDropPct: percentageSchema.optional(),
  concealmentPct: percentageSchema.optional(),
  audioLevel: z.number().min(0).max(1).optional(),
  fps: z.number().min(0).max(PROTOCOL_LIMITS.maxFramesPerSecond).optional(),
  w: dimensionSchema.optional(),
  h: dimensionSchema.optional(),
  kbps: kbpsSchema.optional(),
  availableOutgoingKbps: kbpsSchema.optional(),
  availableIncomingKbps: kbpsSchema.optional(),
  qualityLimitation: z.enum(['none', 'cpu', 'bandwidth', 'other']).optional(),
  limitedByCpuPct: percentageSchema.optional(),
  limitedByBandwidthPct: percentageSchema.optional(),
  nackCount: countSchema.optional(),
  pliCount: countSchema.optional(),
  keyFrames: countSchema.optional(),
  codec: codecSchema.optional(),
  stalled: z.boolean().optional(),
});

/**
 * One track entry of a call sample.
 *
 * @example
 * ```ts
 * const isInboundVideo = (track: TrackSample) => track.kind === 'video' && track.dir === 'in';
 * ```
 */
export type TrackSample = z.infer<typeof trackSampleSchema>;

/**
 * The 13 detector kinds of `@svc/detectors` (PROTOCOL.md §5).
 *
 * @example
 * ```ts
 * DETECTOR_KINDS.includes('webrtc_freeze'); // true
 * ```
 */
export const DETECTOR_KINDS = [
  'webrtc_connect_failure',
  'webrtc_one_way_media',
  'webrtc_media_permission_denied',
  'webrtc_device_unavailable',
  'webrtc_freeze',
  'webrtc_audio_dropout',
  'webrtc_reconnect_storm',
  'webrtc_call_abandoned',
  'webrtc_packet_loss',
  'webrtc_high_latency',
  'webrtc_cpu_limited',
  'webrtc_low_resolution',
  'webrtc_relay_fallback',
] as const;

/**
 * A known detector kind (strict: only the 13 kinds of {@link DETECTOR_KINDS}).
 *
 * @example
 * ```ts
 * detectorKindSchema.parse('webrtc_packet_loss');
 * ```
 */
export const detectorKindSchema = z.enum(DETECTOR_KINDS);

/**
 * A detector kind.
 *
 * @example
 * ```ts
 * const kind: DetectorKind = 'webrtc_relay_fallback';
 * ```
 */
export type DetectorKind = z.infer<typeof detectorKindSchema>;

/**
 * A `call.sample` (PROTOCOL.md §2): one per tracked peer connection per emitted tick; every
 * metric describes the window `[t - windowMs, t]`. `cross` lists the detector kinds whose
 * threshold crossing caused the emission; it accepts any `webrtc_<word>` kind so an SDK that
 * ships a new detector does not fail ingest (consumers ignore kinds they do not know).
 *
 * @example
 * ```ts
 * import { callSampleSchema } from '@svc/protocol';
 *
 * const sample = callSampleSchema.parse({
 *   t: 1763700005000, type: 'call.sample', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', windowMs: 5000,
 *   conn: { state: 'connected', localType: 'host', remoteType: 'srflx', protocol: 'udp', relayed: false, network: 'wifi' },
 *   tracks: [{ id: 'trk_3f9a', kind: 'video', dir: 'in', lossPct: 0.4 }],
 * });
 * ```
 */
export const callSampleSchema = z.object({
  t: timestampSchema,
  type: z.literal('call.sample'),
  pc: idSchema('pc'),
  windowMs: z.int().min(1).max(PROTOCOL_LIMITS.maxWindowMs),
  conn: connectionInfoSchema,
  tracks: z.array(trackSampleSchema).max(PROTOCOL_LIMITS.maxTracksPerSample),
  score: z.int().min(0).max(100).optional(),
  cross: z
    .array(z.string().regex(/^webrtc_[a-z0-9_]{1,56}$/))
    .max(PROTOCOL_LIMITS.maxCrossedDetectors)
    .optional(),
});

/**
 * A `call.sample` event.
 *
 * @example
 * ```ts
 * const videoIn = (sample: CallSample) => sample.tracks.filter((track) => track.kind === 'video' && track.dir === 'in');
 * ```
 */
export type CallSample = z.infer<typeof callSampleSchema>;
