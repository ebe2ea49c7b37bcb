/**
 * `@svc/browser-sdk/webrtc`: the WebRTC collector, loaded lazily only when enabled. This first
 * part turns `getStats()` snapshots into PROTOCOL.md §2 call-sample windows; the instrumentation
 * of `RTCPeerConnection` and media capture that drives it comes next.
 *
 * @packageDocumentation
 */
export * from './stats/index.ts';
