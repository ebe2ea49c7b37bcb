import { scoreCall } from '@svc/quality-score';
import { type DetectorKind, KIND_BIT, SEVERITY_BY_KIND } from './kinds.ts';
import { compareFindings, sortBatch } from './order.ts';
import { resolveThresholds, type Thresholds } from './thresholds.ts';
import type { CallEvent, CallSample, DetectorItem, Finding, TrackSample } from './types.ts';

/**
 * Options of {@link detect} and {@link createDetector}.
 *
 * @example
 * ```ts
 * import type { DetectorOptions } from '@svc/detectors';
 *
 * const options: DetectorOptions = { thresholds: { lossPct: 3 }, now: Date.now() };
 * ```
 */
export interface DetectorOptions {
  /** Per-project overrides, merged over `DEFAULT_THRESHOLDS` (see `resolveThresholds`). */
  readonly thresholds?: Partial<Thresholds> | undefined;
  /**
   * `detect` only: the time up to which the session is known, ms since the Unix epoch (default:
   * the last item's `t`; an earlier value is raised to it). Connect timeouts that expire by then
   * fire, and the ratio rules are judged at it.
   */
  readonly now?: number | undefined;
}

/**
 * A streaming detector for one session: {@link createDetector}.
 *
 * @example
 * ```ts
 * import { createDetector, type Detector } from '@svc/detectors';
 *
 * const detector: Detector = createDetector();
 * ```
 */
export interface Detector {
  /**
   * Feeds one `call.*` item; returns the findings this made certain, in canonical order. Items
   * with the same `t` are evaluated together once time moves past `t`, so the findings of an
   * item can come back from the next `push` (or `advance`). `t` must not decrease: a late item
   * is processed as if its `t` were the current batch time (or the last `advance` time).
   */
  push(item: DetectorItem): Finding[];
  /**
   * Declares that every item with `t ≤ now` has been pushed: evaluates the pending batch, fires
   * connect timeouts that expired by `now` and judges the ratio rules of the open peer
   * connections at `now`. Returns the new findings, in canonical order.
   */
  advance(now: number): Finding[];
  /** Every finding so far, in canonical order (by `t`, `kind`, `pc`, `track`). */
  findings(): Finding[];
}

/** Two windows are contiguous when the later starts no more than this after the earlier ended. */
const CONTIGUITY_MS = 1000;

const LIVE = 0;
const MUTED = 1;
const ENDED = 2;

/** A run of contiguous windows in which a condition held. */
export interface Run {
  active: boolean;
  start: number;
  end: number;
  /** The worst value in the run (largest, or smallest for the height). */
  worst: number;
}

export interface TrackState {
  readonly id: string;
  /** The peer connection's sample number in which this track last had a window. */
  lastSampleNumber: number;
  lastEnd: number;
  liveness: number;
  readonly loss: Run;
  readonly rtt: Run;
  readonly concealment: Run;
  readonly lowResolution: Run;
  /** The last height at or above `lowResHeight` seen on this track; -1 before one is seen. */
  goodHeight: number;
  frozenMs: number;
  freezeObservedMs: number;
  /** Σ limitedByCpuPct × windowMs. */
  cpuWeighted: number;
  cpuObservedMs: number;
}

export interface ReconnectRecord {
  readonly t: number;
  readonly restart: boolean;
}

export interface PeerConnectionState {
  readonly id: string;
  fired: number;
  closed: boolean;
  connected: boolean;
  deadline: number;
  sampleNumber: number;
  lastSampleEnd: number;
  readonly tracks: Map<string, TrackState>;
  readonly oneWayIn: Run;
  readonly oneWayOut: Run;
  reconnects: ReconnectRecord[];
  /** Samples kept for the call score of `webrtc_call_abandoned`; undefined once they cover more than `abandonMs`. */
  abandonSamples: CallSample[] | undefined;
  abandonWindowMs: number;
}

/** `createDetector` going on from a state: what `restoreDetector` calls (the overload hides it). */
export const continueDetector = createDetector as (options: undefined, restored: EngineState) => Detector;

/**
 * The whole state of a detector between two calls, as {@link snapshotDetector} reads it and
 * {@link restoreDetector} gives it back: thresholds, peer connections, those with an armed
 * connect timeout, the session-wide kinds fired, every finding (in any order), the items of
 * the batch at `pendingT` not evaluated yet, `pendingT`, `settledT`. A tuple, not an object:
 * the SDK bundles the engine, and this costs it the fewest bytes.
 */
export type EngineState = [
  thresholds: Thresholds,
  peerConnections: Map<string, PeerConnectionState>,
  awaitingConnection: PeerConnectionState[],
  sessionFired: number,
  findings: Finding[],
  pending: DetectorItem[],
  pendingT: number,
  settledT: number,
];

/** The key of the (unlisted) method by which {@link snapshotDetector} reads a detector's state. */
export const readState: unique symbol = Symbol();

function createRun(): Run {
  return { active: false, start: 0, end: 0, worst: 0 };
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function roundTo2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Extends (or starts) a run with a window in which the condition held; returns its covered time. */
function extendRun(run: Run, start: number, end: number, value: number, lowerIsWorse: boolean): number {
  if (run.active) {
    if (end > run.end) run.end = end;
    if (lowerIsWorse ? value < run.worst : value > run.worst) run.worst = value;
  } else {
    run.active = true;
    run.start = start;
    run.end = end;
    run.worst = value;
  }
  return run.end - run.start;
}

function isItem(item: unknown): item is DetectorItem {
  if (typeof item !== 'object' || item === null) return false;
  const { t, type } = item as { t?: unknown; type?: unknown };
  return isFiniteNumber(t) && (type === 'call.sample' || type === 'call.event');
}

/** A finding waiting for the end of an item: the earliest `t`, then the lowest track id, wins. */
function better(candidate: Finding, current: Finding | undefined): boolean {
  if (current === undefined) return true;
  if (candidate.t !== current.t) return candidate.t < current.t;
  return (candidate.track ?? '') < (current.track ?? '');
}

/**
 * Creates a streaming detector for one session (any number of peer connections): `push` each
 * `call.*` item in time order, call `advance(now)` as time passes (the connect timeout and the
 * ratio rules need it), read `findings()` at any time. Pushing every item then calling
 * `advance(now)` gives exactly what `detect(items, { now })` returns, however the items were
 * chunked and in whatever order items with equal `t` arrived. Never throws: items that are not
 * `call.sample`/`call.event` objects with a finite `t` are ignored.
 *
 * @example
 * ```ts
 * import { createDetector, triggerName } from '@svc/detectors';
 *
 * const detector = createDetector({ thresholds: { lossSustainMs: 5000 } });
 * for (const event of callEvents) {
 *   for (const finding of detector.push(event)) recorder.trigger(triggerName(finding.kind));
 * }
 * detector.advance(Date.now());
 * detector.findings(); // every finding so far
 * ```
 */
export function createDetector(options?: DetectorOptions): Detector;
/** `restored`, passed only by `restoreDetector`: the state to go on from (its thresholds too). */
export function createDetector(options?: DetectorOptions, restored?: EngineState): Detector {
  // `all`: every finding so far. `pending`: the batch at `pendingT` (read only while there is
  // one), not evaluated yet. Every item with t ≤ settledT has been evaluated.
  // `awaitingConnection`: peer connections with an armed connect timeout.
  let [
    thresholds,
    peerConnections,
    awaitingConnection,
    sessionFired,
    all,
    pending,
    pendingT,
    settledT,
  ]: EngineState = restored ?? [
    resolveThresholds(options?.thresholds),
    new Map(),
    [],
    0,
    [],
    [],
    0,
    -Infinity,
  ];
  /** Peer connections with reconnect events in the current batch. */
  const reconnectTouched: PeerConnectionState[] = [];
  let sorted = true;
  let emitted: Finding[] = [];

  function emit(
    kind: DetectorKind,
    t: number,
    pc: string | undefined,
    track: string | undefined,
    evidence: Record<string, number | string | boolean>,
  ): Finding {
    const finding: Finding = {
      kind,
      severity: SEVERITY_BY_KIND[kind],
      t,
      ...(pc === undefined ? {} : { pc }),
      ...(track === undefined ? {} : { track }),
      evidence,
    };
    return finding;
  }

  function record(finding: Finding, state: PeerConnectionState | undefined): void {
    const bit = KIND_BIT[finding.kind];
    if (state === undefined) {
      if (sessionFired & bit) return;
      sessionFired |= bit;
    } else {
      if (state.fired & bit) return;
      state.fired |= bit;
    }
    all.push(finding);
    emitted.push(finding);
    sorted = false;
  }

  function peerConnection(id: string): PeerConnectionState {
    let state = peerConnections.get(id);
    if (state === undefined) {
      state = {
        id,
        fired: 0,
        closed: false,
        connected: false,
        deadline: NaN,
        sampleNumber: 0,
        lastSampleEnd: NaN,
        tracks: new Map(),
        oneWayIn: createRun(),
        oneWayOut: createRun(),
        reconnects: [],
        abandonSamples: [],
        abandonWindowMs: 0,
      };
      peerConnections.set(id, state);
    }
    return state;
  }

  function trackState(pc: PeerConnectionState, id: string): TrackState {
    let state = pc.tracks.get(id);
    if (state === undefined) {
      state = {
        id,
        lastSampleNumber: -1,
        lastEnd: NaN,
        liveness: LIVE,
        loss: createRun(),
        rtt: createRun(),
        concealment: createRun(),
        lowResolution: createRun(),
        goodHeight: -1,
        frozenMs: 0,
        freezeObservedMs: 0,
        cpuWeighted: 0,
        cpuObservedMs: 0,
      };
      pc.tracks.set(id, state);
    }
    return state;
  }

  function fires(pc: PeerConnectionState, kind: DetectorKind): boolean {
    return (pc.fired & KIND_BIT[kind]) === 0;
  }

  function connectFailure(pc: PeerConnectionState, t: number, reason: 'failed' | 'timeout'): void {
    const evidence: Record<string, number | string | boolean> = { reason, everConnected: pc.connected };
    if (reason === 'timeout') evidence.timeoutMs = thresholds.connectTimeoutMs;
    record(emit('webrtc_connect_failure', t, pc.id, undefined, evidence), pc);
  }

  function relayFallback(
    pc: PeerConnectionState,
    t: number,
    source: 'sample' | 'candidate_pair_change',
    path: { localType?: unknown; remoteType?: unknown; protocol?: unknown },
  ): void {
    if (!fires(pc, 'webrtc_relay_fallback')) return;
    const evidence: Record<string, number | string | boolean> = { source };
    if (typeof path.localType === 'string') evidence.localType = path.localType;
    if (typeof path.remoteType === 'string') evidence.remoteType = path.remoteType;
    if (typeof path.protocol === 'string') evidence.protocol = path.protocol;
    record(emit('webrtc_relay_fallback', t, pc.id, undefined, evidence), pc);
  }

  /**
   * The freeze and CPU ratio rules, judged at `pc_closed` or `advance`: per track, once it has
   * `minObservedMs` of observed time. Several tracks over the threshold: the highest ratio wins,
   * then the lowest track id.
   */
  function judgeRatios(pc: PeerConnectionState, t: number): void {
    const judgeFreeze = fires(pc, 'webrtc_freeze');
    const judgeCpu = fires(pc, 'webrtc_cpu_limited');
    if (!judgeFreeze && !judgeCpu) return;
    let freezeTrack: TrackState | undefined;
    let freezeRatio = -Infinity;
    let cpuTrack: TrackState | undefined;
    let cpuRatio = -Infinity;
    for (const track of pc.tracks.values()) {
      if (judgeFreeze && track.freezeObservedMs > 0 && track.freezeObservedMs >= thresholds.minObservedMs) {
        const ratioPct = (100 * track.frozenMs) / track.freezeObservedMs;
        if (ratioPct > thresholds.freezeRatioPct && wins(ratioPct, track, freezeRatio, freezeTrack)) {
          freezeRatio = ratioPct;
          freezeTrack = track;
        }
      }
      if (judgeCpu && track.cpuObservedMs > 0 && track.cpuObservedMs >= thresholds.minObservedMs) {
        const ratioPct = track.cpuWeighted / track.cpuObservedMs;
        if (ratioPct > thresholds.cpuLimitedPct && wins(ratioPct, track, cpuRatio, cpuTrack)) {
          cpuRatio = ratioPct;
          cpuTrack = track;
        }
      }
    }
    if (freezeTrack !== undefined) {
      record(
        emit('webrtc_freeze', t, pc.id, freezeTrack.id, {
          reason: 'ratio',
          ratioPct: roundTo2(freezeRatio),
          freezeMs: freezeTrack.frozenMs,
          observedMs: freezeTrack.freezeObservedMs,
          threshold: thresholds.freezeRatioPct,
        }),
        pc,
      );
    }
    if (cpuTrack !== undefined) {
      record(
        emit('webrtc_cpu_limited', t, pc.id, cpuTrack.id, {
          ratioPct: roundTo2(cpuRatio),
          limitedMs: Math.round(cpuTrack.cpuWeighted / 100),
          observedMs: cpuTrack.cpuObservedMs,
          threshold: thresholds.cpuLimitedPct,
        }),
        pc,
      );
    }
  }

  function processEvent(event: CallEvent, t: number): void {
    const name = event.name;
    if (name === 'media_error') {
      const errorName = event.errorName;
      const kind: DetectorKind | undefined =
        errorName === 'NotAllowedError'
          ? 'webrtc_media_permission_denied'
          : errorName === 'NotReadableError' || errorName === 'NotFoundError'
            ? 'webrtc_device_unavailable'
            : undefined;
      if (kind === undefined) return;
      const pcId = typeof event.pc === 'string' ? event.pc : undefined;
      const state = pcId === undefined ? undefined : peerConnection(pcId);
      if (state?.closed) return;
      const evidence: Record<string, number | string | boolean> = { errorName: errorName as string };
      if (typeof event.kind === 'string') evidence.mediaKind = event.kind;
      record(emit(kind, t, pcId, undefined, evidence), state);
      return;
    }
    if (typeof event.pc !== 'string') return;
    const pc = peerConnection(event.pc);
    if (pc.closed) return;
    switch (name) {
      case 'pc_created':
        if (Number.isNaN(pc.deadline) && event.tracked !== false && !pc.connected) {
          pc.deadline = t + thresholds.connectTimeoutMs;
          awaitingConnection.push(pc);
        }
        return;
      case 'connection_state':
        if (event.state === 'connected') pc.connected = true;
        else if (event.state === 'failed' && fires(pc, 'webrtc_connect_failure'))
          connectFailure(pc, t, 'failed');
        return;
      case 'candidate_pair_change':
        if (event.relayed === true) relayFallback(pc, t, 'candidate_pair_change', event);
        if (event.initial === false) {
          pc.reconnects.push({ t, restart: false });
          reconnectTouched.push(pc);
        }
        return;
      case 'ice_restart':
        pc.reconnects.push({ t, restart: true });
        reconnectTouched.push(pc);
        return;
      case 'track_added':
      case 'track_muted':
      case 'track_unmuted':
      case 'track_ended': {
        if (typeof event.track !== 'string') return;
        const track = trackState(pc, event.track);
        if (track.liveness !== ENDED) {
          track.liveness = name === 'track_muted' ? MUTED : name === 'track_ended' ? ENDED : LIVE;
        }
        if (
          name === 'track_unmuted' &&
          event.kind === 'video' &&
          event.dir === 'in' &&
          isFiniteNumber(event.freezeMs) &&
          event.freezeMs > thresholds.freezeSingleMs &&
          fires(pc, 'webrtc_freeze')
        ) {
          record(
            emit('webrtc_freeze', t, pc.id, track.id, {
              reason: 'single',
              source: 'unmute',
              freezeMs: event.freezeMs,
              threshold: thresholds.freezeSingleMs,
            }),
            pc,
          );
        }
        return;
      }
      case 'pc_closed': {
        judgeRatios(pc, t);
        const samples = pc.abandonSamples;
        if (
          isFiniteNumber(event.durationMs) &&
          event.durationMs < thresholds.abandonMs &&
          samples !== undefined &&
          samples.length > 0 &&
          fires(pc, 'webrtc_call_abandoned')
        ) {
          const score = scoreCall(samples);
          if (score !== null && score < thresholds.abandonScore) {
            record(
              emit('webrtc_call_abandoned', t, pc.id, undefined, {
                durationMs: event.durationMs,
                score,
                samples: samples.length,
              }),
              pc,
            );
          }
        }
        pc.closed = true;
        pc.abandonSamples = undefined;
        pc.tracks.clear();
        pc.reconnects = [];
        return;
      }
      default:
        return;
    }
  }

  function processSample(sample: CallSample, t: number): void {
    if (typeof sample.pc !== 'string') return;
    const pc = peerConnection(sample.pc);
    if (pc.closed) return;
    const sampleNumber = ++pc.sampleNumber;
    const conn = sample.conn;
    if (typeof conn === 'object' && conn !== null) {
      if (conn.state === 'connected') pc.connected = true;
      else if (conn.state === 'failed' && fires(pc, 'webrtc_connect_failure'))
        connectFailure(pc, t, 'failed');
      if (conn.relayed === true) relayFallback(pc, t, 'sample', conn);
    }
    const windowMs = sample.windowMs;
    const usableWindow = isFiniteNumber(windowMs) && windowMs > 0;
    const tracks = sample.tracks;
    if (pc.abandonSamples !== undefined) {
      pc.abandonSamples.push(sample);
      if (usableWindow) pc.abandonWindowMs += windowMs;
      // Windows adding up to more than abandonMs prove the call lasted longer: stop keeping them.
      if (pc.abandonWindowMs > thresholds.abandonMs) pc.abandonSamples = undefined;
    }
    if (!usableWindow || !Array.isArray(tracks)) {
      pc.lastSampleEnd = NaN;
      pc.oneWayIn.active = false;
      pc.oneWayOut.active = false;
      return;
    }
    const start = t - windowMs;
    const end = t;
    let candidates: Finding[] | undefined;
    const consider = (candidate: Finding): void => {
      candidates ??= [];
      const index = candidates.findIndex((existing) => existing.kind === candidate.kind);
      if (index < 0) candidates.push(candidate);
      else if (better(candidate, candidates[index])) candidates[index] = candidate;
    };
    /**
     * A metric above its threshold over contiguous windows of one track fires once the run covers
     * `sustainMs`, at `run start + sustainMs`; a window without the metric (or under the
     * threshold) ends the run.
     */
    const sustainedAbove = (
      run: Run,
      value: number | undefined,
      threshold: number,
      sustainMs: number,
      detector: DetectorKind,
      trackId: string,
      evidence: (worst: number, sustainedMs: number) => Record<string, number | string | boolean>,
    ): void => {
      if (!isFiniteNumber(value) || value <= threshold) {
        run.active = false;
        return;
      }
      const covered = extendRun(run, start, end, value, false);
      if (covered >= sustainMs && fires(pc, detector)) {
        consider(emit(detector, run.start + sustainMs, pc.id, trackId, evidence(run.worst, covered)));
      }
    };
    let inLive = 0;
    let inStalled = 0;
    let inMoving = 0;
    let outLive = 0;
    let outStalled = 0;
    let outMoving = 0;
    let inStalledTrack: string | undefined;
    let outStalledTrack: string | undefined;

    for (const entry of tracks as readonly TrackSample[]) {
      if (typeof entry !== 'object' || entry === null) continue;
      const id = entry.id;
      const kind = entry.kind;
      const dir = entry.dir;
      const track = typeof id === 'string' ? trackState(pc, id) : undefined;
      // One-way media: live (not muted, not ended) tracks only.
      if (track === undefined || track.liveness === LIVE) {
        const stalled = entry.stalled;
        if (dir === 'in') {
          inLive++;
          if (stalled === true) {
            inStalled++;
            inStalledTrack = typeof id === 'string' ? id : undefined;
          } else if (stalled === false) inMoving++;
        } else if (dir === 'out') {
          outLive++;
          if (stalled === true) {
            outStalled++;
            outStalledTrack = typeof id === 'string' ? id : undefined;
          } else if (stalled === false) outMoving++;
        }
      }
      if (track === undefined) continue;

      // A window that is not contiguous with this track's previous one (or whose previous
      // sample lacked the track) breaks every run of the track.
      if (track.lastSampleNumber !== sampleNumber - 1 || !(start <= track.lastEnd + CONTIGUITY_MS)) {
        track.loss.active = false;
        track.rtt.active = false;
        track.concealment.active = false;
        track.lowResolution.active = false;
      }
      track.lastSampleNumber = sampleNumber;
      track.lastEnd = end;

      sustainedAbove(
        track.loss,
        entry.lossPct,
        thresholds.lossPct,
        thresholds.lossSustainMs,
        'webrtc_packet_loss',
        id,
        (worst, sustainedMs) => ({
          lossPct: worst,
          sustainedMs,
          threshold: thresholds.lossPct,
          mediaKind: String(kind),
          dir: String(dir),
        }),
      );
      sustainedAbove(
        track.rtt,
        entry.rttMs,
        thresholds.rttMs,
        thresholds.rttSustainMs,
        'webrtc_high_latency',
        id,
        (worst, sustainedMs) => ({
          rttMs: worst,
          sustainedMs,
          threshold: thresholds.rttMs,
        }),
      );

      if (kind === 'audio') {
        if (dir !== 'in') continue;
        sustainedAbove(
          track.concealment,
          entry.concealmentPct,
          thresholds.concealmentPct,
          thresholds.concealmentSustainMs,
          'webrtc_audio_dropout',
          id,
          (worst, sustainedMs) => ({
            concealmentPct: worst,
            sustainedMs,
            threshold: thresholds.concealmentPct,
          }),
        );
        continue;
      }
      if (kind !== 'video') continue;

      if (dir === 'out') {
        const limitedByCpuPct = entry.limitedByCpuPct;
        if (isFiniteNumber(limitedByCpuPct)) {
          track.cpuWeighted += Math.min(100, Math.max(0, limitedByCpuPct)) * windowMs;
          track.cpuObservedMs += windowMs;
        } else if (typeof entry.qualityLimitation === 'string') {
          if (entry.qualityLimitation === 'cpu') track.cpuWeighted += 100 * windowMs;
          track.cpuObservedMs += windowMs;
        }
        continue;
      }
      if (dir !== 'in') continue;

      // Freeze: one long freeze in this window, and the frozen share for the ratio rule.
      const freezeMs = entry.freezeMs;
      if (isFiniteNumber(freezeMs)) {
        track.frozenMs += Math.min(windowMs, Math.max(0, freezeMs));
        track.freezeObservedMs += windowMs;
      }
      if (fires(pc, 'webrtc_freeze')) {
        const maxFreezeMs = entry.maxFreezeMs;
        const freezes = entry.freezes;
        let longest = -Infinity;
        let source = '';
        if (isFiniteNumber(maxFreezeMs)) {
          longest = maxFreezeMs;
          source = 'maxFreezeMs';
        }
        if (
          isFiniteNumber(freezeMs) &&
          isFiniteNumber(freezes) &&
          freezes > 0 &&
          freezeMs / freezes > longest
        ) {
          longest = freezeMs / freezes;
          source = 'average';
        }
        if (longest > thresholds.freezeSingleMs) {
          consider(
            emit('webrtc_freeze', t, pc.id, id, {
              reason: 'single',
              source,
              freezeMs: longest,
              threshold: thresholds.freezeSingleMs,
            }),
          );
        }
      }

      // Low resolution: h below the threshold after a good height was seen on the track.
      const h = entry.h;
      if (isFiniteNumber(h)) {
        if (h < thresholds.lowResHeight && track.goodHeight >= 0) {
          const covered = extendRun(track.lowResolution, start, end, h, true);
          if (covered >= thresholds.lowResSustainMs && fires(pc, 'webrtc_low_resolution')) {
            consider(
              emit(
                'webrtc_low_resolution',
                track.lowResolution.start + thresholds.lowResSustainMs,
                pc.id,
                id,
                {
                  h: track.lowResolution.worst,
                  previousH: track.goodHeight,
                  sustainedMs: covered,
                  threshold: thresholds.lowResHeight,
                },
              ),
            );
          }
        } else {
          track.lowResolution.active = false;
          if (h >= thresholds.lowResHeight) track.goodHeight = h;
        }
      } else track.lowResolution.active = false;
    }

    // One-way media: one direction's live tracks all stalled while the other moved packets.
    if (!(start <= pc.lastSampleEnd + CONTIGUITY_MS)) {
      pc.oneWayIn.active = false;
      pc.oneWayOut.active = false;
    }
    pc.lastSampleEnd = end;
    const inOneWay = inLive > 0 && inStalled === inLive && outMoving > 0;
    const outOneWay = outLive > 0 && outStalled === outLive && inMoving > 0;
    if (!inOneWay) pc.oneWayIn.active = false;
    if (!outOneWay) pc.oneWayOut.active = false;
    if ((inOneWay || outOneWay) && fires(pc, 'webrtc_one_way_media')) {
      const run = inOneWay ? pc.oneWayIn : pc.oneWayOut;
      const stalledTracks = inOneWay ? inStalled : outStalled;
      const covered = extendRun(run, start, end, stalledTracks, false);
      if (covered >= thresholds.oneWayMs) {
        const single = stalledTracks === 1 ? (inOneWay ? inStalledTrack : outStalledTrack) : undefined;
        consider(
          emit('webrtc_one_way_media', run.start + thresholds.oneWayMs, pc.id, single, {
            direction: inOneWay ? 'in' : 'out',
            stalledTracks,
            sustainedMs: covered,
            threshold: thresholds.oneWayMs,
          }),
        );
      }
    }
    if (candidates !== undefined) for (const candidate of candidates) record(candidate, pc);
  }

  function evaluateReconnects(t: number): void {
    for (const pc of reconnectTouched) {
      if (!fires(pc, 'webrtc_reconnect_storm')) continue;
      const since = t - thresholds.reconnectWindowMs;
      pc.reconnects = pc.reconnects.filter((entry) => entry.t >= since);
      const count = pc.reconnects.length;
      if (count >= thresholds.reconnectCount) {
        const iceRestarts = pc.reconnects.filter((entry) => entry.restart).length;
        record(
          emit('webrtc_reconnect_storm', t, pc.id, undefined, {
            count,
            windowMs: thresholds.reconnectWindowMs,
            iceRestarts,
            pairChanges: count - iceRestarts,
          }),
          pc,
        );
      }
    }
    reconnectTouched.length = 0;
  }

  function flush(): void {
    if (pending.length === 0) return;
    const t = pendingT;
    const batch = sortBatch(pending);
    pending = [];
    for (const item of batch) {
      if (item.type === 'call.sample') processSample(item, t);
      else processEvent(item, t);
    }
    if (reconnectTouched.length > 0) evaluateReconnects(t);
    if (t > settledT) settledT = t;
  }

  /** Fires the connect timeouts that expired before `time` (or at it, when `inclusive`). */
  function expire(time: number, inclusive: boolean): void {
    if (awaitingConnection.length === 0) return;
    const still: PeerConnectionState[] = [];
    for (const pc of awaitingConnection) {
      if (pc.connected || pc.closed || !fires(pc, 'webrtc_connect_failure')) continue;
      if (inclusive ? pc.deadline <= time : pc.deadline < time) connectFailure(pc, pc.deadline, 'timeout');
      else still.push(pc);
    }
    awaitingConnection = still;
  }

  function take(): Finding[] {
    const result = emitted;
    emitted = [];
    return result.sort(compareFindings);
  }

  const detector: Detector & { [readState]: () => EngineState } = {
    push(item) {
      if (!isItem(item)) return [];
      const t = item.t;
      if (pending.length > 0) {
        if (t > pendingT) {
          flush();
          expire(t, false);
          pendingT = t;
        }
      } else if (t > settledT) {
        expire(t, false);
        pendingT = t;
      } else {
        pendingT = settledT;
      }
      pending.push(item);
      return take();
    },
    advance(now) {
      if (!isFiniteNumber(now)) return [];
      if (pendingT <= now) flush(); // (nothing to do without a pending batch)
      const time = Math.max(now, settledT);
      expire(time, true);
      settledT = time;
      for (const pc of peerConnections.values()) if (!pc.closed) judgeRatios(pc, time);
      return take();
    },
    findings() {
      if (!sorted) {
        all.sort(compareFindings);
        sorted = true;
      }
      return all.slice();
    },
    [readState]: () => [
      thresholds,
      peerConnections,
      awaitingConnection,
      sessionFired,
      all,
      pending,
      pendingT,
      settledT,
    ],
  };
  return detector;
}

/** Whether a track's ratio beats the best so far: higher ratio, then lower track id. */
function wins(ratio: number, track: TrackState, bestRatio: number, best: TrackState | undefined): boolean {
  if (best === undefined || ratio > bestRatio) return true;
  return ratio === bestRatio && track.id < best.id;
}

/**
 * Runs every detector over the `call.*` events of one session (any number of peer connections)
 * and returns the findings in canonical order (by `t`, `kind`, `pc`, `track`). The items may come
 * in any order: they are sorted stably by `t` first. Equals `createDetector(options)`, `push`
 * of every item, then `advance(now)` with `now` defaulting to (and never below) the last `t`.
 * Never throws; items that are not `call.sample`/`call.event` objects with a finite `t` are
 * ignored.
 *
 * @example
 * ```ts
 * import { detect } from '@svc/detectors';
 *
 * const findings = detect(chunk.events.filter((event) => event.type.startsWith('call.')));
 * // [{ kind: 'webrtc_relay_fallback', severity: 'info', t: 1763700000800, pc: 'pc_01J...', evidence: { source: 'candidate_pair_change', ... } }]
 * ```
 */
export function detect(items: readonly DetectorItem[], options?: DetectorOptions): Finding[] {
  const detector = createDetector(options);
  const valid = Array.isArray(items) ? (items as readonly unknown[]).filter(isItem) : [];
  let last = -Infinity;
  let ordered = true;
  for (const item of valid) {
    if (item.t < last) ordered = false;
    else last = item.t;
  }
  const timeline = ordered ? valid : valid.slice().sort((left, right) => left.t - right.t);
  for (const item of timeline) detector.push(item);
  const now = options?.now;
  const end = isFiniteNumber(now) ? Math.max(now, last) : last;
  if (Number.isFinite(end)) detector.advance(end);
  return detector.findings();
}
