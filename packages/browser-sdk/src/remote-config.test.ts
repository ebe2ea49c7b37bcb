import type { RunningServer } from '@svc/api/src/server.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsOf, dataDirectory, startApi } from '../test/api-server.ts';
import { CONFIG_FRESH_MS, CONFIG_STALE_MS, loadRemoteConfig, readRemoteConfig } from './remote-config.ts';

// `GET /v1/config` from the real server (servers/api on its embedded store, in this process).

let directory: Awaited<ReturnType<typeof dataDirectory>>;
let server: RunningServer;
let credentials: { projectKey: string; apiToken: string };

beforeAll(async () => {
  directory = await dataDirectory();
  server = await startApi(directory.path);
  credentials = credentialsOf(server);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await directory?.remove();
});

/** `localStorage` as the browser has it, in memory. */
function memoryStorage(): Storage {
  const values = new Map<string, string>();
  return {
    get length() {
      return values.size;
    },
    clear: () => values.clear(),
    getItem: (key) => values.get(key) ?? null,
    key: (index) => [...values.keys()][index] ?? null,
    removeItem: (key) => values.delete(key),
    setItem: (key, value) => values.set(key, String(value)),
  };
}

/** The page's `fetch`, counting requests. */
function countingFetch() {
  const requests: string[] = [];
  const counted: typeof fetch = (input, init) => {
    requests.push(String(input));
    return fetch(input, init);
  };
  return { fetch: counted, requests };
}

async function patchSettings(settings: unknown) {
  const project = await (
    await fetch(`${server.url}/v1/projects/current`, {
      headers: { authorization: `Bearer ${credentials.apiToken}` },
    })
  ).json();
  const response = await fetch(`${server.url}/v1/projects/${project.id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${credentials.apiToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ settings }),
  });
  expect(response.status).toBe(200);
}

describe('remote configuration', () => {
  it("reads the project's settings, then serves them from storage while fresh, stale ones while refreshing", async () => {
    await patchSettings({
      webrtc: { enabled: true, sampleIntervalSec: 10 },
      detectorThresholds: { lossPct: 8 },
    });
    const storage = memoryStorage();
    const counting = countingFetch();
    let now = 1_000_000;
    const options = {
      endpoint: server.url,
      projectKey: credentials.projectKey,
      sdk: '@svc/browser-sdk@0.0.0',
      fetch: counting.fetch,
      storage,
      now: () => now,
    };
    const first = await loadRemoteConfig(options);
    expect(first).toMatchObject({
      webrtc: { enabled: true, sampleIntervalSec: 10, captureSdp: false, maxPeerConnections: 8 },
      recording: { mode: 'always', triggers: [], monitorModeAfterMinutes: null },
      privacy: { mode: 'standard' },
    });
    expect(first?.detectorThresholds?.lossPct).toBe(8);
    expect(counting.requests).toHaveLength(1);
    expect(new URL(counting.requests[0] ?? '').searchParams.get('key')).toBe(credentials.projectKey);

    // Fresh: no request.
    now += CONFIG_FRESH_MS - 1;
    expect(await loadRemoteConfig(options)).toEqual(first);
    expect(counting.requests).toHaveLength(1);

    // Stale: the stored copy at once, a fresh one fetched for the next load.
    await patchSettings({ privacy: { mode: 'strict' } });
    now += 2;
    expect(await loadRemoteConfig(options)).toEqual(first);
    expect(counting.requests).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    now += 1;
    expect((await loadRemoteConfig(options))?.privacy).toEqual({ mode: 'strict' });
    expect(counting.requests).toHaveLength(2);

    // Too old to use: waited for.
    await patchSettings({ privacy: { mode: 'standard' }, webrtc: { enabled: false, sampleIntervalSec: 5 } });
    now += CONFIG_STALE_MS;
    expect((await loadRemoteConfig(options))?.webrtc?.enabled).toBe(false);
    expect(counting.requests).toHaveLength(3);
  });

  it('goes on without a config when the key is unknown or the server is unreachable', async () => {
    const base = { sdk: 'test', storage: memoryStorage() };
    expect(
      await loadRemoteConfig({ ...base, endpoint: server.url, projectKey: 'pk_unknown' }),
    ).toBeUndefined();
    expect(base.storage.length).toBe(0);
    expect(
      await loadRemoteConfig({ ...base, endpoint: 'http://127.0.0.1:9', projectKey: credentials.projectKey }),
    ).toBeUndefined();
  });

  it('keeps only known fields of the right types', () => {
    expect(
      readRemoteConfig({
        projectId: 'proj_1',
        webrtc: { enabled: 'yes', sampleIntervalSec: 15, future: true },
        recording: {
          mode: 'sometimes',
          triggers: ['error', 3],
          monitorModeAfterMinutes: null,
          monitorTriggers: ['x'],
          paused: 'no',
        },
        privacy: { mode: 'strict' },
        detectorThresholds: { lossPct: 7, rttMs: 'high' },
        extra: {},
      }),
    ).toEqual({
      webrtc: { sampleIntervalSec: 15 },
      recording: { monitorModeAfterMinutes: null, monitorTriggers: ['x'] },
      privacy: { mode: 'strict' },
      detectorThresholds: { lossPct: 7 },
    });
    expect(readRemoteConfig(null)).toEqual({});
    expect(readRemoteConfig({ recording: { paused: true } })).toEqual({ recording: { paused: true } });
  });
});
