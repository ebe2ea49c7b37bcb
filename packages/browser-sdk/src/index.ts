/**
 * `@svc/browser-sdk`: records a page's session and sends it to the service (PROTOCOL.md §1).
 * This entry is the core: sessions and visits, `track`/`identify`, error capture, and the
 * transport (chunks, deflate, one request in flight, retries, IndexedDB, keepalive on exit).
 *
 * @packageDocumentation
 */
import { type ChunkStore, openChunkStore } from './chunk-store.ts';
import { createGovernor, type GovernorLevel, governorPolicy } from './governor.ts';
import { createId } from './ids.ts';
import { browserFacts } from './meta.ts';
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
export { createTransport, KEEPALIVE_BUDGET_BYTES, type Transport, type TransportState } from './transport.ts';

/** The SDK's version, sent in `meta.sdk`. */
export const SDK_VERSION = '0.0.0';

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
  /** Where unacknowledged chunks wait. Default IndexedDB (memory where it is unavailable). */
  store?: ChunkStore;
  /** The `fetch` the transport uses. Default the page's. */
  fetch?: typeof fetch;
  /** The WebRTC collector (service-spec "WebRTC options"); loaded on demand when `enabled`. */
  webrtc?: WebrtcOptions;
}

/** Options of the WebRTC collector, as service-spec.md names them. */
export interface WebrtcOptions {
  /** Loads the collector (`@svc/browser-sdk/webrtc`). Default false. */
  enabled?: boolean;
  /** Seconds between samples while every detector is quiet. Default 5. */
  sampleIntervalSec?: number;
  /** Redacted SDP capture. Default false; not captured by this version. */
  captureSdp?: boolean;
  /** 1 s samples at once while a detector threshold is crossed. Default true. */
  emitOnThresholdCross?: boolean;
  /** Peer connections sampled at most. Default 8. */
  maxPeerConnections?: number;
}

/** `client.webrtc`: works before the collector has loaded (calls wait for it). */
export interface WebrtcApi {
  /** Tracks a peer connection created before `init` (idempotent). */
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

/** Flat properties only: strings, finite numbers and booleans; anything else is left out. */
function flatProps(
  props: Record<string, unknown> | undefined,
): Record<string, string | number | boolean> | undefined {
  if (props === undefined) return undefined;
  const flat: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(props)) {
    if (
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value))
    )
      flat[key] = value;
  }
  return flat;
}

let current: Client | undefined;

/**
 * Starts recording this page's session. The session id lives in `sessionStorage`, so a reload
 * in the same tab continues the session (and its seqs); the visit id lives in `localStorage`
 * and spans the tabs of one visit. Both end after 30 minutes without activity. Chunks left
 * unacknowledged by an earlier page are sent again first.
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
  const session = remember(tab, SESSION_KEY) ?? { id: createId('ses'), seq: 0, at: Date.now() };
  const visit = remember(local, VISIT_KEY) ?? { id: createId('vis'), at: Date.now() };
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

  const userAgent = typeof navigator === 'undefined' ? '' : navigator.userAgent;
  const meta = {
    sdk: { name: '@svc/browser-sdk', version: SDK_VERSION },
    startedAt: Date.now(),
    url: page?.location.href ?? 'about:blank',
    ...(typeof document !== 'undefined' && document.referrer !== '' ? { referrer: document.referrer } : {}),
    userAgent,
    ...browserFacts(userAgent),
    viewport: { w: page?.innerWidth ?? 0, h: page?.innerHeight ?? 0 },
    ...(options.release === undefined ? {} : { release: options.release }),
    ...(options.environment === undefined ? {} : { environment: options.environment }),
    ...(options.user === undefined ? {} : { user: options.user }),
    recording: { mode: 'always' },
  };

  let writer: SessionWriter | undefined;
  let transport: Transport | undefined;
  const early: WireEvent[] = [];
  const governor = createGovernor();
  const push = (event: WireEvent) => {
    touch();
    if (writer === undefined) early.push(event);
    else writer.push(event);
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
    if (level !== undefined) push({ t: Date.now(), type: 'governor', level });
  };

  const ready = (async () => {
    const store = options.store ?? (await openChunkStore());
    transport = createTransport({
      endpoint: options.endpoint,
      projectKey: options.projectKey,
      store,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      // What the server can never take is recorded as a gap, not dropped silently.
      onDropped: (chunk) =>
        push({ t: Date.now(), type: 'gap', fromT: chunk.firstT, toT: chunk.lastT, reason: 'overflow' }),
    });
    for (const chunk of await store.all().catch(() => [])) transport.enqueue(chunk);
    writer = createSessionWriter({
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
    for (const event of early.splice(0)) writer.push(event);
    await writer.seal();
  })();

  const onError = (event: ErrorEvent) => {
    const error = event.error as Error | undefined;
    push({
      t: Date.now(),
      type: 'error',
      message: String(error?.message ?? event.message ?? 'Error'),
      ...(error?.name === undefined ? {} : { name: error.name }),
      ...(typeof error?.stack === 'string' ? { stack: error.stack } : {}),
      source: 'onerror',
    });
  };
  const onRejection = (event: PromiseRejectionEvent) => {
    const reason = event.reason as Error | undefined;
    push({
      t: Date.now(),
      type: 'error',
      message: String(reason?.message ?? reason ?? 'Unhandled rejection'),
      ...(reason?.name === undefined ? {} : { name: reason.name }),
      ...(typeof reason?.stack === 'string' ? { stack: reason.stack } : {}),
      source: 'unhandledrejection',
    });
  };
  // Leaving (hidden, pagehide): seal in chunks that fit a keepalive request, and send them so.
  const onExit = () => {
    if (writer === undefined || transport === undefined) return;
    const sending = transport;
    void writer.seal({ maxBodyBytes: KEEPALIVE_BUDGET_BYTES }).then(() => sending.sendOnExit());
  };
  const onVisibility = () => {
    if (document.visibilityState === 'hidden') onExit();
  };
  const onOnline = () => transport?.retryNow();
  if (page !== undefined) {
    if (options.captureErrors !== false) {
      page.addEventListener('error', onError);
      page.addEventListener('unhandledrejection', onRejection);
    }
    page.addEventListener('pagehide', onExit);
    page.addEventListener('online', onOnline);
    document.addEventListener('visibilitychange', onVisibility);
  }
  const timer = setInterval(
    () => {
      govern();
      void writer?.seal();
    },
    (options.flushIntervalSec ?? 5) * 1000,
  );
  const governing = setInterval(govern, 1000);

  // The collector is its own chunk: imported only when enabled, with the governor's policy.
  const collector =
    options.webrtc?.enabled === true
      ? import('./webrtc/index.ts').then((module) => {
          const created = module.createCollector({
            emit: push,
            sampleIntervalSec: options.webrtc?.sampleIntervalSec ?? 5,
            emitOnThresholdCross: options.webrtc?.emitOnThresholdCross ?? true,
            maxPeerConnections: options.webrtc?.maxPeerConnections ?? 8,
            salt: session.id,
            // Healthy: the configured interval; below that, the governor's when it is longer.
            policy: () => {
              const level = governor.level();
              const allowed = governorPolicy(level);
              const configured = options.webrtc?.sampleIntervalSec ?? 5;
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
          return created;
        })
      : undefined;

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
        ...(trackOptions?.severity === undefined ? {} : { severity: trackOptions.severity }),
      });
    },
    identify(user) {
      push({ t: Date.now(), type: 'identify', user });
    },
    async flush() {
      await ready;
      await writer?.seal();
      await transport?.flush();
    },
    async shutdown() {
      clearInterval(timer);
      clearInterval(governing);
      (await collector)?.stop();
      await client.flush();
      transport?.stop();
      if (page !== undefined) {
        page.removeEventListener('error', onError);
        page.removeEventListener('unhandledrejection', onRejection);
        page.removeEventListener('pagehide', onExit);
        page.removeEventListener('online', onOnline);
        document.removeEventListener('visibilitychange', onVisibility);
      }
      if (current === client) current = undefined;
    },
  };
  current = client;
  return client;
}

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
