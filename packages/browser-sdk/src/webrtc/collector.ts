import {
  createDetector,
  type DetectorItem,
  type Finding,
  resolveThresholds,
  type Thresholds,
} from '@svc/detectors';
import { scoreSample } from '@svc/quality-score';
import { createId } from '../ids.ts';
import type { WireEvent } from '../session-writer.ts';
import { type StatsSnapshot, type StatsWindow, statsWindow, toSnapshot } from './stats/index.ts';

/** What the governor lets the collector send now (see `governorPolicy`). */
export interface CollectorPolicy {
  sampleIntervalSec: number | null;
  thresholdCrossingsOnly: boolean;
  lifecycleEventsOnly: boolean;
}

export interface CollectorOptions {
  /** Receives every `call.sample` and `call.event` (and nothing else). */
  emit(event: WireEvent): void;
  /** Seconds between regular samples while every detector is quiet. Default 5. */
  sampleIntervalSec?: number;
  /** Emit 1 s samples at once when a detector threshold is crossed, until it clears. Default true. */
  emitOnThresholdCross?: boolean;
  /** Peer connections sampled at most; later ones are counted (`pc_created` `tracked: false`). Default 8. */
  maxPeerConnections?: number;
  /** The project's detector thresholds (from `GET /v1/config`). */
  thresholds?: Partial<Thresholds>;
  /** The governor's policy now. Default: 5 s samples, everything allowed. */
  policy?: () => CollectorPolicy;
  /** Called for every finding of the on-device detectors (recording triggers `webrtc:<kind>`). */
  onFinding?: (finding: Finding) => void;
  /** Poll period in ms. Default 1000 (PROTOCOL.md §2). */
  pollMs?: number;
  /** Per-session salt of the `deviceId` hash. */
  salt?: string;
}

/** A tracked peer connection as `webrtc.list()` shows it (from its last 1 s window). */
export interface TrackedConnection {
  pc: string;
  state: string;
  relayed?: boolean;
  rttMs?: number;
  /** The highest inbound loss of its tracks. */
  lossPct?: number;
  /** The highest inbound video frame rate. */
  fps?: number;
  score?: number;
}

export interface Collector {
  /** Tracks a peer connection created before the collector loaded (idempotent); returns its `pc_` id. */
  attach(pc: RTCPeerConnection, configuration?: RTCConfiguration): string;
  list(): TrackedConnection[];
  /** Wraps `RTCPeerConnection`, `getUserMedia`, `getDisplayMedia` and device changes of `target`. */
  instrument(target?: typeof globalThis): void;
  stop(): void;
}

interface Tracked {
  id: string;
  pc: RTCPeerConnection;
  tracked: boolean;
  createdAt: number;
  closed: boolean;
  states: Record<string, { state: string; at: number }>;
  previous?: StatsSnapshot;
  lastEmitted?: StatsSnapshot;
  hot: boolean;
  path?: string;
  trackIds: Map<string, string>;
  trackFacts: Map<string, { codec?: string; w?: number; h?: number }>;
  last?: TrackedConnection;
  polling: boolean;
}

/** PROTOCOL.md §3's table (the SDK cannot load `@svc/protocol` at run time; a test compares them). */
const MEDIA_ERROR_CLASSES: Readonly<Record<string, string>> = {
  NotAllowedError: 'permission_denied',
  NotReadableError: 'device_in_use',
  NotFoundError: 'device_not_found',
  OverconstrainedError: 'constraints_unsatisfied',
  AbortError: 'aborted',
  SecurityError: 'security',
  TypeError: 'type_error',
};

/**
 * The `media_error` class of a DOMException name, as `@svc/protocol`'s `classifyMediaError`:
 * exact names; anything else (`constructor` included) is `unknown`.
 *
 * @example
 * ```ts
 * classifyMediaError('NotAllowedError'); // 'permission_denied'
 * ```
 */
export function classifyMediaError(errorName: string): string {
  return Object.hasOwn(MEDIA_ERROR_CLASSES, errorName)
    ? (MEDIA_ERROR_CLASSES[errorName] as string)
    : 'unknown';
}

const STATE_EVENTS: ReadonlyArray<[string, string, keyof RTCPeerConnection]> = [
  ['connectionstatechange', 'connection_state', 'connectionState'],
  ['iceconnectionstatechange', 'ice_state', 'iceConnectionState'],
  ['icegatheringstatechange', 'ice_gathering', 'iceGatheringState'],
  ['signalingstatechange', 'signaling_state', 'signalingState'],
];

async function hashDeviceId(salt: string, deviceId: string): Promise<string | undefined> {
  if (deviceId === '' || typeof crypto?.subtle === 'undefined') return undefined;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${salt}:${deviceId}`));
  return [...new Uint8Array(digest).slice(0, 8)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The WebRTC collector (PROTOCOL.md §2–§3): every tracked peer connection's `getStats()` is
 * polled at 1 Hz and differenced on the device (`statsWindow`); the 1 s windows feed
 * `@svc/detectors`, and samples go out every `sampleIntervalSec` covering the whole interval, or
 * at once (1 s windows, with `cross`) while a detector threshold is crossed. Lifecycle and media
 * events go out as they happen, never thinned. ICE candidate addresses, SDP, device labels and
 * data-channel payloads are never read into events; `deviceId` is a salted hash.
 *
 * @example
 * ```ts
 * const collector = createCollector({ emit: (event) => writer.push(event) });
 * collector.instrument(); // wraps RTCPeerConnection, getUserMedia, getDisplayMedia, devicechange
 * ```
 */
export function createCollector(options: CollectorOptions): Collector {
  const thresholds = resolveThresholds(options.thresholds);
  const detector = createDetector({ thresholds });
  const maxConnections = options.maxPeerConnections ?? 8;
  const crossing = options.emitOnThresholdCross ?? true;
  const salt = options.salt ?? createId('ses');
  const policy =
    options.policy ??
    (() => ({
      sampleIntervalSec: options.sampleIntervalSec ?? 5,
      thresholdCrossingsOnly: false,
      lifecycleEventsOnly: false,
    }));
  const byPc = new WeakMap<RTCPeerConnection, Tracked>();
  const all: Tracked[] = [];
  const restore: Array<() => void> = [];
  let timer: ReturnType<typeof setInterval> | undefined;

  const findingsOf = (item: DetectorItem) => {
    for (const finding of detector.push(item)) options.onFinding?.(finding);
  };

  function event(tracked: Tracked | undefined, name: string, fields: Record<string, unknown> = {}) {
    const item = {
      t: Date.now(),
      type: 'call.event',
      ...(tracked === undefined ? {} : { pc: tracked.id }),
      name,
      ...fields,
    } as WireEvent;
    options.emit(item);
    findingsOf(item as unknown as DetectorItem);
  }

  /** Whether a window still shows a crossed condition (keeps 1 s emission going). */
  function hot(window: StatsWindow): boolean {
    return window.tracks.some(
      (track) =>
        (track.lossPct ?? 0) > thresholds.lossPct ||
        (track.rttMs ?? 0) > thresholds.rttMs ||
        (track.dir === 'in' &&
          track.kind === 'audio' &&
          (track.concealmentPct ?? 0) > thresholds.concealmentPct) ||
        (track.freezes ?? 0) > 0 ||
        track.stalled === true,
    );
  }

  function sampleOf(tracked: Tracked, window: StatsWindow, takenAt: number, cross?: string[]) {
    const tracks = window.tracks.map(({ key, ...metrics }) => {
      let id = tracked.trackIds.get(key);
      if (id === undefined) {
        id = `trk_${tracked.trackIds.size.toString(36)}${createId('pc').slice(-6).toLowerCase()}`;
        tracked.trackIds.set(key, id);
        event(tracked, 'track_added', { track: id, kind: metrics.kind, dir: metrics.dir });
      }
      return { id, ...metrics };
    });
    const sample = {
      t: Math.round(takenAt),
      type: 'call.sample' as const,
      pc: tracked.id,
      windowMs: window.windowMs,
      conn: { state: tracked.pc.connectionState, ...window.conn },
      tracks,
      ...(cross === undefined ? {} : { cross }),
    };
    const score = scoreSample(sample as never);
    return score === null ? sample : { ...sample, score };
  }

  /** Lifecycle events the windows reveal: the selected path, codecs and resolutions. */
  function changes(tracked: Tracked, window: StatsWindow) {
    const conn = window.conn;
    if (conn?.localType !== undefined && conn.remoteType !== undefined) {
      const path = `${conn.localType}/${conn.remoteType}/${conn.protocol}/${conn.relayed}/${conn.network}`;
      if (path !== tracked.path) {
        event(tracked, 'candidate_pair_change', {
          localType: conn.localType,
          remoteType: conn.remoteType,
          ...(conn.protocol === undefined ? {} : { protocol: conn.protocol }),
          relayed: conn.relayed ?? (conn.localType === 'relay' || conn.remoteType === 'relay'),
          ...(conn.network === undefined ? {} : { network: conn.network }),
          initial: tracked.path === undefined,
        });
        tracked.path = path;
      }
    }
    for (const track of window.tracks) {
      const id = tracked.trackIds.get(track.key);
      if (id === undefined) continue;
      const facts = tracked.trackFacts.get(track.key) ?? {};
      if (track.codec !== undefined && facts.codec !== undefined && track.codec !== facts.codec)
        event(tracked, 'codec_change', { track: id, codec: track.codec, prev: facts.codec });
      if (
        track.w !== undefined &&
        track.h !== undefined &&
        facts.w !== undefined &&
        facts.h !== undefined &&
        (track.w !== facts.w || track.h !== facts.h)
      )
        event(tracked, 'resolution_change', {
          track: id,
          w: track.w,
          h: track.h,
          prevW: facts.w,
          prevH: facts.h,
        });
      const codec = track.codec ?? facts.codec;
      const w = track.w ?? facts.w;
      const h = track.h ?? facts.h;
      tracked.trackFacts.set(track.key, {
        ...(codec === undefined ? {} : { codec }),
        ...(w === undefined ? {} : { w }),
        ...(h === undefined ? {} : { h }),
      });
    }
  }

  async function poll(tracked: Tracked): Promise<void> {
    if (tracked.polling || tracked.closed || !tracked.tracked) return;
    tracked.polling = true;
    try {
      const snapshot = toSnapshot(await tracked.pc.getStats(), Date.now());
      const window = statsWindow(tracked.previous, snapshot);
      tracked.previous = snapshot;
      if (window.windowMs === 0) {
        tracked.lastEmitted = snapshot;
        return;
      }
      const now = policy();
      const second = sampleOf(tracked, window, snapshot.takenAt);
      changes(tracked, window);
      const before = detector.findings().length;
      findingsOf(second as unknown as DetectorItem);
      const crossed = detector
        .findings()
        .slice(before)
        .filter((finding) => finding.pc === tracked.id)
        .map((finding) => finding.kind);
      const inbound = second.tracks.filter((track) => track.dir === 'in');
      tracked.last = {
        pc: tracked.id,
        state: tracked.pc.connectionState,
        ...(window.conn?.relayed === undefined ? {} : { relayed: window.conn.relayed }),
        ...(second.tracks.find((track) => track.rttMs !== undefined)?.rttMs === undefined
          ? {}
          : { rttMs: second.tracks.find((track) => track.rttMs !== undefined)?.rttMs }),
        ...(inbound.some((track) => track.lossPct !== undefined)
          ? { lossPct: Math.max(...inbound.map((track) => track.lossPct ?? 0)) }
          : {}),
        ...(inbound.some((track) => track.fps !== undefined)
          ? { fps: Math.max(...inbound.map((track) => track.fps ?? 0)) }
          : {}),
        ...('score' in second ? { score: second.score } : {}),
      } as TrackedConnection;
      if (now.lifecycleEventsOnly) return;
      if (crossing && (crossed.length > 0 || (tracked.hot && hot(window)))) {
        // A problem: full resolution until it clears.
        tracked.hot = true;
        options.emit(
          (crossed.length > 0
            ? sampleOf(tracked, window, snapshot.takenAt, crossed)
            : second) as unknown as WireEvent,
        );
        tracked.lastEmitted = snapshot;
        return;
      }
      tracked.hot = false;
      if (now.thresholdCrossingsOnly || now.sampleIntervalSec === null) return;
      const since = tracked.lastEmitted;
      if (since === undefined || snapshot.takenAt - since.takenAt >= now.sampleIntervalSec * 1000 - 100) {
        const whole = statsWindow(since, snapshot);
        if (whole.windowMs > 0)
          options.emit(sampleOf(tracked, whole, snapshot.takenAt) as unknown as WireEvent);
        tracked.lastEmitted = snapshot;
      }
    } catch {
      // A closed connection's getStats rejects: its pc_closed says the rest.
    } finally {
      tracked.polling = false;
    }
  }

  function tick() {
    for (const tracked of all) void poll(tracked);
    for (const finding of detector.advance(Date.now())) options.onFinding?.(finding);
  }

  function attach(pc: RTCPeerConnection, configuration?: RTCConfiguration): string {
    const known = byPc.get(pc);
    if (known !== undefined) return known.id;
    const tracked: Tracked = {
      id: createId('pc'),
      pc,
      tracked: all.filter((entry) => entry.tracked).length < maxConnections,
      createdAt: Date.now(),
      closed: false,
      states: {},
      hot: false,
      trackIds: new Map(),
      trackFacts: new Map(),
      polling: false,
    };
    byPc.set(pc, tracked);
    all.push(tracked);
    event(tracked, 'pc_created', {
      state: pc.connectionState,
      iceServers: (configuration ?? pc.getConfiguration?.())?.iceServers?.length ?? 0,
      tracked: tracked.tracked,
    });
    for (const [type, name, property] of STATE_EVENTS) {
      tracked.states[name] = { state: String(pc[property]), at: tracked.createdAt };
      pc.addEventListener(type, () => {
        const previous = tracked.states[name] as { state: string; at: number };
        const state = String(pc[property]);
        if (state === previous.state) return;
        const at = Date.now();
        event(tracked, name, { state, prev: previous.state, prevMs: at - previous.at });
        tracked.states[name] = { state, at };
        if (name === 'connection_state' && state === 'closed') close(tracked);
      });
    }
    pc.addEventListener('icecandidateerror', (error) => {
      const candidate = error as RTCPeerConnectionIceErrorEvent;
      // The error text only: never the server's address or URL.
      event(tracked, 'ice_candidate_error', {
        errorCode: candidate.errorCode,
        ...(candidate.errorText ? { errorText: String(candidate.errorText).slice(0, 256) } : {}),
      });
    });
    pc.addEventListener('datachannel', (channel) => {
      const { channel: dataChannel } = channel as RTCDataChannelEvent;
      event(tracked, 'data_channel', {
        label: dataChannel.label.slice(0, 256),
        state: dataChannel.readyState,
      });
    });
    const originalClose = pc.close.bind(pc);
    pc.close = () => {
      originalClose();
      close(tracked);
    };
    const restartIce = pc.restartIce?.bind(pc);
    if (restartIce !== undefined) {
      pc.restartIce = () => {
        event(tracked, 'ice_restart');
        restartIce();
      };
    }
    timer ??= setInterval(tick, options.pollMs ?? 1000);
    return tracked.id;
  }

  function close(tracked: Tracked) {
    if (tracked.closed) return;
    tracked.closed = true;
    event(tracked, 'pc_closed', { durationMs: Date.now() - tracked.createdAt });
  }

  async function mediaAcquired(stream: MediaStream, screen: boolean) {
    for (const track of stream.getTracks()) {
      const settings = track.getSettings?.() ?? {};
      const deviceId = screen ? undefined : await hashDeviceId(salt, settings.deviceId ?? '');
      event(undefined, 'media_acquired', {
        kind: screen ? 'screen' : track.kind,
        ...(settings.width === undefined ? {} : { w: settings.width }),
        ...(settings.height === undefined ? {} : { h: settings.height }),
        ...(settings.frameRate === undefined ? {} : { fps: Math.round(settings.frameRate * 10) / 10 }),
        ...(deviceId === undefined ? {} : { deviceId }),
      });
    }
  }

  function mediaError(error: unknown, constraints: MediaStreamConstraints | undefined, screen: boolean) {
    const name =
      error instanceof Error || (typeof error === 'object' && error !== null && 'name' in error)
        ? String((error as { name: unknown }).name)
        : 'Error';
    const kind = screen ? 'screen' : constraints?.video ? 'video' : constraints?.audio ? 'audio' : undefined;
    event(undefined, 'media_error', {
      errorName: name.slice(0, 64),
      class: classifyMediaError(name),
      ...(kind === undefined ? {} : { kind }),
    });
  }

  async function inventory(name: 'device_inventory' | 'device_change', devices: MediaDevices) {
    try {
      const list = await devices.enumerateDevices();
      const count = (kind: MediaDeviceKind) => list.filter((device) => device.kind === kind).length;
      event(undefined, name, {
        audioinput: count('audioinput'),
        videoinput: count('videoinput'),
        audiooutput: count('audiooutput'),
      });
    } catch {
      // Not allowed here: no inventory.
    }
  }

  return {
    attach,
    list() {
      return all
        .filter((tracked) => tracked.tracked)
        .map((tracked) => tracked.last ?? { pc: tracked.id, state: tracked.pc.connectionState });
    },
    instrument(target = globalThis) {
      const Original = target.RTCPeerConnection;
      if (Original !== undefined) {
        class InstrumentedPeerConnection extends Original {
          constructor(configuration?: RTCConfiguration) {
            super(configuration);
            attach(this, configuration);
          }
        }
        target.RTCPeerConnection = InstrumentedPeerConnection;
        restore.push(() => {
          target.RTCPeerConnection = Original;
        });
      }
      const devices = target.navigator?.mediaDevices;
      if (devices === undefined) return;
      const getUserMedia = devices.getUserMedia?.bind(devices);
      if (getUserMedia !== undefined) {
        devices.getUserMedia = async (constraints) => {
          try {
            const stream = await getUserMedia(constraints);
            void mediaAcquired(stream, false);
            return stream;
          } catch (error) {
            mediaError(error, constraints, false);
            throw error;
          }
        };
        restore.push(() => {
          devices.getUserMedia = getUserMedia;
        });
      }
      const getDisplayMedia = devices.getDisplayMedia?.bind(devices);
      if (getDisplayMedia !== undefined) {
        devices.getDisplayMedia = async (constraints) => {
          try {
            const stream = await getDisplayMedia(constraints);
            void mediaAcquired(stream, true);
            return stream;
          } catch (error) {
            mediaError(error, constraints, true);
            throw error;
          }
        };
        restore.push(() => {
          devices.getDisplayMedia = getDisplayMedia;
        });
      }
      void inventory('device_inventory', devices);
      const onChange = () => void inventory('device_change', devices);
      devices.addEventListener?.('devicechange', onChange);
      restore.push(() => devices.removeEventListener?.('devicechange', onChange));
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      for (const undo of restore.splice(0)) undo();
    },
  };
}
