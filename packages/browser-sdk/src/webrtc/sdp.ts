/**
 * SDP capture for the collector's `captureSdp` (PROTOCOL.md §3 privacy): the lines that carry
 * network addresses or ICE credentials go, and the rest passes a small PII scrubber
 * (`@svc/protocol/redaction`, zod-free, the same code the server re-checks with). The collector
 * imports this module on demand, only when SDP capture is on, so it is its own chunk and costs
 * the collector nothing otherwise.
 *
 * @packageDocumentation
 */

import { redactSdp } from '@svc/protocol/redaction';

/** The fields of an `sdp` call event. */
export interface SdpEventFields {
  side: 'local' | 'remote';
  sdpType: RTCSdpType;
  sdp: string;
}

/**
 * The `sdp` event of a description `name` just applied: what the connection now holds on that
 * side (an implicit `setLocalDescription()` creates it), redacted; a rollback as given, with an
 * empty `sdp`.
 *
 * @example
 * ```ts
 * await peerConnection.setLocalDescription(offer);
 * emit(describeApplied(peerConnection, 'setLocalDescription', offer));
 * ```
 */
export function describeApplied(
  pc: RTCPeerConnection,
  name: 'setLocalDescription' | 'setRemoteDescription',
  given: unknown,
): SdpEventFields {
  const local = name === 'setLocalDescription';
  const requested = given as RTCSessionDescriptionInit | undefined;
  const { type, sdp = '' } =
    requested?.type === 'rollback'
      ? requested
      : ((local ? pc.localDescription : pc.remoteDescription) ?? { type: 'rollback' as const });
  return { side: local ? 'local' : 'remote', sdpType: type, sdp: redactSdp(sdp) };
}
