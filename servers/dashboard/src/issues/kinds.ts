// The kinds of issue clusters the API knows (`CLUSTER_KINDS` of servers/api: the detector kinds
// of @svc/detectors, and `error`), with the words the app shows for them.

export const ISSUE_KINDS: Readonly<Record<string, string>> = {
  error: 'Browser error',
  webrtc_connect_failure: 'Call failed to connect',
  webrtc_one_way_media: 'One-way media',
  webrtc_media_permission_denied: 'Media permission denied',
  webrtc_device_unavailable: 'Device unavailable',
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

/** The words for a kind (the kind itself when the app does not know it yet). */
export function kindLabel(kind: string): string {
  return ISSUE_KINDS[kind] ?? kind;
}

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
