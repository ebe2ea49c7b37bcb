/**
 * `@svc/browser-sdk/webrtc`: the WebRTC collector, loaded lazily only when enabled
 * (`init({ webrtc: { enabled: true } })`): `createCollector` instruments `RTCPeerConnection`,
 * `getUserMedia`, `getDisplayMedia` and devices, and turns `getStats()` snapshots into
 * PROTOCOL.md §2–§3 samples and events.
 *
 * @packageDocumentation
 */

export {
  type Collector,
  type CollectorConfiguration,
  type CollectorOptions,
  type CollectorPolicy,
  classifyMediaError,
  createCollector,
  type TrackedConnection,
} from './collector.ts';
export * from './stats/index.ts';
