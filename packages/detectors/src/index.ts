/**
 * `@svc/detectors`: the WebRTC call detectors of PROTOCOL.md §5 as one pure, deterministic
 * streaming engine that runs unchanged in the browser SDK and on the server.
 *
 * @packageDocumentation
 */
export { createDetector, type Detector, type DetectorOptions, detect } from './detector.ts';
export {
  DETECTOR_KINDS,
  type DetectorKind,
  SEVERITY_BY_KIND,
  type Severity,
  TRIGGERS,
  type TriggerName,
  triggerName,
} from './kinds.ts';
export { type DetectorSnapshot, restoreDetector, snapshotDetector } from './snapshot.ts';
export {
  DEFAULT_THRESHOLDS,
  resolveThresholds,
  THRESHOLD_BOUNDS,
  THRESHOLD_NAMES,
  type ThresholdName,
  type Thresholds,
} from './thresholds.ts';
export type {
  CallEvent,
  CallSample,
  ConnectionInfo,
  DetectorItem,
  Finding,
  TrackSample,
} from './types.ts';
