import {
  continueDetector,
  type Detector,
  type EngineState,
  type PeerConnectionState,
  type Run,
  readState,
  type TrackState,
} from './detector.ts';
import { compareFindings } from './order.ts';
import { resolveThresholds, type Thresholds } from './thresholds.ts';
import type { CallSample, DetectorItem, Finding } from './types.ts';

/** The snapshot format this version writes and reads. */
const SNAPSHOT_VERSION = 1;

/** A run of windows, as `[active, start, end, worst]`. */
type RunSnapshot = readonly [active: boolean, start: number, end: number, worst: number];

interface TrackSnapshot {
  readonly id: string;
  readonly lastSampleNumber: number;
  /** `null` before the track had a window. */
  readonly lastEnd: number | null;
  readonly liveness: number;
  readonly loss: RunSnapshot;
  readonly rtt: RunSnapshot;
  readonly concealment: RunSnapshot;
  readonly lowResolution: RunSnapshot;
  readonly goodHeight: number;
  readonly frozenMs: number;
  readonly freezeObservedMs: number;
  readonly cpuWeighted: number;
  readonly cpuObservedMs: number;
}

interface PeerConnectionSnapshot {
  readonly id: string;
  readonly fired: number;
  readonly closed: boolean;
  readonly connected: boolean;
  /** `null` while no connect timeout is armed. */
  readonly deadline: number | null;
  readonly sampleNumber: number;
  /** `null` when the last sample had no usable window (or before the first). */
  readonly lastSampleEnd: number | null;
  readonly tracks: readonly TrackSnapshot[];
  readonly oneWayIn: RunSnapshot;
  readonly oneWayOut: RunSnapshot;
  readonly reconnects: ReadonlyArray<{ readonly t: number; readonly restart: boolean }>;
  /** `null` once the samples cover more than `abandonMs`. */
  readonly abandonSamples: readonly CallSample[] | null;
  readonly abandonWindowMs: number;
}

/** The engine's state in a snapshot. Internal: its shape changes with {@link DetectorSnapshot}'s `version`. */
interface DetectorSnapshotState {
  readonly peerConnections: readonly PeerConnectionSnapshot[];
  /** Ids of the peer connections with an armed connect timeout, in arming order. */
  readonly awaitingConnection: readonly string[];
  readonly sessionFired: number;
  readonly findings: readonly Finding[];
  /** The items of the newest `t`, pushed but not evaluated yet (a later item or `advance` does). */
  readonly pending: readonly DetectorItem[];
  /** The `t` of `pending` (meaningless while it is empty). */
  readonly pendingT: number | null;
  /** `null` before anything was evaluated. */
  readonly settledT: number | null;
}

/**
 * Everything a {@link Detector} knows, as plain JSON data: store it (a database row, a file)
 * and {@link restoreDetector} it later, in another process or on another machine, to go on
 * where it stopped. Numbers are finite (no `NaN` or `Infinity`), so `JSON.stringify` and
 * `JSON.parse` keep it exactly. It holds the resolved thresholds, the findings so far, the items
 * of the newest `t` (they are evaluated when time moves past it) and, per peer connection, a few
 * numbers per track plus the samples of its first `abandonMs`: its size does not grow with the
 * length of a call.
 *
 * `state` is internal: its shape may change from one `version` to the next, and
 * {@link restoreDetector} accepts only the version it writes.
 *
 * @example
 * ```ts
 * import { restoreDetector, snapshotDetector, type DetectorSnapshot } from '@svc/detectors';
 *
 * const saved: DetectorSnapshot | undefined = snapshotDetector(detector);
 * const stored = JSON.stringify(saved);
 * const again = restoreDetector(JSON.parse(stored));
 * ```
 */
export interface DetectorSnapshot {
  /** The snapshot format (1). */
  readonly version: 1;
  /** The thresholds the detector runs with (overrides merged over the defaults). */
  readonly thresholds: Thresholds;
  /** The engine's state (internal). */
  readonly state: DetectorSnapshotState;
}

const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

const saveRun = (run: Run): RunSnapshot => [run.active, run.start, run.end, run.worst];

function loadRun(run: RunSnapshot): Run {
  return { active: run[0], start: run[1], end: run[2], worst: run[3] };
}

function saveTrack(track: TrackState): TrackSnapshot {
  return {
    id: track.id,
    lastSampleNumber: track.lastSampleNumber,
    lastEnd: finiteOrNull(track.lastEnd),
    liveness: track.liveness,
    loss: saveRun(track.loss),
    rtt: saveRun(track.rtt),
    concealment: saveRun(track.concealment),
    lowResolution: saveRun(track.lowResolution),
    goodHeight: track.goodHeight,
    frozenMs: track.frozenMs,
    freezeObservedMs: track.freezeObservedMs,
    cpuWeighted: track.cpuWeighted,
    cpuObservedMs: track.cpuObservedMs,
  };
}

function loadTrack(track: TrackSnapshot): TrackState {
  return {
    ...track,
    lastEnd: track.lastEnd ?? Number.NaN,
    loss: loadRun(track.loss),
    rtt: loadRun(track.rtt),
    concealment: loadRun(track.concealment),
    lowResolution: loadRun(track.lowResolution),
  };
}

function savePeerConnection(pc: PeerConnectionState): PeerConnectionSnapshot {
  return {
    id: pc.id,
    fired: pc.fired,
    closed: pc.closed,
    connected: pc.connected,
    deadline: finiteOrNull(pc.deadline),
    sampleNumber: pc.sampleNumber,
    lastSampleEnd: finiteOrNull(pc.lastSampleEnd),
    tracks: [...pc.tracks.values()].map(saveTrack),
    oneWayIn: saveRun(pc.oneWayIn),
    oneWayOut: saveRun(pc.oneWayOut),
    reconnects: pc.reconnects.map((entry) => ({ t: entry.t, restart: entry.restart })),
    abandonSamples: pc.abandonSamples === undefined ? null : pc.abandonSamples.slice(),
    abandonWindowMs: pc.abandonWindowMs,
  };
}

function loadPeerConnection(pc: PeerConnectionSnapshot): PeerConnectionState {
  return {
    id: pc.id,
    fired: pc.fired,
    closed: pc.closed,
    connected: pc.connected,
    deadline: pc.deadline ?? Number.NaN,
    sampleNumber: pc.sampleNumber,
    lastSampleEnd: pc.lastSampleEnd ?? Number.NaN,
    tracks: new Map(pc.tracks.map((track) => [track.id, loadTrack(track)])),
    oneWayIn: loadRun(pc.oneWayIn),
    oneWayOut: loadRun(pc.oneWayOut),
    reconnects: pc.reconnects.map((entry) => ({ t: entry.t, restart: entry.restart })),
    abandonSamples: pc.abandonSamples === null ? undefined : pc.abandonSamples.slice(),
    abandonWindowMs: pc.abandonWindowMs,
  };
}

/**
 * Saves everything `detector` knows as a {@link DetectorSnapshot}: plain JSON data that
 * {@link restoreDetector} turns back into a detector that goes on exactly as this one would.
 * A snapshot can be taken at any point, between any two calls (`push`, `advance`); it shares
 * nothing mutable with the detector, which can go on. Returns `undefined` for a value that is
 * not a detector made by this copy of the package. Never throws.
 *
 * @param detector - a detector from `createDetector` or `restoreDetector`
 * @returns the snapshot, or `undefined`
 * @example
 * ```ts
 * import { createDetector, snapshotDetector } from '@svc/detectors';
 *
 * const detector = createDetector({ thresholds: project.detectorThresholds });
 * for (const item of chunkItems) detector.push(item);
 * await store.save(sessionId, JSON.stringify(snapshotDetector(detector)));
 * ```
 */
export function snapshotDetector(detector: Detector): DetectorSnapshot | undefined {
  const read = (detector as Partial<Record<typeof readState, () => EngineState>> | null)?.[readState];
  if (typeof read !== 'function') return undefined;
  const [
    thresholds,
    peerConnections,
    awaitingConnection,
    sessionFired,
    findings,
    pending,
    pendingT,
    settledT,
  ] = read();
  return {
    version: SNAPSHOT_VERSION,
    thresholds: { ...thresholds },
    state: {
      peerConnections: [...peerConnections.values()].map(savePeerConnection),
      awaitingConnection: awaitingConnection.map((pc) => pc.id),
      sessionFired,
      findings: findings.slice().sort(compareFindings),
      pending: pending.slice(),
      pendingT: finiteOrNull(pendingT),
      settledT: finiteOrNull(settledT),
    },
  };
}

/**
 * A detector that goes on from a {@link DetectorSnapshot}: pushing the same items and advancing
 * to the same times then gives exactly what the snapshotted detector would have given (return
 * values and `findings()`), as if it had never stopped. It runs with the snapshot's thresholds.
 * Returns `undefined` when `snapshot` is not a snapshot of this version (a stored one from
 * another version: start again from the items). Only the outline is checked: pass only what
 * {@link snapshotDetector} returned (through JSON as you like). Never throws.
 *
 * @param snapshot - what `snapshotDetector` returned, possibly through `JSON.stringify`/`JSON.parse`
 * @returns the detector, or `undefined`
 * @example
 * ```ts
 * import { restoreDetector } from '@svc/detectors';
 *
 * const detector = restoreDetector(JSON.parse(await store.load(sessionId)));
 * if (detector !== undefined) {
 *   for (const item of newItems) detector.push(item);
 *   detector.advance(lastSeenAlive);
 *   detector.findings();
 * }
 * ```
 */
export function restoreDetector(snapshot: unknown): Detector | undefined {
  if (!isSnapshot(snapshot)) return undefined;
  try {
    const { state } = snapshot;
    const peerConnections = new Map(
      state.peerConnections.map((pc) => [pc.id, loadPeerConnection(pc)] as const),
    );
    const awaitingConnection: PeerConnectionState[] = [];
    for (const id of state.awaitingConnection) {
      const pc = peerConnections.get(id);
      if (pc === undefined) return undefined;
      awaitingConnection.push(pc);
    }
    const thresholds = resolveThresholds(snapshot.thresholds);
    const restored: EngineState = [
      thresholds,
      peerConnections,
      awaitingConnection,
      state.sessionFired,
      state.findings.slice(),
      state.pending.slice(),
      state.pendingT ?? 0,
      state.settledT ?? -Infinity,
    ];
    return continueDetector(undefined, restored);
  } catch {
    return undefined;
  }
}

function isSnapshot(value: unknown): value is DetectorSnapshot {
  if (typeof value !== 'object' || value === null) return false;
  const { version, thresholds, state } = value as Partial<Record<keyof DetectorSnapshot, unknown>>;
  if (version !== SNAPSHOT_VERSION || typeof thresholds !== 'object' || thresholds === null) return false;
  if (typeof state !== 'object' || state === null) return false;
  const fields = state as Partial<Record<keyof DetectorSnapshotState, unknown>>;
  return (
    Array.isArray(fields.peerConnections) &&
    Array.isArray(fields.awaitingConnection) &&
    Array.isArray(fields.findings) &&
    Array.isArray(fields.pending) &&
    typeof fields.sessionFired === 'number' &&
    (fields.pendingT === null || typeof fields.pendingT === 'number') &&
    (fields.settledT === null || typeof fields.settledT === 'number')
  );
}
