import {
  createDetector,
  type DetectorItem,
  type Finding,
  resolveThresholds,
  type Thresholds,
} from '@svc/detectors';
import { scoreSample } from '@svc/quality-score';
import type { WireEvent } from '../session-writer.ts';
import { type StatsSnapshot, type StatsWindow, statsWindow, toSnapshot } from './stats/index.ts';
import type { RTCStatsLike } from './stats/snapshot.ts';
import { trackKey } from './stats/track.ts';

/** What the governor lets the collector send now (see `governorPolicy`). */
export interface CollectorPolicy {
  sampleIntervalSec: number | null;
  thresholdCrossingsOnly?: boolean;
  lifecycleEventsOnly?: boolean;
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
  /**
   * Send the session descriptions each connection applies, redacted (see `redactSdp`), as
   * `call.event`s named `sdp` with `side` (`local` | `remote`), `sdpType` and `sdp`. Not a
   * PROTOCOL.md v1 event name: v1 servers skip it (an additive change). Default false.
   */
  captureSdp?: boolean;
  /** Strict privacy mode: no SDP whatever `captureSdp` says, no device labels. Default false. */
  strictPrivacy?: boolean;
  /**
   * The project's configuration is on its way (the core's `GET /v1/config`): what the detectors
   * are fed is kept until {@link Collector.configure} brings their thresholds, then judged with
   * them, and device labels wait for the privacy mode it brings. Default false.
   */
  awaitConfiguration?: boolean;
}

/**
 * What {@link Collector.configure} changes while the collector runs; a field left out stays as it is.
 *
 * @example
 * ```ts
 * const configuration: CollectorConfiguration = { thresholds: { lossPct: 8 }, sampleIntervalSec: 10 };
 * collector.configure(configuration);
 * ```
 */
export type CollectorConfiguration = Pick<
  CollectorOptions,
  | 'sampleIntervalSec'
  | 'emitOnThresholdCross'
  | 'maxPeerConnections'
  | 'thresholds'
  | 'captureSdp'
  | 'strictPrivacy'
>;

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
  attach(pc: RTCPeerConnection): string;
  list(): TrackedConnection[];
  /** Wraps `RTCPeerConnection`, `getUserMedia`, `getDisplayMedia` and device changes of `target`. */
  instrument(target?: typeof globalThis): void;
  /** Polls every tracked connection once, as the 1 Hz timer does; resolves when all are done (for tests and benchmarks). */
  poll(): Promise<unknown>;
  /**
   * Applies the project's configuration live: the sample interval and `emitOnThresholdCross` at
   * the next poll, `maxPeerConnections` to connections created from then on, `captureSdp` and
   * `strictPrivacy` to what is captured from then on. New `thresholds` replace the detectors: with
   * `awaitConfiguration` they judge everything kept since the start; later, they start afresh.
   */
  configure(configuration: CollectorConfiguration): void;
  stop(): void;
}

interface Tracked {
  id: string;
  pc: RTCPeerConnection;
  tracked: boolean;
  createdAt: number;
  closed?: boolean;
  previous?: StatsSnapshot;
  lastEmitted?: StatsSnapshot;
  /** Emitting 1 s windows: a detector threshold is crossed. */
  hot?: boolean;
  path?: string;
  /** Each track key's opaque id, and its last codec and size (for codec_change and resolution_change). */
  tracks: Map<string, { id: string; codec?: string; w?: number; h?: number }>;
  /** The media tracks followed (see watchTracks), each with what reports its end. */
  media: WeakMap<MediaStreamTrack, () => void>;
  last?: TrackedConnection;
  /** A getStats() is pending (a poll never overlaps the previous one). */
  polling?: boolean;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A new `<prefix>_<ULID>` (PROTOCOL.md ids), exactly as `src/ids.ts` makes them (a test holds
 * them equal). Not imported from there: the core imports that module too, so it would become a
 * chunk of its own that the collector loads with an extra request (252 B gzip on its own, in a
 * 10 KB budget).
 *
 * @example
 * ```ts
 * createId('pc'); // 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H'
 * ```
 */
export function createId(prefix: 'pc' | 'ses', now = Date.now()): string {
  let id = `${prefix}_`;
  for (let power = 9; power >= 0; power -= 1)
    id += CROCKFORD[Math.floor(Math.max(0, now) / 32 ** power) % 32];
  for (const byte of crypto.getRandomValues(new Uint8Array(16))) id += CROCKFORD[byte % 32];
  return id;
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

/** Each state event and its property; the DOM event is the property's lowercased name + `change`. */
const STATE_EVENTS: ReadonlyArray<
  [string, 'connectionState' | 'iceConnectionState' | 'iceGatheringState' | 'signalingState']
> = [
  ['connection_state', 'connectionState'],
  ['ice_state', 'iceConnectionState'],
  ['ice_gathering', 'iceGatheringState'],
  ['signaling_state', 'signalingState'],
];

/**
 * Replaces `target[name]` (when there is one) by a function that calls it, then `after` with
 * its result and arguments, and returns that result; returns the undo.
 */
function wrap<Target extends object>(
  target: Target,
  name: keyof Target & string,
  // biome-ignore lint/suspicious/noExplicitAny: whatever the wrapped method returns and takes
  after: (result: any, args: any[]) => void,
): () => void {
  const original = target[name] as ((...args: unknown[]) => unknown) | undefined;
  if (original !== undefined)
    target[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      after(result, args);
      return result;
    } as never;
  return () => {
    target[name] = original as never;
  };
}

/** `value` without its `undefined` fields (PROTOCOL.md: a value not reported is omitted). */
function defined<T extends object>(value: T): T {
  for (const key in value) if (value[key] === undefined) delete value[key];
  return value;
}

async function hashDeviceId(salt: string, deviceId: string): Promise<string | undefined> {
  // No crypto.subtle outside a secure context: no hash, so no deviceId.
  if (deviceId === '' || !crypto.subtle) return undefined;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${salt}:${deviceId}`));
  return [...new Uint8Array(digest, 0, 8)].map((byte) => (byte | 256).toString(16).slice(1)).join('');
}

/**
 * The WebRTC collector (PROTOCOL.md §2–§3): every tracked peer connection's `getStats()` is
 * polled at 1 Hz and differenced on the device (`statsWindow`); the 1 s windows feed
 * `@svc/detectors`, and samples go out every `sampleIntervalSec` covering the whole interval, or
 * at once (1 s windows, with `cross`) while a detector threshold is crossed. Lifecycle, media and
 * track events go out as they happen, never thinned. ICE candidate addresses and servers and
 * data-channel payloads are never read into events; `deviceId` is a salted hash; device labels
 * as the browser supplies them, never with `strictPrivacy`; SDP only with `captureSdp` (never
 * with `strictPrivacy`), redacted by the `sdp` module, which is loaded then and only then.
 *
 * @example
 * ```ts
 * const collector = createCollector({ emit: (event) => writer.push(event) });
 * collector.instrument(); // wraps RTCPeerConnection, getUserMedia, getDisplayMedia, devicechange
 * ```
 */
export function createCollector(options: CollectorOptions): Collector {
  /** The options as `configure` left them. */
  const settings = { ...options };
  let thresholds = resolveThresholds(options.thresholds);
  let detector = createDetector({ thresholds });
  /** What the detectors were fed while awaiting the configuration (judged once it is there). */
  let held: DetectorItem[] | undefined = options.awaitConfiguration ? [] : undefined;
  let settle = () => {};
  /** Resolved once the privacy mode is final (device labels wait for it). */
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  if (!held) settle();
  const salt = options.salt ?? createId('ses');
  const policy: () => CollectorPolicy =
    options.policy ?? (() => ({ sampleIntervalSec: settings.sampleIntervalSec ?? 5 }));
  const byPc = new WeakMap<RTCPeerConnection, Tracked>();
  const all: Tracked[] = [];
  const restore: Array<() => void> = [];
  let timer: ReturnType<typeof setInterval> | undefined;

  /** Feeds the detectors; returns the new findings (none while the configuration is awaited). */
  const findingsOf = (item: DetectorItem) => {
    const found = held?.push(item) ? [] : detector.push(item);
    for (const finding of found) options.onFinding?.(finding);
    return found;
  };

  /** A label as the browser supplies it: none when empty, none in strict privacy mode. */
  const labelOf = (label: string) => (settings.strictPrivacy ? undefined : label.slice(0, 256) || undefined);

  /** Emits a call event; its `undefined` fields are left out. */
  function event(tracked: Tracked | undefined, name: string, fields: object = {}) {
    const item = defined({ t: Date.now(), type: 'call.event', pc: tracked?.id, name, ...fields });
    options.emit(item as WireEvent);
    findingsOf(item as unknown as DetectorItem);
  }

  /** The opaque id of a track key, announced with `track_added` the first time it is seen. */
  function idFor(tracked: Tracked, key: string, kind: string, dir: string): string {
    let track = tracked.tracks.get(key);
    if (track === undefined) {
      // 40 random bits: unique within a session.
      track = { id: `trk_${createId('pc').slice(-8).toLowerCase()}` };
      tracked.tracks.set(key, track);
      event(tracked, 'track_added', { track: track.id, kind, dir });
    }
    return track.id;
  }

  /** Whether a window still shows a crossed condition (keeps 1 s emission going). */
  function hot(window: StatsWindow): boolean {
    // Only inbound audio has a concealmentPct.
    return window.tracks.some(
      (track) =>
        (track.lossPct ?? 0) > thresholds.lossPct ||
        (track.rttMs ?? 0) > thresholds.rttMs ||
        (track.concealmentPct ?? 0) > thresholds.concealmentPct ||
        track.freezes ||
        track.stalled,
    );
  }

  function sampleOf(tracked: Tracked, window: StatsWindow, takenAt: number) {
    const tracks = window.tracks.map(({ key, ...metrics }) => ({
      id: idFor(tracked, key, metrics.kind, metrics.dir),
      ...metrics,
    }));
    const sample = {
      t: Math.round(takenAt),
      type: 'call.sample' as const,
      pc: tracked.id,
      windowMs: window.windowMs,
      conn: { state: tracked.pc.connectionState, ...window.conn },
      tracks,
    };
    return defined({ ...sample, score: scoreSample(sample as never) ?? undefined });
  }

  /** Lifecycle events the windows reveal: the selected path, codecs and resolutions. */
  function changes(tracked: Tracked, window: StatsWindow) {
    const conn = window.conn;
    if (conn?.localType && conn.remoteType) {
      // The path's fields in readConnectionPath's fixed order.
      const path = JSON.stringify(conn);
      if (path !== tracked.path) {
        // Both types known: readConnectionPath has set `relayed`.
        event(tracked, 'candidate_pair_change', { ...conn, initial: tracked.path === undefined });
        tracked.path = path;
      }
    }
    for (const { key, codec, w, h } of window.tracks) {
      // sampleOf gave every key of the window its entry.
      const facts = tracked.tracks.get(key) as { id: string; codec?: string; w?: number; h?: number };
      const track = facts.id;
      if (codec && facts.codec && codec !== facts.codec)
        event(tracked, 'codec_change', { track, codec, prev: facts.codec });
      if (w && h && facts.w && facts.h && (w !== facts.w || h !== facts.h))
        event(tracked, 'resolution_change', { track, w, h, prevW: facts.w, prevH: facts.h });
      Object.assign(facts, defined({ codec, w, h }));
    }
  }

  /**
   * Follows the media tracks the connection sends and receives once the stats show their RTP
   * stream (by its transceiver's `mid`), so their events carry the id of that stream's track
   * entries: `track_muted`, `track_unmuted` with `freezeMs` (how long it was muted; an unmute
   * whose mute was not seen, as a remote track's first, says nothing) and `track_ended`. Chromium
   * fires `mute` and `unmute` for a remote track when its transceiver stops or resumes
   * receiving, and `ended` when the transceiver stops or the connection closes (nothing is said
   * after `pc_closed`); a local track stopped with `stop()` fires nothing, so a sender's ended
   * track is found here. A track its sender no longer sends (replaced) says nothing: the stream
   * goes on with the new one.
   */
  function watchTracks(tracked: Tracked, stats: ReadonlyMap<string, RTCStatsLike>) {
    const { pc, media } = tracked;
    const transceivers = pc.getTransceivers();
    for (const rtp of stats.values()) {
      const inbound = rtp.type === 'inbound-rtp';
      const transceiver = transceivers.find((candidate) => candidate.mid === rtp.mid);
      const track = transceiver?.[inbound ? 'receiver' : 'sender'].track;
      if (!track || (!inbound && rtp.type !== 'outbound-rtp')) continue;
      // Ended without an event (a local track's stop()): reported at the poll after it is followed.
      if (media.has(track)) {
        if (track.readyState === 'ended') media.get(track)?.();
        continue;
      }
      const dir = inbound ? 'in' : 'out';
      const fields = {
        track: idFor(tracked, trackKey(track.kind, inbound, rtp), track.kind, dir),
        kind: track.kind,
        dir,
      };
      let mutedAt: number | undefined;
      // Nothing once ended, after pc_closed, or for a track its sender no longer sends.
      const report = (name: string, freezeMs?: number) => {
        if (media.get(track) === end && !tracked.closed && (inbound || transceiver.sender.track === track))
          event(tracked, name, { ...fields, freezeMs });
      };
      // Once ended, the track stays followed by a no-op: nothing more to say.
      const end = () => {
        report('track_ended');
        media.set(track, () => {});
      };
      media.set(track, end);
      track.addEventListener('ended', end);
      track.addEventListener('mute', () => {
        mutedAt = Date.now();
        report('track_muted');
      });
      track.addEventListener('unmute', () => {
        if (mutedAt !== undefined) report('track_unmuted', Date.now() - mutedAt);
        mutedAt = undefined;
      });
    }
  }

  async function poll(tracked: Tracked): Promise<void> {
    if (tracked.polling || tracked.closed || !tracked.tracked) return;
    tracked.polling = true;
    try {
      const snapshot = toSnapshot(await tracked.pc.getStats(), Date.now());
      watchTracks(tracked, snapshot.stats);
      const before = tracked.previous;
      const window = statsWindow(before, snapshot);
      tracked.previous = snapshot;
      if (window.windowMs === 0) {
        tracked.lastEmitted = snapshot;
        return;
      }
      const now = policy();
      const second = sampleOf(tracked, window, snapshot.takenAt);
      changes(tracked, window);
      const crossed = findingsOf(second as unknown as DetectorItem).map((finding) => finding.kind);
      /** The highest value of an inbound metric, if any track has it. */
      const highest = (metric: 'lossPct' | 'fps') => {
        const values = second.tracks.flatMap((track) => (track.dir === 'in' ? (track[metric] ?? []) : []));
        return values.length > 0 ? Math.max(...values) : undefined;
      };
      tracked.last = defined({
        pc: tracked.id,
        state: tracked.pc.connectionState,
        relayed: window.conn?.relayed,
        rttMs: second.tracks.find((track) => track.rttMs)?.rttMs,
        lossPct: highest('lossPct'),
        fps: highest('fps'),
        score: second.score,
      });
      if (now.lifecycleEventsOnly) return;
      // A metric over a detector threshold: full resolution from its first second until it
      // clears, after the quiet interval not sent yet, so the server sees the problem's whole run
      // and judges it as the device does (PROTOCOL.md §2). Else a sample over the whole interval
      // since the last one (the first poll set lastEmitted).
      const wasHot = tracked.hot;
      tracked.hot = (settings.emitOnThresholdCross ?? true) && (crossed.length > 0 || hot(window));
      // (After the first poll both snapshots exist; the same one when nothing is waiting.)
      const quiet = tracked.lastEmitted as StatsSnapshot;
      if (tracked.hot && !wasHot && !now.thresholdCrossingsOnly && before !== quiet)
        options.emit(
          sampleOf(
            tracked,
            statsWindow(quiet, before as StatsSnapshot),
            before?.takenAt as number,
          ) as unknown as WireEvent,
        );
      const sample = tracked.hot
        ? { ...second, cross: crossed.length > 0 ? crossed : undefined }
        : !now.thresholdCrossingsOnly &&
            now.sampleIntervalSec !== null &&
            snapshot.takenAt - (tracked.lastEmitted?.takenAt ?? 0) >= now.sampleIntervalSec * 1000 - 100
          ? sampleOf(tracked, statsWindow(tracked.lastEmitted, snapshot), snapshot.takenAt)
          : undefined;
      if (sample !== undefined) {
        // Fields left undefined (`cross` of a quiet sample) do not reach the wire: JSON drops them.
        options.emit(sample as unknown as WireEvent);
        tracked.lastEmitted = snapshot;
      }
    } catch {
      // A closed connection's getStats rejects: its pc_closed says the rest.
    } finally {
      tracked.polling = false;
    }
  }

  function tick() {
    const polled = Promise.all(all.map(poll));
    for (const finding of held ? [] : detector.advance(Date.now())) options.onFinding?.(finding);
    return polled;
  }

  /** Reports a data channel's state as it is now, when it changed (never what it carries). */
  function watchChannel(tracked: Tracked, channel: RTCDataChannel) {
    let reported: string | undefined;
    const report = () => {
      const state = channel.readyState;
      if (state !== reported && !tracked.closed)
        event(tracked, 'data_channel', { label: channel.label.slice(0, 256), state });
      reported = state;
    };
    report();
    // A channel closed here is `closing` at once, without an event.
    wrap(channel, 'close', report);
    for (const type of ['open', 'closing', 'close']) channel.addEventListener(type, report);
  }

  function attach(pc: RTCPeerConnection): string {
    const known = byPc.get(pc);
    if (known !== undefined) return known.id;
    const tracked: Tracked = {
      id: createId('pc'),
      pc,
      tracked: all.filter((entry) => entry.tracked).length < (settings.maxPeerConnections ?? 8),
      createdAt: Date.now(),
      tracks: new Map(),
      media: new WeakMap(),
    };
    byPc.set(pc, tracked);
    all.push(tracked);
    event(tracked, 'pc_created', {
      state: pc.connectionState,
      // As given to the constructor: one entry per server, whatever its number of URLs.
      iceServers: pc.getConfiguration().iceServers?.length ?? 0,
      tracked: tracked.tracked,
    });
    // An ICE restart, whoever started it (restartIce(), createOffer({ iceRestart: true }), the
    // remote peer, whose restart this side answers with new credentials too): the local
    // description carries an ICE ufrag never seen before. Once per restart; a rollback to an
    // earlier ufrag is none.
    const ufrags = new Set<string>();
    const checkRestart = () => {
      const ufrag = /a=ice-ufrag:(\S+)/.exec(pc.localDescription?.sdp ?? '')?.[1];
      if (ufrag && !ufrags.has(ufrag) && ufrags.add(ufrag).size > 1) event(tracked, 'ice_restart');
    };
    checkRestart();
    pc.addEventListener('signalingstatechange', checkRestart);
    for (const [name, property] of STATE_EVENTS) {
      let prev: string = pc[property];
      let since = tracked.createdAt;
      pc.addEventListener(`${property.toLowerCase()}change`, () => {
        const state = pc[property];
        if (state === prev) return;
        const at = Date.now();
        event(tracked, name, { state, prev, prevMs: at - since });
        prev = state;
        since = at;
        // Any of the states closed: the connection is.
        if (state === 'closed') close(tracked);
      });
    }
    // The code, never the event's url or address. The text only for the browser's own errors
    // (701 and up): below that it is the STUN or TURN server's reason phrase, free text that may
    // name anything, and the code says the same in the standard's words.
    pc.addEventListener('icecandidateerror', ({ errorCode, errorText }) =>
      event(tracked, 'ice_candidate_error', {
        errorCode,
        errorText: errorCode > 700 && errorText ? errorText.slice(0, 256) : undefined,
      }),
    );
    // Data channels, the remote peer's and this side's: label and state.
    pc.addEventListener('datachannel', ({ channel }) => watchChannel(tracked, channel));
    wrap(pc, 'createDataChannel', (channel: RTCDataChannel) => watchChannel(tracked, channel));
    wrap(pc, 'close', () => close(tracked));
    // With `captureSdp` (never in strict mode), each description applied becomes an `sdp`
    // event, described and redacted by the `sdp` module (its own chunk, fetched once: the loader
    // keeps it); a failed call sends nothing.
    for (const name of ['setLocalDescription', 'setRemoteDescription'] as const)
      wrap(pc, name, (applied: Promise<void>, [given]) =>
        applied
          .then(() => (settings.captureSdp && !settings.strictPrivacy ? import('./sdp.ts') : undefined))
          .then(
            (sdp) => sdp && event(tracked, 'sdp', sdp.describeApplied(pc, name, given)),
            () => {},
          ),
      );
    timer ??= setInterval(tick, options.pollMs ?? 1000);
    return tracked.id;
  }

  function close(tracked: Tracked) {
    if (tracked.closed) return;
    tracked.closed = true;
    event(tracked, 'pc_closed', { durationMs: Date.now() - tracked.createdAt });
  }

  async function mediaAcquired(stream: MediaStream, screen: boolean) {
    await settled;
    for (const track of stream.getTracks()) {
      const settings = track.getSettings();
      const deviceId = screen ? undefined : await hashDeviceId(salt, settings.deviceId ?? '');
      event(undefined, 'media_acquired', {
        kind: screen ? 'screen' : track.kind,
        w: settings.width,
        h: settings.height,
        fps: settings.frameRate && Math.round(settings.frameRate * 10) / 10,
        deviceId,
        // A device's label; a screen is no device.
        label: screen ? undefined : labelOf(track.label),
      });
    }
  }

  function mediaError(error: unknown, constraints: MediaStreamConstraints | undefined, screen: boolean) {
    const name = String((error as { name?: unknown } | null)?.name ?? 'Error');
    event(undefined, 'media_error', {
      errorName: name.slice(0, 64),
      class: classifyMediaError(name),
      kind: screen ? 'screen' : constraints?.video ? 'video' : constraints?.audio ? 'audio' : undefined,
    });
    // No connection may be polled yet: a tick now releases its finding (a recording trigger).
    void tick();
  }

  /** The inventory last reported: an app's own `enumerateDevices()` reports only a change. */
  let reported = '';
  async function inventory(name: 'device_inventory' | 'device_change', listed: Promise<MediaDeviceInfo[]>) {
    try {
      const devices = await listed;
      await settled;
      const counts: Record<string, number> = { audioinput: 0, videoinput: 0, audiooutput: 0 };
      // The labels of each kind, empty ones (before a permission grant) left out; never ids.
      const labels: Record<string, string[]> = {};
      for (const { kind, label } of devices) {
        counts[kind] = (counts[kind] as number) + 1;
        const text = labelOf(label);
        if (text) labels[kind] = [...(labels[kind] ?? []), text];
      }
      const fields = { ...counts, labels: Object.keys(labels).length > 0 ? labels : undefined };
      const key = JSON.stringify(fields);
      if (name === 'device_change' || key !== reported) event(undefined, name, fields);
      reported = key;
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
    poll: tick,
    configure(configuration) {
      Object.assign(settings, defined({ ...configuration }));
      if (configuration.thresholds || held) {
        thresholds = resolveThresholds(settings.thresholds);
        detector = createDetector({ thresholds });
        const kept = held ?? [];
        held = undefined;
        for (const item of kept) findingsOf(item);
      }
      settle();
    },
    instrument(target = globalThis) {
      const Original = target.RTCPeerConnection;
      if (Original !== undefined) {
        class InstrumentedPeerConnection extends Original {
          constructor(configuration?: RTCConfiguration) {
            super(configuration);
            attach(this);
          }
        }
        target.RTCPeerConnection = InstrumentedPeerConnection;
        restore.push(() => {
          target.RTCPeerConnection = Original;
        });
      }
      const devices = target.navigator?.mediaDevices;
      if (devices === undefined) return;
      for (const name of ['getUserMedia', 'getDisplayMedia'] as const) {
        const screen = name === 'getDisplayMedia';
        restore.push(
          wrap(devices, name, (acquired: Promise<MediaStream>, [constraints]) =>
            acquired.then(
              (stream) => mediaAcquired(stream, screen),
              (error) => mediaError(error, constraints, screen),
            ),
          ),
        );
      }
      const enumerate = devices.enumerateDevices.bind(devices);
      // The app's own listing (after a permission grant it may see more) is an inventory too.
      restore.push(wrap(devices, 'enumerateDevices', (listed) => void inventory('device_inventory', listed)));
      void inventory('device_inventory', enumerate());
      const onChange = () => void inventory('device_change', enumerate());
      devices.addEventListener('devicechange', onChange);
      restore.push(() => devices.removeEventListener('devicechange', onChange));
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      for (const undo of restore.splice(0)) undo();
    },
  };
}
