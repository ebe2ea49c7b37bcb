import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningServer, startServer } from '@svc/api/src/server.ts';
import { build } from 'esbuild';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// The SDK in headless Chromium against the real server (servers/api on its embedded store): the
// page is served from one origin, the API from another, as in production (CORS included).

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;

/** Where apt puts Chromium (`apt-get install chromium`; `.ci/run` installs it). */
const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

let directory: string;
let api: RunningServer;
let pages: Server;
let pageUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'svc-sdk-browser-'));
  api = await startServer(
    { PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: directory, SVC_LOG_LEVEL: 'silent' },
    { output: () => {} },
  );
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('../src/index.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    globalName: 'SvcSdk',
    platform: 'browser',
    target: 'es2022',
    // The workspace packages from their sources, as the tests import them.
    conditions: ['@svc/source'],
    // Chromium has CompressionStream: the on-demand pako import never runs here.
    external: ['pako'],
    write: false,
  });
  const script = bundle.outputFiles[0]?.text ?? '';
  const credentials = api.credentials;
  if (credentials === null) throw new Error('expected first-start credentials');
  const html = `<!doctype html><meta charset="utf-8"><title>sdk</title>
<script src="/sdk.js"></script>
<script>window.sdk = SvcSdk.init({
  ...${JSON.stringify({ projectKey: credentials.projectKey, endpoint: api.url, release: '2.0.0', flushIntervalSec: 1 })},
  ...JSON.parse(new URLSearchParams(location.search).get('options') ?? '{}'),
});</script>`;
  pages = createServer((request, response) => {
    if (request.url === '/sdk.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else response.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const address = pages.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  pageUrl = `http://127.0.0.1:${address.port}/`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // A fake camera and microphone, granted; peers of one page connect over loopback.
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      '--allow-loopback-in-peer-connection',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await api?.close();
  await rm(directory, { recursive: true, force: true });
});

beforeEach(async () => {
  context = await browser.newContext();
  page = await context.newPage();
  await page.goto(pageUrl);
});

afterEach(async () => {
  await context?.close();
});

async function read(path: string): Promise<Json> {
  const response = await fetch(`${api.url}${path}`, {
    headers: { authorization: `Bearer ${api.credentials?.apiToken}` },
  });
  expect(response.status, path).toBe(200);
  return response.json();
}

/** Every event the server holds for the session, in seq order, and the session's detail. */
async function stored(sessionId: string) {
  const session = await read(`/v1/sessions/${sessionId}`);
  const events: Json[] = [];
  for (const chunk of session.chunks)
    events.push(...(await read(`/v1/sessions/${sessionId}/chunks/${chunk.seq}`)).events);
  return { session, events };
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const trackSteps = (from: number, to: number) =>
  page.evaluate(
    ([start, end]) => {
      for (let index = start as number; index < (end as number); index += 1)
        (window as Json).sdk.track('step', { index });
    },
    [from, to],
  );

const indexes = (events: Json[]) =>
  events.filter((event) => event.type === 'custom').map((event) => event.props.index);

describe('the browser SDK in headless Chromium, against the real server', () => {
  it('delivers a session complete and in order, with its meta', async () => {
    await trackSteps(0, 700);
    await page.evaluate(() => (window as Json).sdk.flush());
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    const { session, events } = await stored(sessionId);
    expect(indexes(events)).toEqual(Array.from({ length: 700 }, (_, index) => index));
    expect(session.chunks.map((chunk: Json) => chunk.seq)).toEqual(
      session.chunks.map((_: Json, index: number) => index),
    );
    expect(session.gaps).toEqual([]);
    expect(session).toMatchObject({
      release: '2.0.0',
      browser: { name: 'Chrome' },
      device: 'desktop',
      url: pageUrl,
    });
  });

  it('loses no chunk when the network is cut mid-session and comes back', async () => {
    await trackSteps(0, 50);
    await page.evaluate(() => (window as Json).sdk.flush());
    await context.setOffline(true);
    await trackSteps(50, 120);
    // Sealed every second while offline: the attempts fail and the chunks wait.
    await page.waitForTimeout(2_500);
    await context.setOffline(false);
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    await until(async () => indexes((await stored(sessionId)).events).length === 120, 30_000);
    const { session, events } = await stored(sessionId);
    expect(indexes(events)).toEqual(Array.from({ length: 120 }, (_, index) => index));
    expect(session.gaps).toEqual([]);
  }, 60_000);

  it('resends the chunks a page left unacknowledged after a reload, in the same session', async () => {
    await trackSteps(0, 10);
    await page.evaluate(() => (window as Json).sdk.flush());
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    // The server becomes unreachable for this page: the next chunks stay in IndexedDB.
    await page.route('**/v1/ingest', (route) => route.abort('connectionrefused'));
    await trackSteps(10, 30);
    await page.waitForTimeout(1_500);
    const waiting = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const open = indexedDB.open('svc-sdk');
          open.onsuccess = () => {
            const all = open.result.transaction('chunks').objectStore('chunks').getAll();
            all.onsuccess = () => resolve(all.result.length);
          };
        }),
    );
    expect(waiting).toBeGreaterThan(0);
    await page.unroute('**/v1/ingest');
    await page.reload();
    expect(await page.evaluate(() => (window as Json).sdk.sessionId)).toBe(sessionId);
    await trackSteps(30, 40);
    await page.evaluate(() => (window as Json).sdk.flush());
    await until(async () => indexes((await stored(sessionId)).events).length === 40, 30_000);
    const { session, events } = await stored(sessionId);
    expect([...indexes(events)].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, index) => index),
    );
    expect(session.chunks.map((chunk: Json) => chunk.seq)).toEqual(
      session.chunks.map((_: Json, index: number) => index),
    );
    expect(session.gaps).toEqual([]);
  }, 60_000);

  it('collects a real two-peer call whose samples and events the server accepts and turns into calls', async () => {
    await page.goto(
      `${pageUrl}?options=${encodeURIComponent(JSON.stringify({ webrtc: { enabled: true, sampleIntervalSec: 2 } }))}`,
    );
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    await page.evaluate(async () => {
      // The collector loads on demand: wait until it wraps RTCPeerConnection.
      await (window as Json).sdk.webrtc.list();
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
      const caller = new RTCPeerConnection();
      const callee = new RTCPeerConnection();
      caller.onicecandidate = (event) => event.candidate && callee.addIceCandidate(event.candidate);
      callee.onicecandidate = (event) => event.candidate && caller.addIceCandidate(event.candidate);
      for (const track of stream.getTracks()) caller.addTrack(track, stream);
      await caller.setLocalDescription(await caller.createOffer());
      await callee.setRemoteDescription(caller.localDescription as RTCSessionDescription);
      await callee.setLocalDescription(await callee.createAnswer());
      await caller.setRemoteDescription(callee.localDescription as RTCSessionDescription);
      (window as Json).peers = [caller, callee];
    });
    await page.waitForTimeout(6_500);
    const listed: Json[] = await page.evaluate(() => (window as Json).sdk.webrtc.list());
    expect(listed).toHaveLength(2);
    expect(listed.every((entry) => entry.state === 'connected')).toBe(true);
    expect(Math.max(...listed.map((entry) => entry.fps ?? 0))).toBeGreaterThan(0);
    await page.evaluate(async () => {
      for (const peer of (window as Json).peers) peer.close();
      await (window as Json).sdk.flush();
    });

    const { session, events } = await stored(sessionId);
    expect(session.gaps).toEqual([]);
    const names = events.filter((event) => event.type === 'call.event').map((event) => event.name);
    for (const name of [
      'media_acquired',
      'device_inventory',
      'pc_created',
      'connection_state',
      'candidate_pair_change',
      'track_added',
      'pc_closed',
    ])
      expect(names, name).toContain(name);
    const samples = events.filter((event) => event.type === 'call.sample');
    expect(samples.length).toBeGreaterThanOrEqual(4);
    // No address, port or SDP travels.
    expect(JSON.stringify(events)).not.toMatch(/candidate:|\d+\.\d+\.\d+\.\d+|a=ice-ufrag/);
    // The server processed them into two calls: connected, with a setup time, closed.
    await until(async () => (await read(`/v1/sessions/${sessionId}/calls`)).items.length === 2, 30_000);
    const calls = (await read(`/v1/sessions/${sessionId}/calls`)).items;
    for (const call of calls) {
      expect(call).toMatchObject({
        connected: true,
        failedToConnect: false,
        state: 'closed',
        hasIssue: false,
      });
      expect(call.setupMs).toBeGreaterThanOrEqual(0);
      // A clean loopback call scores high (@svc/quality-score on the device and on the server).
      expect(call.qualityScore).toBeGreaterThanOrEqual(80);
      expect(call.codecs).toEqual(expect.arrayContaining(['audio/opus']));
    }
  }, 60_000);

  it('records a denied camera as media_error permission_denied (no fake-ui flag: a real denial)', async () => {
    const strict = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-fake-device-for-media-stream'],
    });
    try {
      const denied = await (await strict.newContext()).newPage();
      await denied.goto(
        `${pageUrl}?options=${encodeURIComponent(JSON.stringify({ webrtc: { enabled: true } }))}`,
      );
      const sessionId: string = await denied.evaluate(() => (window as Json).sdk.sessionId);
      const error: string = await denied.evaluate(async () => {
        await (window as Json).sdk.webrtc.list();
        try {
          await navigator.mediaDevices.getUserMedia({ video: true });
          return 'granted';
        } catch (failure) {
          return (failure as Error).name;
        }
      });
      expect(error).toBe('NotAllowedError');
      await denied.evaluate(() => (window as Json).sdk.flush());
      const { events } = await stored(sessionId);
      expect(events.filter((event) => event.type === 'call.event' && event.name === 'media_error')).toEqual([
        expect.objectContaining({ errorName: 'NotAllowedError', class: 'permission_denied', kind: 'video' }),
      ]);
      // The server's detectors agree: a session finding, on the first page of its issues.
      await until(
        async () =>
          (await read(`/v1/sessions/${sessionId}/issues`)).items.some(
            (item: Json) => item.kind === 'finding' && item.name === 'webrtc_media_permission_denied',
          ),
        30_000,
      );
    } finally {
      await strict.close();
    }
  }, 60_000);
});
