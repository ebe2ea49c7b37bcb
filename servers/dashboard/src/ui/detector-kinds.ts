// The detectors' kinds (PROTOCOL.md §5, @svc/detectors) in words, for findings on the calls pages
// and for issue clusters. A kind the app does not know yet is shown as it is.

export const DETECTOR_KINDS: Readonly<Record<string, string>> = {
  webrtc_connect_failure: 'Call failed to connect',
  webrtc_one_way_media: 'One-way media',
  webrtc_media_permission_denied: 'Camera or microphone permission denied',
  webrtc_device_unavailable: 'Camera or microphone unavailable',
  webrtc_freeze: 'Video freezes',
  webrtc_audio_dropout: 'Audio dropouts',
  webrtc_reconnect_storm: 'Reconnect storm',
  webrtc_call_abandoned: 'Call abandoned',
  webrtc_packet_loss: 'Packet loss',
  webrtc_high_latency: 'High latency',
  webrtc_cpu_limited: 'CPU limited',
  webrtc_low_resolution: 'Low resolution',
  webrtc_relay_fallback: 'Relayed through TURN',
};

/** The words for a detector's kind. */
export function detectorKindLabel(kind: string): string {
  return DETECTOR_KINDS[kind] ?? kind;
}
