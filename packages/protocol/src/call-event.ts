import { z } from 'zod';
import {
  candidateTypeSchema,
  codecSchema,
  networkTypeSchema,
  peerConnectionStateSchema,
  trackDirectionSchema,
  trackIdSchema,
  trackKindSchema,
  transportProtocolSchema,
} from './call-sample.ts';
import { idSchema } from './ids.ts';
import { PROTOCOL_LIMITS } from './limits.ts';
import { boundedText, durationSchema, timestampSchema } from './scalars.ts';

/** Fields of every call event that belongs to a peer connection. */
const peerConnectionFields = {
  t: timestampSchema,
  type: z.literal('call.event'),
  pc: idSchema('pc'),
};

/** Fields of the capture and device events, which may belong to no peer connection. */
const captureFields = {
  t: timestampSchema,
  type: z.literal('call.event'),
  pc: idSchema('pc').optional(),
};

const dimensionSchema = z.int().min(0).max(PROTOCOL_LIMITS.maxDimension);
const deviceCountSchema = z.int().min(0).max(PROTOCOL_LIMITS.maxDevices);

/**
 * RTCIceConnectionState: `new` | `checking` | `connected` | `completed` | `disconnected` | `failed` | `closed`.
 *
 * @example
 * ```ts
 * iceConnectionStateSchema.parse('checking');
 * ```
 */
export const iceConnectionStateSchema = z.enum([
  'new',
  'checking',
  'connected',
  'completed',
  'disconnected',
  'failed',
  'closed',
]);

/**
 * RTCIceGatheringState: `new` | `gathering` | `complete`.
 *
 * @example
 * ```ts
 * iceGatheringStateSchema.parse('complete');
 * ```
 */
export const iceGatheringStateSchema = z.enum(['new', 'gathering', 'complete']);

/**
 * RTCSignalingState: `stable` | `have-local-offer` | `have-remote-offer` | `have-local-pranswer` | `have-remote-pranswer` | `closed`.
 *
 * @example
 * ```ts
 * signalingStateSchema.parse('have-local-offer');
 * ```
 */
export const signalingStateSchema = z.enum([
  'stable',
  'have-local-offer',
  'have-remote-offer',
  'have-local-pranswer',
  'have-remote-pranswer',
  'closed',
]);

/**
 * `pc_created`: a peer connection was constructed. `iceServers` is a count (servers are never
 * recorded); `tracked` is false when over `maxPeerConnections` (counted, not sampled).
 *
 * @example
 * ```ts
 * peerConnectionCreatedEventSchema.parse({ t: 1763700000000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'pc_created', state: 'new', iceServers: 2, tracked: true });
 * ```
 */
export const peerConnectionCreatedEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('pc_created'),
  state: peerConnectionStateSchema,
  iceServers: z.int().min(0).max(PROTOCOL_LIMITS.maxIceServers),
  tracked: z.boolean(),
});

/**
 * `connection_state`: the peer connection state changed from `prev` (after `prevMs` in it) to `state`.
 *
 * @example
 * ```ts
 * connectionStateEventSchema.parse({ t: 1763700000800, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'connection_state', state: 'connected', prev: 'connecting', prevMs: 640 });
 * ```
 */
export const connectionStateEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('connection_state'),
  state: peerConnectionStateSchema,
  prev: peerConnectionStateSchema,
  prevMs: durationSchema,
});

/**
 * `ice_state`: the ICE connection state changed.
 *
 * @example
 * ```ts
 * iceStateEventSchema.parse({ t: 1763700000800, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'ice_state', state: 'connected', prev: 'checking', prevMs: 610 });
 * ```
 */
export const iceStateEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('ice_state'),
  state: iceConnectionStateSchema,
  prev: iceConnectionStateSchema,
  prevMs: durationSchema,
});

/**
 * `ice_gathering`: the ICE gathering state changed.
 *
 * @example
 * ```ts
 * iceGatheringEventSchema.parse({ t: 1763700000100, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'ice_gathering', state: 'gathering', prev: 'new', prevMs: 12 });
 * ```
 */
export const iceGatheringEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('ice_gathering'),
  state: iceGatheringStateSchema,
  prev: iceGatheringStateSchema,
  prevMs: durationSchema,
});

/**
 * `signaling_state`: the signaling state changed.
 *
 * @example
 * ```ts
 * signalingStateEventSchema.parse({ t: 1763700000050, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'signaling_state', state: 'have-local-offer', prev: 'stable', prevMs: 50 });
 * ```
 */
export const signalingStateEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('signaling_state'),
  state: signalingStateSchema,
  prev: signalingStateSchema,
  prevMs: durationSchema,
});

/**
 * `ice_candidate_error`: a STUN or TURN server was unreachable or refused. `errorCode` is the
 * STUN error code (0..999, 701 for unreachable); `errorText` never carries the server address.
 *
 * @example
 * ```ts
 * iceCandidateErrorEventSchema.parse({ t: 1763700000300, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'ice_candidate_error', errorCode: 701, errorText: 'STUN host lookup received error.' });
 * ```
 */
export const iceCandidateErrorEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('ice_candidate_error'),
  errorCode: z.int().min(0).max(999),
  errorText: boundedText().optional(),
});

/**
 * `candidate_pair_change`: the selected media path changed (`initial` for the first selection).
 * Candidate addresses are never sent.
 *
 * @example
 * ```ts
 * candidatePairChangeEventSchema.parse({ t: 1763700000800, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'candidate_pair_change', localType: 'relay', remoteType: 'host', protocol: 'udp', relayed: true, network: 'wifi', initial: true });
 * ```
 */
export const candidatePairChangeEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('candidate_pair_change'),
  localType: candidateTypeSchema,
  remoteType: candidateTypeSchema,
  protocol: transportProtocolSchema,
  relayed: z.boolean(),
  network: networkTypeSchema.optional(),
  initial: z.boolean(),
});

const trackFields = { track: trackIdSchema, kind: trackKindSchema, dir: trackDirectionSchema };

/**
 * `track_added`: a track joined the peer connection.
 *
 * @example
 * ```ts
 * trackAddedEventSchema.parse({ t: 1763700000100, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'track_added', track: 'trk_3f9a', kind: 'video', dir: 'in' });
 * ```
 */
export const trackAddedEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('track_added'),
  ...trackFields,
});

/**
 * `track_muted`: a track was muted.
 *
 * @example
 * ```ts
 * trackMutedEventSchema.parse({ t: 1763700009000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'track_muted', track: 'trk_3f9a', kind: 'video', dir: 'in' });
 * ```
 */
export const trackMutedEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('track_muted'),
  ...trackFields,
});

/**
 * `track_unmuted`: a track was unmuted; `freezeMs` is how long it was frozen (muted).
 *
 * @example
 * ```ts
 * trackUnmutedEventSchema.parse({ t: 1763700012000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'track_unmuted', track: 'trk_3f9a', kind: 'video', dir: 'in', freezeMs: 3000 });
 * ```
 */
export const trackUnmutedEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('track_unmuted'),
  ...trackFields,
  freezeMs: durationSchema.optional(),
});

/**
 * `track_ended`: a track ended.
 *
 * @example
 * ```ts
 * trackEndedEventSchema.parse({ t: 1763700060000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'track_ended', track: 'trk_3f9a', kind: 'video', dir: 'in' });
 * ```
 */
export const trackEndedEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('track_ended'),
  ...trackFields,
});

/**
 * `codec_change`: a track's negotiated codec changed from `prev` to `codec` (MIME types).
 *
 * @example
 * ```ts
 * codecChangeEventSchema.parse({ t: 1763700020000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'codec_change', track: 'trk_3f9a', codec: 'video/AV1', prev: 'video/VP8' });
 * ```
 */
export const codecChangeEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('codec_change'),
  track: trackIdSchema,
  codec: codecSchema,
  prev: codecSchema,
});

/**
 * `resolution_change`: a track's resolution changed from `prevW`×`prevH` to `w`×`h`.
 *
 * @example
 * ```ts
 * resolutionChangeEventSchema.parse({ t: 1763700020000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'resolution_change', track: 'trk_3f9a', w: 640, h: 360, prevW: 1280, prevH: 720 });
 * ```
 */
export const resolutionChangeEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('resolution_change'),
  track: trackIdSchema,
  w: dimensionSchema,
  h: dimensionSchema,
  prevW: dimensionSchema,
  prevH: dimensionSchema,
});

/**
 * `ice_restart`: the peer connection restarted ICE (recovering from a network change), whoever
 * started it: `restartIce()`, an offer made with `iceRestart`, or the remote peer. One event per
 * restart, on each end that sees it.
 *
 * @example
 * ```ts
 * iceRestartEventSchema.parse({ t: 1763700030000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'ice_restart' });
 * ```
 */
export const iceRestartEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('ice_restart'),
});

/**
 * A captured media kind: `audio` | `video` | `screen`.
 *
 * @example
 * ```ts
 * captureKindSchema.parse('screen');
 * ```
 */
export const captureKindSchema = z.enum(['audio', 'video', 'screen']);

/**
 * `media_acquired`: capture (getUserMedia / getDisplayMedia) succeeded. `deviceId` is a salted
 * hash, never the browser's identifier; `label` is the device's label as the browser supplies
 * it (never in strict privacy mode; omitted when empty).
 *
 * @example
 * ```ts
 * mediaAcquiredEventSchema.parse({ t: 1763699999000, type: 'call.event', name: 'media_acquired', kind: 'video', w: 1280, h: 720, fps: 30 });
 * ```
 */
export const mediaAcquiredEventSchema = z.object({
  ...captureFields,
  name: z.literal('media_acquired'),
  kind: captureKindSchema,
  w: dimensionSchema.optional(),
  h: dimensionSchema.optional(),
  fps: z.number().min(0).max(PROTOCOL_LIMITS.maxFramesPerSecond).optional(),
  deviceId: boundedText(128).optional(),
  label: boundedText().optional(),
});

/**
 * The `media_error` classes (PROTOCOL.md §3).
 *
 * @example
 * ```ts
 * MEDIA_ERROR_CLASSES.includes('permission_denied'); // true
 * ```
 */
export const MEDIA_ERROR_CLASSES = [
  'permission_denied',
  'device_in_use',
  'device_not_found',
  'constraints_unsatisfied',
  'aborted',
  'security',
  'type_error',
  'unknown',
] as const;

/**
 * A media error class.
 *
 * @example
 * ```ts
 * mediaErrorClassSchema.parse('device_in_use');
 * ```
 */
export const mediaErrorClassSchema = z.enum(MEDIA_ERROR_CLASSES);

/**
 * A media error class: one of {@link MEDIA_ERROR_CLASSES}.
 *
 * @example
 * ```ts
 * const errorClass: MediaErrorClass = 'permission_denied';
 * ```
 */
export type MediaErrorClass = z.infer<typeof mediaErrorClassSchema>;

const mediaErrorClassByName: Readonly<Record<string, MediaErrorClass>> = {
  NotAllowedError: 'permission_denied',
  NotReadableError: 'device_in_use',
  NotFoundError: 'device_not_found',
  OverconstrainedError: 'constraints_unsatisfied',
  AbortError: 'aborted',
  SecurityError: 'security',
  TypeError: 'type_error',
};

/**
 * Classifies a capture failure by its DOMException name (the table in PROTOCOL.md §3): exact,
 * case-sensitive names; anything else is `unknown`.
 *
 * @example
 * ```ts
 * import { classifyMediaError } from '@svc/protocol';
 *
 * classifyMediaError('NotAllowedError'); // 'permission_denied'
 * classifyMediaError('QuotaExceededError'); // 'unknown'
 * ```
 */
export function classifyMediaError(errorName: string): MediaErrorClass {
  return Object.hasOwn(mediaErrorClassByName, errorName)
    ? (mediaErrorClassByName[errorName] ?? 'unknown')
    : 'unknown';
}

/**
 * `media_error`: capture failed. `errorName` is the DOMException name, `class` its
 * classification ({@link classifyMediaError}).
 *
 * @example
 * ```ts
 * mediaErrorEventSchema.parse({ t: 1763699999000, type: 'call.event', name: 'media_error', errorName: 'NotAllowedError', class: 'permission_denied', kind: 'video' });
 * ```
 */
export const mediaErrorEventSchema = z.object({
  ...captureFields,
  name: z.literal('media_error'),
  errorName: boundedText(),
  class: mediaErrorClassSchema,
  kind: captureKindSchema.optional(),
});

const deviceLabelListSchema = z.array(boundedText()).max(PROTOCOL_LIMITS.maxDevices);

/**
 * The device labels of a `device_inventory` or `device_change`, by kind, as the browser supplies
 * them and in its order: a device whose label is empty (before a permission grant) is left out,
 * a kind with none is omitted, and so is the whole object when there are none. Never in strict
 * privacy mode; never device ids.
 *
 * @example
 * ```ts
 * deviceLabelsSchema.parse({ audioinput: ['Default - Built-in Microphone'], videoinput: ['FaceTime HD Camera'] });
 * ```
 */
export const deviceLabelsSchema = z.object({
  audioinput: deviceLabelListSchema.optional(),
  videoinput: deviceLabelListSchema.optional(),
  audiooutput: deviceLabelListSchema.optional(),
});

/**
 * Device labels by kind ({@link deviceLabelsSchema}).
 *
 * @example
 * ```ts
 * const labels: DeviceLabels = { audiooutput: ['Speakers'] };
 * ```
 */
export type DeviceLabels = z.infer<typeof deviceLabelsSchema>;

const deviceCountFields = {
  audioinput: deviceCountSchema,
  videoinput: deviceCountSchema,
  audiooutput: deviceCountSchema,
  labels: deviceLabelsSchema.optional(),
};

/**
 * `device_inventory`: device counts at start (and when a listing shows other devices or labels,
 * as after a permission grant), with their `labels` ({@link deviceLabelsSchema}).
 *
 * @example
 * ```ts
 * deviceInventoryEventSchema.parse({ t: 1763699998000, type: 'call.event', name: 'device_inventory', audioinput: 2, videoinput: 1, audiooutput: 2, labels: { audioinput: ['Built-in Microphone', 'USB Headset'], videoinput: ['FaceTime HD Camera'] } });
 * ```
 */
export const deviceInventoryEventSchema = z.object({
  ...captureFields,
  name: z.literal('device_inventory'),
  ...deviceCountFields,
});

/**
 * `device_change`: device counts (and `labels`) after a mid-session change.
 *
 * @example
 * ```ts
 * deviceChangeEventSchema.parse({ t: 1763700040000, type: 'call.event', name: 'device_change', audioinput: 3, videoinput: 1, audiooutput: 2 });
 * ```
 */
export const deviceChangeEventSchema = z.object({
  ...captureFields,
  name: z.literal('device_change'),
  ...deviceCountFields,
});

/**
 * `data_channel`: a data channel's state (payloads are never captured): when it is created on
 * this side (`connecting`) or announced by the remote peer, then at each change of state.
 *
 * @example
 * ```ts
 * dataChannelEventSchema.parse({ t: 1763700001000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'data_channel', label: 'chat', state: 'open' });
 * ```
 */
export const dataChannelEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('data_channel'),
  label: z.string().max(PROTOCOL_LIMITS.maxNameLength),
  state: z.enum(['connecting', 'open', 'closing', 'closed']),
});

/**
 * `pc_closed`: the peer connection closed, `durationMs` after `pc_created`.
 *
 * @example
 * ```ts
 * peerConnectionClosedEventSchema.parse({ t: 1763700060000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'pc_closed', durationMs: 60000 });
 * ```
 */
export const peerConnectionClosedEventSchema = z.object({
  ...peerConnectionFields,
  name: z.literal('pc_closed'),
  durationMs: durationSchema,
});

/**
 * A `call.event`, discriminated on `name` (PROTOCOL.md §3). The same schema validates call
 * events inside a chunk (it is a member of `sessionEventSchema`) and on their own.
 *
 * @example
 * ```ts
 * import { callEventSchema } from '@svc/protocol';
 *
 * const event = callEventSchema.parse(input);
 * if (event.name === 'pc_closed') console.log(event.durationMs);
 * ```
 */
export const callEventSchema = z.discriminatedUnion('name', [
  peerConnectionCreatedEventSchema,
  connectionStateEventSchema,
  iceStateEventSchema,
  iceGatheringEventSchema,
  signalingStateEventSchema,
  iceCandidateErrorEventSchema,
  candidatePairChangeEventSchema,
  trackAddedEventSchema,
  trackMutedEventSchema,
  trackUnmutedEventSchema,
  trackEndedEventSchema,
  codecChangeEventSchema,
  resolutionChangeEventSchema,
  iceRestartEventSchema,
  mediaAcquiredEventSchema,
  mediaErrorEventSchema,
  deviceInventoryEventSchema,
  deviceChangeEventSchema,
  dataChannelEventSchema,
  peerConnectionClosedEventSchema,
]);

/**
 * A `call.event`.
 *
 * @example
 * ```ts
 * const closed = (events: CallEvent[]) => events.filter((event) => event.name === 'pc_closed');
 * ```
 */
export type CallEvent = z.infer<typeof callEventSchema>;

/**
 * The names of call events.
 *
 * @example
 * ```ts
 * const name: CallEventName = 'ice_restart';
 * ```
 */
export type CallEventName = CallEvent['name'];

/**
 * A call event with a given name.
 *
 * @example
 * ```ts
 * const closed: CallEventOf<'pc_closed'> = { t: 1763700060000, type: 'call.event', pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H', name: 'pc_closed', durationMs: 60000 };
 * ```
 */
export type CallEventOf<Name extends CallEventName> = Extract<CallEvent, { name: Name }>;

/**
 * Every call event name, in the order of PROTOCOL.md §3.
 *
 * @example
 * ```ts
 * CALL_EVENT_NAMES.includes('pc_created'); // true
 * ```
 */
export const CALL_EVENT_NAMES = callEventSchema.options.map(
  (option) => option.shape.name.value,
) as readonly CallEventName[];
