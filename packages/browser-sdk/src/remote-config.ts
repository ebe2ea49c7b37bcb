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

type Shape = Record<string, 'boolean' | 'number' | 'string' | 'strings' | 'numberOrNull'>;

const SHAPES: Record<string, Shape> = {
  webrtc: {
    enabled: 'boolean',
    sampleIntervalSec: 'number',
    captureSdp: 'boolean',
    emitOnThresholdCross: 'boolean',
    maxPeerConnections: 'number',
  },
  recording: {
    mode: 'string',
    triggers: 'strings',
    monitorModeAfterMinutes: 'numberOrNull',
    monitorTriggers: 'strings',
  },
  privacy: { mode: 'string' },
};

function fits(value: unknown, kind: Shape[string]): boolean {
  if (kind === 'strings') return Array.isArray(value) && value.every((item) => typeof item === 'string');
  if (kind === 'numberOrNull') return value === null || (typeof value === 'number' && Number.isFinite(value));
  if (kind === 'number') return typeof value === 'number' && Number.isFinite(value);
  return typeof value === kind;
}

/** Keeps only the known fields of the right types (a newer server may send more). */
export function readRemoteConfig(body: unknown): RemoteConfig {
  const config: Record<string, unknown> = {};
  const source = (body ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [group, shape] of Object.entries(SHAPES)) {
    const values = source[group];
    if (typeof values !== 'object' || values === null) continue;
    const kept: Record<string, unknown> = {};
    for (const [field, kind] of Object.entries(shape))
      if (fits(values[field], kind)) kept[field] = values[field];
    config[group] = kept;
  }
  const recording = config.recording as RemoteConfig['recording'];
  if (recording?.mode !== undefined && recording.mode !== 'always' && recording.mode !== 'conditional')
    delete recording.mode;
  const privacy = config.privacy as RemoteConfig['privacy'];
  if (privacy?.mode !== undefined && privacy.mode !== 'standard' && privacy.mode !== 'strict')
    delete privacy.mode;
  const thresholds = source.detectorThresholds;
  if (typeof thresholds === 'object' && thresholds !== null) {
    const kept: Record<string, number> = {};
    for (const [name, value] of Object.entries(thresholds))
      if (typeof value === 'number' && Number.isFinite(value)) kept[name] = value;
    config.detectorThresholds = kept;
  }
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
