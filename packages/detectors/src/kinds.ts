/**
 * The 13 detector kinds (PROTOCOL.md §5), in the order of the protocol's table.
 *
 * @example
 * ```ts
 * import { DETECTOR_KINDS } from '@svc/detectors';
 *
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
 * A detector kind: one of {@link DETECTOR_KINDS}.
 *
 * @example
 * ```ts
 * import type { DetectorKind } from '@svc/detectors';
 *
 * const kind: DetectorKind = 'webrtc_relay_fallback';
 * ```
 */
export type DetectorKind = (typeof DETECTOR_KINDS)[number];

/**
 * How serious a finding is, by kind ({@link SEVERITY_BY_KIND}).
 *
 * @example
 * ```ts
 * import type { Severity } from '@svc/detectors';
 *
 * const severity: Severity = 'critical';
 * ```
 */
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/**
 * The severity of each kind (PROTOCOL.md §5).
 *
 * @example
 * ```ts
 * import { SEVERITY_BY_KIND } from '@svc/detectors';
 *
 * SEVERITY_BY_KIND.webrtc_one_way_media; // 'critical'
 * ```
 */
export const SEVERITY_BY_KIND: Readonly<Record<DetectorKind, Severity>> = {
  webrtc_connect_failure: 'critical',
  webrtc_one_way_media: 'critical',
  webrtc_media_permission_denied: 'high',
  webrtc_device_unavailable: 'high',
  webrtc_freeze: 'high',
  webrtc_audio_dropout: 'high',
  webrtc_reconnect_storm: 'high',
  webrtc_call_abandoned: 'high',
  webrtc_packet_loss: 'medium',
  webrtc_high_latency: 'medium',
  webrtc_cpu_limited: 'medium',
  webrtc_low_resolution: 'low',
  webrtc_relay_fallback: 'info',
};

/**
 * The recording trigger name of a kind: `webrtc:<kind without the webrtc_ prefix>`.
 *
 * @example
 * ```ts
 * import type { TriggerName } from '@svc/detectors';
 *
 * const name: TriggerName<'webrtc_freeze'> = 'webrtc:freeze';
 * ```
 */
export type TriggerName<Kind extends DetectorKind = DetectorKind> = Kind extends `webrtc_${infer Rest}`
  ? `webrtc:${Rest}`
  : never;

/**
 * The recording trigger name of a detector kind (PROTOCOL.md §5): `webrtc_freeze` →
 * `webrtc:freeze`, `webrtc_one_way_media` → `webrtc:one_way_media`.
 *
 * @example
 * ```ts
 * import { triggerName } from '@svc/detectors';
 *
 * triggerName('webrtc_packet_loss'); // 'webrtc:packet_loss'
 * ```
 */
export function triggerName<Kind extends DetectorKind>(kind: Kind): TriggerName<Kind> {
  return `webrtc:${kind.slice('webrtc_'.length)}` as TriggerName<Kind>;
}

/**
 * Every recording trigger name, in the order of {@link DETECTOR_KINDS}.
 *
 * @example
 * ```ts
 * import { TRIGGERS } from '@svc/detectors';
 *
 * TRIGGERS.includes('webrtc:relay_fallback'); // true
 * ```
 */
export const TRIGGERS: readonly TriggerName[] = /* @__PURE__ */ DETECTOR_KINDS.map(triggerName);

/** Bit of a kind in a "fired" mask (its index in DETECTOR_KINDS). */
export const KIND_BIT: Readonly<Record<DetectorKind, number>> = {
  webrtc_connect_failure: 1 << 0,
  webrtc_one_way_media: 1 << 1,
  webrtc_media_permission_denied: 1 << 2,
  webrtc_device_unavailable: 1 << 3,
  webrtc_freeze: 1 << 4,
  webrtc_audio_dropout: 1 << 5,
  webrtc_reconnect_storm: 1 << 6,
  webrtc_call_abandoned: 1 << 7,
  webrtc_packet_loss: 1 << 8,
  webrtc_high_latency: 1 << 9,
  webrtc_cpu_limited: 1 << 10,
  webrtc_low_resolution: 1 << 11,
  webrtc_relay_fallback: 1 << 12,
};
