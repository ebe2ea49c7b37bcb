import { inflateSync } from 'node:zlib';
import type { RunningServer } from '@svc/api/src/server.ts';
import { parseChunk } from '@svc/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentialsOf, dataDirectory, startApi, until } from '../test/api-server.ts';
import { createMemoryChunkStore } from './chunk-store.ts';
import { deflate } from './compression.ts';
import { init } from './index.ts';
import { createSessionWriter } from './session-writer.ts';
import { createTransport, KEEPALIVE_BUDGET_BYTES } from './transport.ts';

// The SDK's core against the real server (servers/api on its embedded store, in this process):
// sessions arrive complete and in order, retries lose nothing, refused chunks become gaps.

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;

let directory: Awaited<ReturnType<typeof dataDirectory>>;
let server: RunningServer;
let credentials: { projectKey: string; apiToken: string };

const start = (port = '0') => startApi(directory.path, port);

beforeAll(async () => {
  directory = await dataDirectory();
  server = await start();
  credentials = credentialsOf(server);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await directory?.remove();
});

const clients: Array<{ shutdown(): Promise<void> }> = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.shutdown();
});

async function api(path: string): Promise<Json> {
  const response = await fetch(`${server.url}${path}`, {
    headers: { authorization: `Bearer ${credentials.apiToken}` },
  });
  expect(response.status, path).toBe(200);
  return response.json();
}

async function chunkOf(sessionId: string, seq: number): Promise<Json> {
  return api(`/v1/sessions/${sessionId}/chunks/${seq}`);
}

function client(overrides: Partial<Parameters<typeof init>[0]> = {}) {
  const created = init({
    projectKey: credentials.projectKey,
    endpoint: server.url,
    release: '1.0.0',
    environment: 'test',
    store: createMemoryChunkStore(),
    flushIntervalSec: 3600,
    ...overrides,
  });
  clients.push(created);
  return created;
}

describe('the browser SDK core against the real server', () => {
  it('sends meta on seq 0, then the events in order, each chunk valid and acknowledged', async () => {
    const sdk = client({ user: { id: 'u_1' } });
    sdk.track('signed_up', { plan: 'pro', seats: 3, trial: false, nested: { no: 1 } as never });
    sdk.identify({ id: 'u_2', email: 'a@example.com' });
    sdk.track('checkout_failed', undefined, { severity: 'high' });
    await sdk.flush();

    const session = await api(`/v1/sessions/${sdk.sessionId}`);
    expect(session).toMatchObject({ release: '1.0.0', environment: 'test', user: { id: 'u_2' } });
    expect(session.chunks).toHaveLength(1);
    const chunk = await chunkOf(sdk.sessionId, 0);
    expect(parseChunk(chunk).success).toBe(true);
    expect(chunk).toMatchObject({
      v: 1,
      sessionId: sdk.sessionId,
      visitId: sdk.visitId,
      seq: 0,
      meta: {
        sdk: { name: '@svc/browser-sdk' },
        release: '1.0.0',
        user: { id: 'u_1' },
        recording: { mode: 'always' },
      },
    });
    // The page load's `nav` first (no page here: `about:blank`), then the events as they came.
    expect(
      chunk.events.map((event: Json) => [event.type, event.name ?? event.user?.id ?? event.url]),
    ).toEqual([
      ['nav', 'about:blank'],
      ['custom', 'signed_up'],
      ['identify', 'u_2'],
      ['custom', 'checkout_failed'],
    ]);
    // Only flat properties travel.
    expect(chunk.events[1].props).toEqual({ plan: 'pro', seats: 3, trial: false });
    expect(chunk.events[3].severity).toBe('high');
  });

  it('seals 1 200 events into chunks of 500 with contiguous seqs', async () => {
    const sdk = client();
    for (let index = 0; index < 1_200; index += 1) sdk.track('step', { index });
    await sdk.flush();
    const session = await api(`/v1/sessions/${sdk.sessionId}`);
    expect(session.chunks).toHaveLength(3);
    const indexes: number[] = [];
    for (const seq of [0, 1, 2]) {
      const chunk = await chunkOf(sdk.sessionId, seq);
      // The page load's `nav` comes first.
      for (const event of chunk.events) if (event.type === 'custom') indexes.push(event.props.index);
    }
    expect(indexes).toEqual(Array.from({ length: 1_200 }, (_, index) => index));
    expect(session.gaps).toEqual([]);
  });

  it('loses nothing while the server is down, and resends stored chunks after a reload', async () => {
    const store = createMemoryChunkStore();
    const sdk = client({ store });
    sdk.track('before');
    await sdk.flush();
    const port = new URL(server.url).port;
    await server.close();

    sdk.track('while_down', { n: 1 });
    sdk.track('while_down', { n: 2 });
    // The seal is stored before it is sent: still there while the server is away.
    const flushing = sdk.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await store.all()).map((chunk) => chunk.seq)).toEqual([1]);
    await sdk.shutdown();
    await flushing;

    // "Reload": a new page with the same store sends what the old one left.
    server = await start(port);
    const next = client({ store });
    await next.flush();
    expect(await store.all()).toEqual([]);
    const chunk = await chunkOf(sdk.sessionId, 1);
    expect(chunk.events.map((event: Json) => event.props.n)).toEqual([1, 2]);
    const session = await api(`/v1/sessions/${sdk.sessionId}`);
    expect(session.chunks).toHaveLength(2);
    expect(session.gaps).toEqual([]);
  }, 60_000);

  it('raises the governor while uploads fail, and records it as a governor event', async () => {
    const sdk = client();
    sdk.track('before');
    await sdk.flush();
    const port = new URL(server.url).port;
    await server.close();
    sdk.track('while_down');
    void sdk.flush();
    await until(() => sdk.governorLevel() === 'constrained', 15_000);
    server = await start(port);
    await until(async () => {
      await sdk.flush();
      const session = await api(`/v1/sessions/${sdk.sessionId}`);
      const events = [];
      for (const entry of session.chunks) events.push(...(await chunkOf(sdk.sessionId, entry.seq)).events);
      return events.some((event: Json) => event.type === 'governor' && event.level === 'constrained');
    }, 30_000);
    expect(sdk.governorLevel()).toBe('constrained'); // comes down only after 30 s of calm
  }, 60_000);
});

describe('sealing and compression', () => {
  it('splits a seal into chunks that each fit a keepalive request', async () => {
    const store = createMemoryChunkStore();
    const sent: number[] = [];
    const transport = createTransport({
      endpoint: 'http://127.0.0.1:9',
      projectKey: 'pk_x',
      store,
      fetch: async () => new Response('{}', { status: 200 }),
    });
    const writer = createSessionWriter({
      sessionId: 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
      nextSeq: 0,
      store,
      transport,
      onSeq: (next) => sent.push(next),
    });
    for (let index = 0; index < 400; index += 1) {
      const noise = Array.from({ length: 600 }, () =>
        String.fromCharCode(33 + Math.floor(Math.random() * 90)),
      ).join('');
      writer.push({ t: 1_763_700_000_000 + index, type: 'custom', name: 'noise', props: { noise } });
    }
    const chunks = await writer.seal({ maxBodyBytes: KEEPALIVE_BUDGET_BYTES });
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((chunk) => chunk.body.byteLength <= KEEPALIVE_BUDGET_BYTES)).toBe(true);
    expect(chunks.map((chunk) => chunk.seq)).toEqual(chunks.map((_, index) => index));
    const events = chunks.flatMap((chunk) => JSON.parse(inflateSync(chunk.body).toString('utf8')).events);
    expect(events).toHaveLength(400);
    expect(events.map((event: Json) => event.t)).toEqual(
      [...events.map((event: Json) => event.t)].sort((a, b) => a - b),
    );
    transport.stop();
  });

  it('falls back to pako where CompressionStream is missing, with the same inflated bytes', async () => {
    const text = JSON.stringify({ hello: 'world', n: [1, 2, 3] });
    const native = await deflate(text);
    const original = globalThis.CompressionStream;
    Reflect.deleteProperty(globalThis, 'CompressionStream');
    try {
      const fallback = await deflate(text);
      expect(inflateSync(fallback).toString('utf8')).toBe(text);
    } finally {
      globalThis.CompressionStream = original;
    }
    expect(inflateSync(native).toString('utf8')).toBe(text);
  });
});
