/**
 * Remote configuration (`GET /v1/config?key=&sdk=`, service-spec "Health and configuration"):
 * what the project's settings say about the collector, recording and privacy. Kept in
 * `localStorage` so a page load needs no request while it is fresh (60 s), and never waits for
 * one when any copy is there (the copy is used, a fresh one is fetched for the next load).
 */

/** The parts of `GET /v1/config` the SDK uses; anything missing or of the wrong type is left out. */
export interface RemoteConfig {
  webrtc?: {
    enabled?: boolean;
    sampleIntervalSec?: number;
    captureSdp?: boolean;
    emitOnThresholdCross?: boolean;
    maxPeerConnections?: number;
  };
  recording?: {
    mode?: 'always' | 'conditional';
    triggers?: string[];
    monitorModeAfterMinutes?: number | null;
    monitorTriggers?: string[];
    /** A monthly cap of the organization is reached: start no new session. */
    paused?: boolean;
  };
  privacy?: { mode?: 'standard' | 'strict' };
  detectorThresholds?: Record<string, number>;
}

/** A fresh copy is used without a request for this long (the server's `max-age`). */
export const CONFIG_FRESH_MS = 60_000;
/** An older copy is still used (while a fresh one is fetched) up to this age. */
export const CONFIG_STALE_MS = 24 * 60 * 60_000;
/** With no copy at all, a page waits this long for the config, then goes on with its own options. */
export const CONFIG_TIMEOUT_MS = 3000;

export interface LoadConfigOptions {
  endpoint: string;
  projectKey: string;
  sdk: string;
  fetch?: typeof fetch;
  storage?: Storage;
  now?: () => number;
}

/**
 * The fields the SDK takes, as `group.field:kind`: `b` boolean, `n` finite number, `N` finite
 * number or null, `s` array of strings, or the allowed values separated by `|`.
 */
const FIELDS =
  'webrtc.enabled:b webrtc.sampleIntervalSec:n webrtc.captureSdp:b webrtc.emitOnThresholdCross:b ' +
  'webrtc.maxPeerConnections:n recording.mode:always|conditional recording.triggers:s ' +
  'recording.monitorModeAfterMinutes:N recording.monitorTriggers:s recording.paused:b ' +
  'privacy.mode:standard|strict';

const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

function fits(value: unknown, kind: string): boolean {
  if (kind === 'b') return typeof value === 'boolean';
  if (kind === 'n') return isNumber(value);
  if (kind === 'N') return value === null || isNumber(value);
  if (kind === 's') return Array.isArray(value) && value.every((item) => typeof item === 'string');
  return kind.split('|').includes(value as string);
}

/** Keeps only the known fields of the right types (a newer server may send more). */
export function readRemoteConfig(body: unknown): RemoteConfig {
  const source = (body ?? {}) as Record<string, Record<string, unknown> | null | undefined>;
  const config: Record<string, Record<string, unknown>> = {};
  for (const entry of FIELDS.split(' ')) {
    const [path = '', kind = ''] = entry.split(':');
    const [group = '', field = ''] = path.split('.');
    const values = source[group];
    if (typeof values !== 'object' || values === null) continue;
    config[group] ??= {};
    if (fits(values[field], kind)) (config[group] as Record<string, unknown>)[field] = values[field];
  }
  const thresholds = source.detectorThresholds;
  if (typeof thresholds === 'object' && thresholds !== null)
    config.detectorThresholds = Object.fromEntries(
      Object.entries(thresholds).filter(([, value]) => isNumber(value)),
    );
  return config as RemoteConfig;
}

/**
 * The project's remote configuration: the stored copy when it is fresh; else a stale copy at
 * once (refreshed in the background for the next load); else the server's answer, waited for
 * at most {@link CONFIG_TIMEOUT_MS}. `undefined` when there is none (the page's options apply).
 *
 * @example
 * ```ts
 * const remote = await loadRemoteConfig({ endpoint, projectKey, sdk: '@svc/browser-sdk@1.0.0' });
 * ```
 */
export async function loadRemoteConfig(options: LoadConfigOptions): Promise<RemoteConfig | undefined> {
  const now = options.now ?? Date.now;
  const key = `svc:config:${options.projectKey}`;
  let stored: { at: number; config: RemoteConfig } | undefined;
  try {
    stored = JSON.parse(options.storage?.getItem(key) ?? 'null') ?? undefined;
  } catch {
    stored = undefined;
  }
  const age = stored === undefined ? Number.POSITIVE_INFINITY : now() - stored.at;
  if (stored !== undefined && age >= 0 && age < CONFIG_FRESH_MS) return stored.config;

  const fetching = (async () => {
    const url = new URL('/v1/config', options.endpoint);
    url.searchParams.set('key', options.projectKey);
    url.searchParams.set('sdk', options.sdk);
    const response = await (options.fetch ?? fetch)(url, { credentials: 'omit' });
    if (!response.ok) throw new Error(`GET /v1/config answered ${response.status}`);
    const config = readRemoteConfig(await response.json());
    try {
      options.storage?.setItem(key, JSON.stringify({ at: now(), config }));
    } catch {
      // Storage full or denied: the next load asks again.
    }
    return config;
  })();

  if (stored !== undefined && age >= 0 && age < CONFIG_STALE_MS) {
    fetching.catch(() => undefined);
    return stored.config;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, CONFIG_TIMEOUT_MS, undefined);
  });
  try {
    return await Promise.race([fetching.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
