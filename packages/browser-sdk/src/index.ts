/**
 * `@svc/browser-sdk`: records a page's session and sends it to the service (PROTOCOL.md §1).
 * This entry is the core: sessions and visits, `track`/`identify`, error capture, and the
 * transport (chunks, deflate, one request in flight, retries, IndexedDB, keepalive on exit).
 *
 * @packageDocumentation
 */
import { type ChunkStore, type ExitChunkStore, openChunkStore, withExitChunks } from './chunk-store.ts';
import { createGovernor, type GovernorLevel, governorPolicy } from './governor.ts';
import { createId } from './ids.ts';
import { browserFacts } from './meta.ts';
import type { PrivacyOptions, Recorder } from './recorder/index.ts';
import { createRecordingGate, type RecordingGate, type RecordingModeOptions } from './recording-gate.ts';
import { loadRemoteConfig, type RemoteConfig } from './remote-config.ts';
import { createSessionWriter, type SessionWriter, type WireEvent } from './session-writer.ts';
import { createTransport, KEEPALIVE_BUDGET_BYTES, type Transport } from './transport.ts';
import type { TrackedConnection } from './webrtc/collector.ts';

export { type ChunkStore, createMemoryChunkStore, openChunkStore, type StoredChunk } from './chunk-store.ts';
export {
  createGovernor,
  DEFAULT_GOVERNOR_THRESHOLDS,
  GOVERNOR_LEVELS,
  type Governor,
  type GovernorLevel,
  type GovernorPolicy,
  governorPolicy,
} from './governor.ts';
export { browserFacts } from './meta.ts';
export type { PrivacyOptions, RecorderDetail } from './recorder/index.ts';
export { createRecordingGate, type RecordingGate, type RecordingModeOptions } from './recording-gate.ts';
export { loadRemoteConfig, type RemoteConfig, readRemoteConfig } from './remote-config.ts';
export type { WireEvent } from './session-writer.ts';
export { createTransport, KEEPALIVE_BUDGET_BYTES, type Transport, type TransportState } from './transport.ts';

/** The package's version, put in by the build (`define` in tsup.config.ts); absent when running sources. */
declare const __SVC_SDK_VERSION__: string | undefined;

/**
 * The SDK's version, sent in `meta.sdk` and in `GET /v1/config?sdk=`: the package's version in
 * the published build, `0.0.0-source` when the TypeScript sources run unbuilt (tests, examples).
 */
export const SDK_VERSION: string =
  typeof __SVC_SDK_VERSION__ === 'string' ? __SVC_SDK_VERSION__ : '0.0.0-source';

/** A session or visit with no activity for this long ends; the next event starts a new one. */
export const INACTIVITY_MS = 30 * 60 * 1000;

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** The end user, as `identify` and `init({ user })` take it. */
export interface User {
  id: string;
  email?: string;
  name?: string;
}

export interface InitOptions {
  /** The project key (public: it only allows ingest). */
  projectKey: string;
  /** The service's base URL, e.g. `https://replay.example.com`. */
  endpoint: string;
  release?: string;
  environment?: string;
  user?: User;
  /** Seconds between seals of buffered events while the page is open. Default 5. */
  flushIntervalSec?: number;
  /** Record `window` errors and unhandled rejections. Default true. */
  captureErrors?: boolean;
  /**
   * Record the page's `fetch` and `XMLHttpRequest` requests as `request` events: method, URL
   * without fragment or query string (but `networkQueryParams`), status, duration, sizes, failure; never bodies or headers.
   * Default true.
   */
  captureNetwork?: boolean;
  /**
   * Query parameters kept in the recorded URLs of requests, by name (`['page', 'sort']`); every
   * other one is left out, and the server keeps only those its project allows too
   * (`privacy.requestQueryParams`). Default none.
   */
  networkQueryParams?: string[];
  /**
   * Requests whose URL contains one of these strings or matches one of these expressions get a
   * W3C `traceparent` header, and their `request` event its trace id (joined to the backend's
   * OpenTelemetry traces). Default none: the header changes CORS preflights, so opt in per API.
   */
  tracePropagationTargets?: Array<string | RegExp>;
  /** Where unacknowledged chunks wait. Default IndexedDB (memory where it is unavailable). */
  store?: ChunkStore;
  /** The `fetch` the transport uses. Default the page's. */
  fetch?: typeof fetch;
  /** The WebRTC collector (service-spec "WebRTC options"); loaded on demand when `enabled`. */
  webrtc?: WebrtcOptions;
  /** The session replay (rrweb) and when a session is kept. */
  recording?: RecordingOptions;
  /** What the replay and the events may show (see the README's "Privacy"). */
  privacy?: PrivacyOptions;
  /** Record web vitals (`vital` events, `web-vitals`, loaded on demand). Default true. */
  captureVitals?: boolean;
  /** Ask `GET /v1/config` for the project's settings (merged under these options). Default true. */
  remoteConfig?: boolean;
}

/** Recording options (service-spec "SDK recording options used with call triggers"). */
export interface RecordingOptions extends Partial<RecordingModeOptions> {
  /** Record the page with `@rrweb/record` (its own chunk, loaded on demand). Default true. */
  enabled?: boolean;
  /** A full snapshot this often: the guaranteed pre-roll of conditional and monitor mode. Default 30 s. */
  checkoutIntervalSec?: number;
}

/** Options of the WebRTC collector, as service-spec.md names them. */
export interface WebrtcOptions {
  /** Loads the collector (`@svc/browser-sdk/webrtc`). Default false. */
  enabled?: boolean;
  /** Seconds between samples while every detector is quiet. Default 5. */
  sampleIntervalSec?: number;
  /** Redacted SDP capture (`sdp` call events). Default false; never in strict privacy mode. */
  captureSdp?: boolean;
  /** 1 s samples at once while a detector threshold is crossed. Default true. */
  emitOnThresholdCross?: boolean;
  /** Peer connections sampled at most. Default 8. */
  maxPeerConnections?: number;
}

/**
 * `client.webrtc`, and the module-level {@link webrtc}: works before the collector has loaded
 * (calls wait for it).
 */
export interface WebrtcApi {
  /**
   * Tracks a peer connection created before `init` or before the collector loaded (idempotent);
   * resolves to its `pc_` id, `undefined` when the collector is off.
   */
  attach(pc: RTCPeerConnection): Promise<string | undefined>;
  /** Tracked connections: state, relay, latency, loss, frame rate and score of the last second. */
  list(): Promise<TrackedConnection[]>;
}

export interface Client {
  readonly sessionId: string;
  readonly visitId: string;
  /** The governor's level now (see `governorPolicy` for what it allows). */
  governorLevel(): GovernorLevel;
  /** The WebRTC collector (empty when `webrtc.enabled` is off). */
  readonly webrtc: WebrtcApi;
  /** A custom event (`type: "custom"`): a name, flat properties and an optional severity. */
  track(
    name: string,
    props?: Record<string, string | number | boolean>,
    options?: { severity?: Severity },
  ): void;
  /** Sets the session's user from here on (`type: "identify"`). */
  identify(user: User): void;
  /** Fires a recording trigger by name (keeps a conditional session; a burst in monitor mode). */
  trigger(name: string): void;
  /** Seals what is buffered and resolves once every chunk is acknowledged (or waiting to retry). */
  flush(): Promise<void>;
  /** Flushes, then stops listening and sending. */
  shutdown(): Promise<void>;
}

interface Remembered {
  id: string;
  /** The seq of the session's next chunk. */
  seq?: number;
  at: number;
  /** When the session started (monitor mode counts from here). */
  start?: number;
  /** A conditional session whose trigger fired: it is kept from then on, across reloads. */
  triggered?: boolean;
}

function remember(storage: Storage | undefined, key: string): Remembered | undefined {
  try {
    const value = JSON.parse(storage?.getItem(key) ?? 'null') as Remembered | null;
    return value !== null && typeof value.id === 'string' && Date.now() - value.at < INACTIVITY_MS
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

function save(storage: Storage | undefined, key: string, value: Remembered): void {
  try {
    storage?.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or denied: the session just does not survive a reload.
  }
}

const SESSION_KEY = 'svc:session';
const VISIT_KEY = 'svc:visit';

/**
 * Flat properties only: strings, finite numbers and booleans; anything else is left out. Cut to
 * PROTOCOL_LIMITS (64 properties, 256-character names, 1 024-character values): an event over a
 * limit would fail its whole chunk.
 */
function flatProps(
  props: Record<string, unknown> | undefined,
): Record<string, string | number | boolean> | undefined {
  if (props === undefined) return undefined;
  const flat: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(props).slice(0, 64)) {
    const name = key.slice(0, 256);
    if (typeof value === 'string') flat[name] = value.slice(0, 1024);
    else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))
      flat[name] = value;
  }
  return flat;
}

const SEVERITIES: readonly unknown[] = ['critical', 'high', 'medium', 'low', 'info'];

/** The user's fields as strings of at most 256 characters (PROTOCOL_LIMITS.maxNameLength). */
function clipUser(user: User): User {
  const clip = (value: unknown) => String(value).slice(0, 256);
  return {
    id: clip(user.id),
    ...(user.email === undefined ? {} : { email: clip(user.email) }),
    ...(user.name === undefined ? {} : { name: clip(user.name) }),
  };
}

/** An `error` event, cut to PROTOCOL_LIMITS (message 8 192, name 256, stack 65 536 characters). */
function errorEvent(error: Partial<Error> | undefined, fallback: string, source: string): WireEvent {
  return {
    t: Date.now(),
    type: 'error',
    message: String(error?.message ?? fallback).slice(0, 8192) || fallback,
    ...(typeof error?.name === 'string' ? { name: error.name.slice(0, 256) } : {}),
    ...(typeof error?.stack === 'string' ? { stack: error.stack.slice(0, 65_536) } : {}),
    source,
  };
}

/** Fields set in `local` (not `undefined`) win over `remote`'s. */
function under<T extends object>(remote: T | undefined, local: T | undefined): T {
  const merged: Record<string, unknown> = { ...remote };
  for (const [key, value] of Object.entries(local ?? {})) if (value !== undefined) merged[key] = value;
  return merged as T;
}

/** The page's options over the project's remote configuration; strict privacy wins from either. */
function resolveOptions(options: InitOptions, remote: RemoteConfig | undefined): ResolvedOptions {
  const privacy = under<PrivacyOptions>(remote?.privacy, options.privacy);
  if (remote?.privacy?.mode === 'strict') privacy.mode = 'strict';
  return {
    webrtc: under<WebrtcOptions>(remote?.webrtc, options.webrtc),
    recording: under<RecordingOptions>(remote?.recording as RecordingOptions | undefined, options.recording),
    privacy,
    thresholds: remote?.detectorThresholds,
    paused: remote?.recording?.paused === true,
  };
}

interface ResolvedOptions {
  webrtc: WebrtcOptions;
  recording: RecordingOptions;
  privacy: PrivacyOptions;
  thresholds: Record<string, number> | undefined;
  /** The server says a monthly cap is reached: no new session starts. */
  paused: boolean;
}

/** PROTOCOL_LIMITS.maxUrlLength: a longer URL would fail its whole chunk. */
const MAX_URL = 8192;

/** Strict mode keeps URLs to their origin and path: queries and fragments often carry tokens or e-mails. */
function scrubUrl(url: string, strict: boolean): string {
  if (!strict) return url.slice(0, MAX_URL);
  try {
    const parsed = new URL(url);
    return (parsed.origin + parsed.pathname).slice(0, MAX_URL);
  } catch {
    return '';
  }
}

let current: Client | undefined;
/** Calls of the module-level API made before `init`, waiting for its client. */
const waiting: Array<(client: Client) => void> = [];
/** The client of the last `init`, or the next one. */
const initialized = (): Promise<Client> =>
  current === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(current);

/**
 * Starts recording this page's session. The session id lives in `sessionStorage`, so a reload
 * in the same tab continues the session (and its seqs); the visit id lives in `localStorage`
 * and spans the tabs of one visit. Both end after 30 minutes without activity. Chunks left
 * unacknowledged by an earlier page are sent again first. The project's remote configuration
 * (`GET /v1/config`) is merged under `options`.
 *
 * @example
 * ```ts
 * import { init, track } from '@svc/browser-sdk';
 *
 * init({ projectKey: 'pk_…', endpoint: 'https://replay.example.com', release: '1.4.0' });
 * track('checkout_failed', { plan: 'pro' }, { severity: 'high' });
 * ```
 */
export function init(options: InitOptions): Client {
  const page = typeof window === 'undefined' ? undefined : window;
  const local = page?.localStorage;
  const tab = page?.sessionStorage;
  const startedAt = Date.now();
  // The page as init saw it: the app may navigate (pushState) before the options are settled.
  const startUrl = page?.location.href ?? 'about:blank';
  const startReferrer = typeof document === 'undefined' ? '' : document.referrer;
  const remembered = remember(tab, SESSION_KEY);
  const session = remembered ?? {
    id: createId('ses'),
    seq: 0,
    at: startedAt,
    start: startedAt,
  };
  const visit = remember(local, VISIT_KEY) ?? { id: createId('vis'), at: startedAt };
  // Activity is written to storage at most once a second: `push` runs for every event (call
  // samples and rrweb events included), and storage writes are synchronous.
  let savedAt = 0;
  const touch = () => {
    session.at = Date.now();
    visit.at = session.at;
    if (session.at - savedAt < 1000) return;
    savedAt = session.at;
    save(tab, SESSION_KEY, session);
    save(local, VISIT_KEY, visit);
  };
  touch();

  let writer: SessionWriter | undefined;
  let transport: Transport | undefined;
  let store: ExitChunkStore | undefined;
  let gate: RecordingGate | undefined;
  let recorder: Recorder | undefined;
  let stopped = false;
  const early: WireEvent[] = [];
  /** Triggers fired before the gate exists (the options not settled yet), fired once it does. */
  const earlyTriggers: Array<[string, number]> = [];
  const fire = (name: string, t: number) => (gate ? gate.fire(name, t) : earlyTriggers.push([name, t]));
  const governor = createGovernor();
  const push = (event: WireEvent) => {
    if (stopped) return;
    touch();
    if (gate === undefined) early.push(event);
    else gate.push(event);
  };
  /** The writer, when it may seal what the gate wrote: not (not even seq 0 and its meta) while a conditional session waits. */
  const sealer = () => (gate?.state(Date.now()) === 'waiting' ? undefined : writer);
  const seal = async () => {
    await sealer()?.seal();
  };
  /** Measures backlog, failures and heap; a level change is recorded as a `governor` event. */
  const govern = () => {
    if (transport === undefined) return;
    const state = transport.state();
    const memory = (performance as { memory?: { usedJSHeapSize?: number } }).memory;
    const level = governor.observe({
      backlogBytes: state.backlogBytes,
      failures: state.failures,
      ...(memory?.usedJSHeapSize === undefined ? {} : { heapBytes: memory.usedJSHeapSize }),
      now: Date.now(),
    });
    if (level === undefined) return;
    push({ t: Date.now(), type: 'governor', level });
    recorder?.setDetail(governorPolicy(level).recording);
  };

  /** Stops the client (a monthly cap): nothing more is recorded or sent. */
  const end = () => void client.shutdown();
  const remote =
    options.remoteConfig === false
      ? Promise.resolve(undefined)
      : loadRemoteConfig({
          endpoint: options.endpoint,
          projectKey: options.projectKey,
          sdk: `@svc/browser-sdk@${SDK_VERSION}`,
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
          ...(local === undefined ? {} : { storage: local }),
        });
  const resolved = remote.then((config) => resolveOptions(options, config));

  const ready = (async () => {
    const { recording, privacy, paused } = await resolved;
    // The organization reached a monthly cap: no new session starts (one in progress goes on).
    if (paused && !remembered) return end();
    const strict = privacy.mode === 'strict';
    const userAgent = typeof navigator === 'undefined' ? '' : navigator.userAgent.slice(0, 1024);
    const referrer = scrubUrl(startReferrer, strict);
    const url = scrubUrl(startUrl, strict) || 'about:blank';
    // This page load starts a page view, before its vitals and its recording arrive.
    if (page !== undefined) push({ t: startedAt, type: 'nav', url, load: true });
    const meta = {
      sdk: { name: '@svc/browser-sdk', version: SDK_VERSION },
      startedAt: session.start ?? startedAt,
      url,
      ...(referrer === '' ? {} : { referrer }),
      userAgent,
      ...browserFacts(userAgent),
      viewport: { w: page?.innerWidth ?? 0, h: page?.innerHeight ?? 0 },
      ...(options.release === undefined ? {} : { release: options.release }),
      ...(options.environment === undefined ? {} : { environment: options.environment }),
      ...(options.user === undefined ? {} : { user: clipUser(options.user) }),
      recording: { mode: recording.mode ?? 'always' },
    };
    store = withExitChunks(options.store ?? (await openChunkStore()), tab);
    transport = createTransport({
      endpoint: options.endpoint,
      projectKey: options.projectKey,
      store,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      // A monthly cap refused the session: it stops (what it kept is sent again by a later page).
      onRefused: end,
      // What the server can never take is recorded as a gap, not dropped silently.
      onDropped: (chunk) =>
        push({ t: Date.now(), type: 'gap', fromT: chunk.firstT, toT: chunk.lastT, reason: 'overflow' }),
    });
    for (const chunk of await store.all().catch(() => [])) transport.enqueue(chunk);
    const sessionWriter = createSessionWriter({
      sessionId: session.id,
      visitId: visit.id,
      nextSeq: session.seq ?? 0,
      meta,
      store,
      transport,
      onSeq: (next) => {
        session.seq = next;
        save(tab, SESSION_KEY, session);
      },
    });
    writer = sessionWriter;
    gate = createRecordingGate({
      mode: recording.mode ?? 'always',
      triggers: recording.triggers ?? [],
      monitorModeAfterMinutes: recording.monitorModeAfterMinutes ?? null,
      monitorTriggers: recording.monitorTriggers ?? [],
      ...(recording.postRollSec === undefined ? {} : { postRollSec: recording.postRollSec }),
      startedAt: session.start ?? startedAt,
      triggered: session.triggered === true,
      write: (event) => sessionWriter.push(event),
      onTriggered: () => {
        session.triggered = true;
        save(tab, SESSION_KEY, session);
      },
      onOverflow: () => recorder?.checkout(),
    });
    for (const event of early.splice(0)) gate.push(event);
    for (const [name, t] of earlyTriggers.splice(0)) gate.fire(name, t);
    await seal();
  })();

  const onError = (event: ErrorEvent) =>
    push(errorEvent(event.error as Error | undefined, event.message || 'Error', 'onerror'));
  const onRejection = (event: PromiseRejectionEvent) => {
    const reason = event.reason as Error | undefined;
    const error = typeof reason === 'object' && reason !== null ? reason : { message: String(reason) };
    push(errorEvent(error, 'Unhandled rejection', 'unhandledrejection'));
  };
  // Leaving (hidden, pagehide): the page may be gone before anything asynchronous ends, so the
  // buffered events are sealed, kept (sessionStorage) and sent (keepalive) synchronously, as
  // plain JSON in chunks that fit a keepalive request.
  const onExit = () => {
    const chunks = sealer()?.sealNow(KEEPALIVE_BUDGET_BYTES) ?? [];
    for (const chunk of chunks) store?.keep(chunk);
    transport?.sendOnExit(chunks);
  };
  const onVisibility = () => {
    if (document.visibilityState === 'hidden') onExit();
  };
  const onOnline = () => transport?.retryNow();
  // Navigation: history changes of single-page apps, back/forward and fragment changes.
  let lastUrl = page?.location.href;
  const onNavigation = () => {
    const url = page?.location.href;
    if (url === undefined || url === lastUrl) return;
    lastUrl = url;
    void resolved.then(({ privacy }) =>
      push({ t: Date.now(), type: 'nav', url: scrubUrl(url, privacy.mode === 'strict') || 'about:blank' }),
    );
  };
  const history = page?.history;
  /** Undoes what init attached to the page (listeners, history wrappers), for `shutdown`. */
  const detach: Array<() => void> = [];
  const listen = (target: EventTarget, type: string, listener: (event: never) => void) => {
    target.addEventListener(type, listener as EventListener);
    detach.push(() => target.removeEventListener(type, listener as EventListener));
  };
  if (page !== undefined && history !== undefined) {
    if (options.captureErrors !== false) {
      listen(page, 'error', onError);
      listen(page, 'unhandledrejection', onRejection);
    }
    // Its own chunk, loaded at once: requests the page makes before it arrives are not recorded.
    if (options.captureNetwork !== false)
      void import('./network.ts').then(({ watchNetwork }) => {
        if (!stopped) detach.push(watchNetwork(page, push, options));
      });
    listen(page, 'pagehide', onExit);
    listen(page, 'online', onOnline);
    listen(page, 'popstate', onNavigation);
    listen(page, 'hashchange', onNavigation);
    listen(document, 'visibilitychange', onVisibility);
    for (const name of ['pushState', 'replaceState'] as const) {
      const original = history[name];
      history[name] = function (this: History, ...args: Parameters<History['pushState']>) {
        original.apply(this, args);
        onNavigation();
      };
      detach.push(() => {
        history[name] = original;
      });
    }
  }
  const timer = setInterval(
    () => {
      govern();
      void seal();
    },
    (options.flushIntervalSec ?? 5) * 1000,
  );
  const governing = setInterval(govern, 1000);

  // The recorder and web vitals are their own chunks, imported once the options are known.
  void resolved.then(async ({ recording, privacy }) => {
    if (options.captureVitals !== false && page !== undefined)
      void import('./vitals.ts').then(({ watchVitals }) =>
        watchVitals((event) => {
          push(event);
          // The last vitals are reported as the page is hidden: send them on their way too.
          if (document.visibilityState === 'hidden') onExit();
        }),
      );
    if (recording.enabled === false || page === undefined) return;
    const { startRecorder } = await import('./recorder/index.ts');
    if (stopped) return;
    recorder = startRecorder({
      emit: push,
      privacy,
      checkoutEveryMs: (recording.checkoutIntervalSec ?? 30) * 1000,
      detail: governorPolicy(governor.level()).recording,
    });
  });

  // The collector is its own chunk: imported only when enabled (by the page, or centrally by the
  // project's settings), with the governor's policy. Enabled by the page, it starts at once so
  // it sees the first connections, and the project's configuration (thresholds, options the
  // page leaves out, strict privacy) is applied when it arrives: the detectors hold what they
  // are fed until then, so the device judges a call with the thresholds the server uses.
  let configured = 5;
  const collectorSettings = ({ webrtc, privacy, thresholds }: ResolvedOptions) => {
    configured = webrtc.sampleIntervalSec ?? 5;
    return {
      sampleIntervalSec: configured,
      emitOnThresholdCross: webrtc.emitOnThresholdCross ?? true,
      maxPeerConnections: webrtc.maxPeerConnections ?? 8,
      captureSdp: webrtc.captureSdp === true,
      strictPrivacy: privacy.mode === 'strict',
      ...(thresholds === undefined ? {} : { thresholds }),
    };
  };
  const startCollector = async () => {
    const startsEarly = options.webrtc?.enabled === true && options.webrtc.captureSdp !== true;
    const settled = startsEarly ? undefined : await resolved;
    if ((settled?.webrtc.enabled ?? options.webrtc?.enabled) !== true) return undefined;
    const module = await import('./webrtc/index.ts');
    const created = module.createCollector({
      ...collectorSettings(settled ?? resolveOptions(options, undefined)),
      awaitConfiguration: settled === undefined,
      emit: push,
      salt: session.id,
      // A finding of the on-device detectors is the recording trigger `webrtc:<kind>`.
      onFinding: (finding) => fire(`webrtc:${finding.kind.replace(/^webrtc_/, '')}`, Date.now()),
      // Healthy: the configured interval; below that, the governor's when it is longer.
      policy: () => {
        const level = governor.level();
        const allowed = governorPolicy(level);
        return {
          ...allowed,
          sampleIntervalSec:
            allowed.sampleIntervalSec === null
              ? null
              : level === 'healthy'
                ? configured
                : Math.max(allowed.sampleIntervalSec, configured),
        };
      },
    });
    created.instrument();
    if (settled === undefined)
      void resolved.then((resolvedOptions) => {
        // After shutdown the collector says nothing more.
        if (!stopped) created.configure(collectorSettings(resolvedOptions));
      });
    return created;
  };
  const collector = startCollector();

  const client: Client = {
    sessionId: session.id,
    visitId: visit.id,
    governorLevel: () => governor.level(),
    webrtc: {
      async attach(pc) {
        return (await collector)?.attach(pc);
      },
      async list() {
        return (await collector)?.list() ?? [];
      },
    },
    track(name, props, trackOptions) {
      const flat = flatProps(props);
      push({
        t: Date.now(),
        type: 'custom',
        name: String(name).slice(0, 256),
        ...(flat === undefined ? {} : { props: flat }),
        ...(SEVERITIES.includes(trackOptions?.severity as Severity)
          ? { severity: trackOptions?.severity }
          : {}),
      });
    },
    identify(user) {
      push({ t: Date.now(), type: 'identify', user: clipUser(user) });
    },
    trigger(name) {
      fire(String(name), Date.now());
    },
    async flush() {
      await ready;
      await seal();
      await transport?.flush();
    },
    async shutdown() {
      stopped = true;
      clearInterval(timer);
      clearInterval(governing);
      recorder?.stop();
      (await collector)?.stop();
      await client.flush();
      transport?.stop();
      for (const undo of detach.splice(0)) undo();
      if (current === client) current = undefined;
    },
  };
  current = client;
  for (const resolve of waiting.splice(0)) resolve(client);
  return client;
}

/**
 * {@link Client.webrtc} of the client of the last `init`, for code far from `init` (a call
 * module, a framework hook). Calls made before `init` wait for it, as the client's wait for the
 * collector: a connection attached early is tracked once the SDK starts.
 *
 * @example
 * ```ts
 * import { webrtc } from '@svc/browser-sdk';
 *
 * const pc = new RTCPeerConnection(configuration);
 * await webrtc.attach(pc); // its `pc_` id (undefined when the collector is off)
 * const [connection] = await webrtc.list(); // { pc, state, relayed, rttMs, lossPct, fps, score }
 * ```
 */
export const webrtc: WebrtcApi = {
  attach: async (pc) => (await initialized()).webrtc.attach(pc),
  list: async () => (await initialized()).webrtc.list(),
};

/** {@link Client.track} on the client of the last `init` (nothing before `init`). */
export function track(
  name: string,
  props?: Record<string, string | number | boolean>,
  options?: { severity?: Severity },
): void {
  current?.track(name, props, options);
}

/** {@link Client.identify} on the client of the last `init`. */
export function identify(user: User): void {
  current?.identify(user);
}

/** {@link Client.flush} on the client of the last `init`. */
export async function flush(): Promise<void> {
  await current?.flush();
}

/** {@link Client.shutdown} on the client of the last `init`. */
export async function shutdown(): Promise<void> {
  await current?.shutdown();
}
