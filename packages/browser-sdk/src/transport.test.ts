import { inflateSync } from 'node:zlib';
import type { RunningServer } from '@svc/api/src/server.ts';
import { parseChunk } from '@svc/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentialsOf, dataDirectory, startApi, until } from '../test/api-server.ts';
import { createMemoryChunkStore, type StoredChunk, withExitChunks } from './chunk-store.ts';
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
    // The events as they came (no page here, so no page load's `nav`).
    expect(chunk.events.map((event: Json) => [event.type, event.name ?? event.user?.id])).toEqual([
      ['custom', 'signed_up'],
      ['identify', 'u_2'],
      ['custom', 'checkout_failed'],
    ]);
    // Only flat properties travel.
    expect(chunk.events[0].props).toEqual({ plan: 'pro', seats: 3, trial: false });
    expect(chunk.events[2].severity).toBe('high');
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
      indexes.push(...chunk.events.map((event: Json) => event.props.index));
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
    // It comes down only after 30 s of calm. Failures while the server restarts may have raised it
    // further (on a loaded machine the restart takes longer): still raised, not back to healthy.
    expect(sdk.governorLevel()).not.toBe('healthy');
  }, 60_000);
});

/** The `X-Service-Encoding` of a transport's request. */
const encodingOf = (request: RequestInit | undefined) =>
  new Headers(request?.headers).get('X-Service-Encoding') ?? '';

/** A valid seq 0 meta (PROTOCOL.md §1). */
const META = {
  sdk: { name: '@svc/browser-sdk', version: '0.0.0-source' },
  startedAt: 1_763_700_000_000,
  url: 'https://example.com/',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0',
  browser: { name: 'Chrome', version: '156.0.0.0' },
  os: { name: 'Linux' },
  device: 'desktop',
  viewport: { w: 1280, h: 720 },
  recording: { mode: 'always' },
};

describe('sealing and compression', () => {
  it('seals at exit at once, as plain JSON chunks that each fit a keepalive request', async () => {
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
      meta: META,
      store,
      transport,
      onSeq: (next) => sent.push(next),
    });
    // Pushed newest first: sealed in time order.
    for (let index = 399; index >= 0; index -= 1) {
      const noise = Array.from({ length: 600 }, () =>
        String.fromCharCode(33 + Math.floor(Math.random() * 90)),
      ).join('');
      writer.push({ t: 1_763_700_000_000 + index, type: 'custom', name: 'noise', props: { noise } });
    }
    const chunks = writer.sealNow(KEEPALIVE_BUDGET_BYTES);
    // Synchronous: the chunks and their seqs (kept for the next page) exist before anything is awaited.
    expect(chunks.length).toBeGreaterThan(3);
    expect(sent.at(-1)).toBe(chunks.length);
    expect(writer.pending()).toBe(0);
    expect(chunks.every((chunk) => chunk.json === true)).toBe(true);
    expect(chunks.every((chunk) => chunk.body.byteLength <= KEEPALIVE_BUDGET_BYTES)).toBe(true);
    expect(chunks.map((chunk) => chunk.seq)).toEqual(chunks.map((_, index) => index));
    const parsed = chunks.map((chunk) => JSON.parse(new TextDecoder().decode(chunk.body)));
    expect(parsed.map((chunk) => chunk.seq)).toEqual(chunks.map((chunk) => chunk.seq));
    expect(parsed.every((chunk) => parseChunk(chunk).success)).toBe(true);
    const events = parsed.flatMap((chunk) => chunk.events);
    expect(events.map((event: Json) => event.t)).toEqual(
      Array.from({ length: 400 }, (_, index) => 1_763_700_000_000 + index),
    );
    expect(chunks.map((chunk) => [chunk.firstT, chunk.lastT])).toEqual(
      parsed.map((chunk) => [chunk.events[0].t, chunk.events.at(-1).t]),
    );
    // Neither stored nor queued: the caller keeps and sends them.
    expect(await store.all()).toEqual([]);
    expect(transport.state().backlogChunks).toBe(0);
    // Nothing buffered: nothing more (seq 0 went already).
    expect(writer.sealNow(KEEPALIVE_BUDGET_BYTES)).toEqual([]);
    transport.stop();
  });

  it('takes the seq of a seal when it starts: an exit seal takes over one in flight, its seq and JSON', async () => {
    const store = createMemoryChunkStore();
    const requests: string[] = [];
    const transport = createTransport({
      endpoint: 'http://127.0.0.1:9',
      projectKey: 'pk_x',
      store,
      fetch: async (_, request) => {
        requests.push(encodingOf(request));
        return new Response('{}', { status: 200 });
      },
    });
    const sent: number[] = [];
    const writer = createSessionWriter({
      sessionId: 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
      nextSeq: 0,
      meta: META,
      store,
      transport,
      onSeq: (next) => sent.push(next),
      now: () => 1_763_700_000_500,
    });
    writer.push({ t: 1_763_700_000_000, type: 'custom', name: 'first' });
    const deflating = writer.seal();
    expect(sent).toEqual([1]);
    writer.push({ t: 1_763_700_000_100, type: 'custom', name: 'second' });
    const chunks = writer.sealNow(KEEPALIVE_BUDGET_BYTES);
    expect(sent).toEqual([1, 2]);
    const parsed = chunks.map((chunk) => JSON.parse(new TextDecoder().decode(chunk.body)));
    expect(
      parsed.map((chunk) => [chunk.seq, chunk.meta?.url, chunk.events.map((event: Json) => event.name)]),
    ).toEqual([
      [0, 'https://example.com/', ['first']],
      [1, undefined, ['second']],
    ]);
    // The seal in flight went as plain JSON: it is neither stored nor sent deflated.
    expect(await deflating).toEqual([]);
    expect(await store.all()).toEqual([]);
    expect(requests).toEqual([]);
    // The next seal takes the next seq, and goes the usual way (deflated, stored, queued).
    writer.push({ t: 1_763_700_000_200, type: 'custom', name: 'third' });
    const [next] = await writer.seal();
    expect(next?.seq).toBe(2);
    expect(next?.json).toBeUndefined();
    expect(JSON.parse(inflateSync(next?.body as Uint8Array).toString('utf8')).events[0].name).toBe('third');
    await transport.flush();
    expect(requests).toEqual(['json+deflate']);
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

describe('leaving the page', () => {
  const sessionId = 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5J';
  /** A chunk of `bytes` bytes of JSON text (only its size matters to the transport). */
  const fake = (seq: number, bytes = 100): StoredChunk => ({
    sessionId,
    seq,
    body: new TextEncoder().encode(`{${' '.repeat(bytes - 2)}}`),
    json: true,
    firstT: 1,
    lastT: 2,
  });

  it('sends exit chunks as plain JSON with keepalive at once, the server storing them; a deflated resend is a duplicate', async () => {
    const store = createMemoryChunkStore();
    const requests: Array<{ keepalive: boolean; encoding: string }> = [];
    const transport = createTransport({
      endpoint: server.url,
      projectKey: credentials.projectKey,
      store,
      fetch: (input, request) => {
        requests.push({
          keepalive: request?.keepalive === true,
          encoding: encodingOf(request),
        });
        return fetch(input, request);
      },
    });
    const exiting = 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5K';
    const writer = createSessionWriter({
      sessionId: exiting,
      nextSeq: 0,
      meta: META,
      store,
      transport,
    });
    writer.push({ t: Date.now(), type: 'custom', name: 'first' });
    void writer.seal();
    writer.push({ t: Date.now(), type: 'custom', name: 'clicked' });
    const chunks = writer.sealNow(KEEPALIVE_BUDGET_BYTES);
    transport.sendOnExit(chunks);
    // Sent synchronously, both of them, before anything is awaited.
    expect(requests).toEqual([
      { keepalive: true, encoding: 'json' },
      { keepalive: true, encoding: 'json' },
    ]);
    await transport.flush();
    // The queue took the keepalive requests' answers: nothing was sent twice.
    expect(requests).toHaveLength(2);
    expect(transport.state().backlogChunks).toBe(0);
    const session = await api(`/v1/sessions/${exiting}`);
    expect(session.chunks.map((chunk: Json) => chunk.seq)).toEqual([0, 1]);
    expect((await chunkOf(exiting, 1)).events.map((event: Json) => event.name)).toEqual(['clicked']);
    // The same JSON deflated (what a seal in flight would have sent) is the same chunk.
    const response = await fetch(`${server.url}/v1/ingest`, {
      method: 'POST',
      headers: {
        'X-Service-Project-Key': credentials.projectKey,
        'X-Service-Encoding': 'json+deflate',
        'Content-Type': 'application/octet-stream',
      },
      body: (await deflate(new TextDecoder().decode(chunks[0]?.body))) as BodyInit,
    });
    expect(await response.json()).toEqual({ seq: 0, duplicate: true });
    transport.stop();
  });

  it('sends the chunks sealed at exit first, within the keepalive budget, and retries those that fail', async () => {
    const store = createMemoryChunkStore();
    const chunks = [fake(0), fake(1, 70_000), fake(2, 1_000), fake(3, 40_000), fake(4, 30_000)];
    for (const chunk of chunks) await store.put(chunk);
    const requests: Array<[number, boolean]> = [];
    let release: (response: Response) => void = () => {};
    const transport = createTransport({
      endpoint: 'http://127.0.0.1:9',
      projectKey: 'pk_x',
      store,
      random: () => 0,
      fetch: (_, request) => {
        const seq = chunks.findIndex((chunk) => chunk.body === request?.body);
        requests.push([seq, request?.keepalive === true]);
        // The first request hangs until released; keepalive requests fail (the page lived on, offline).
        if (seq === 0) return new Promise((resolve) => (release = resolve));
        if (request?.keepalive) return Promise.reject(new TypeError('Failed to fetch'));
        return Promise.resolve(new Response('{}', { status: 200 }));
      },
    });
    transport.enqueue(chunks[0] as StoredChunk); // in flight
    transport.enqueue(chunks[1] as StoredChunk); // 70 000 B: never fits a keepalive request
    transport.enqueue(chunks[2] as StoredChunk);
    transport.sendOnExit([chunks[3] as StoredChunk, chunks[4] as StoredChunk]);
    // At once: seq 3 (sealed at exit) fits, seq 4 no longer does, seq 2 (queued) still does.
    expect(requests).toEqual([
      [0, false],
      [3, true],
      [2, true],
    ]);
    expect(transport.state().backlogChunks).toBe(5);
    release(new Response('{}', { status: 200 }));
    await until(() => transport.state().backlogChunks === 0, 10_000);
    // The failed keepalive requests are retried as ordinary ones; nothing else is sent twice.
    expect(requests.slice(3)).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
    ]);
    expect(await store.all()).toEqual([]);
    transport.stop();
  });

  it('keeps exit chunks in the tab storage at once, lists them with the stored ones, and removes them once acknowledged', async () => {
    /** `sessionStorage` as far as the store uses it (items are own properties, as in browsers). */
    class TabStorage {
      [key: string]: unknown;
      getItem(key: string) {
        return typeof this[key] === 'string' ? (this[key] as string) : null;
      }
      setItem(key: string, value: string) {
        if (value.length > 1_000) throw new DOMException('full', 'QuotaExceededError');
        this[key] = value;
      }
      removeItem(key: string) {
        delete this[key];
      }
    }
    const tab = new TabStorage();
    const memory = createMemoryChunkStore();
    const store = withExitChunks(memory, tab as unknown as Storage);
    await store.put(fake(0));
    store.keep(fake(2));
    store.keep(fake(1));
    expect(Object.keys(tab)).toEqual([`svc:chunk:${sessionId}/2`, `svc:chunk:${sessionId}/1`]);
    expect(await memory.all()).toEqual([fake(0)]);
    // A page load of the tab finds them, the same bytes, by seq.
    expect(await withExitChunks(memory, tab as unknown as Storage).all()).toEqual([
      fake(0),
      fake(1),
      fake(2),
    ]);
    await store.delete(sessionId, 1);
    await store.delete(sessionId, 0);
    expect(await store.all()).toEqual([fake(2)]);
    // A storage that refuses (full) leaves the chunk to the store.
    store.keep(fake(3, 5_000));
    expect(Object.keys(tab)).toHaveLength(1);
    await until(async () => (await memory.all()).length === 1, 1_000);
    expect(await store.all()).toEqual([fake(2), fake(3, 5_000)]);
    // Without a tab storage (not a browser), the store is all there is.
    const bare = withExitChunks(createMemoryChunkStore(), undefined);
    bare.keep(fake(4));
    await until(async () => (await bare.all()).length === 1, 1_000);
  });
});

describe('monthly caps', () => {
  const chunk = (seq: number): StoredChunk => ({
    sessionId: 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
    seq,
    body: new TextEncoder().encode('{}'),
    firstT: 0,
    lastT: 0,
  });

  it('stops at a 429 with X-Service-Quota, keeping the chunks; retries a 429 of the rate limit', async () => {
    const store = createMemoryChunkStore();
    const attempts: number[] = [];
    const refused: number[] = [];
    let quota = false;
    const transport = createTransport({
      endpoint: 'http://127.0.0.1:9',
      projectKey: 'pk_x',
      store,
      random: () => 0,
      fetch: async () => {
        attempts.push(Date.now());
        if (attempts.length === 1 && !quota)
          return new Response('{}', { status: 429, headers: { 'Retry-After': '0' } });
        return new Response('{}', {
          status: 429,
          headers: quota ? { 'Retry-After': '3600', 'X-Service-Quota': 'sessions' } : {},
        });
      },
      onRefused: (status) => refused.push(status),
    });
    // The rate limit's 429 is retried (after 0.5 s: the first backoff with this random).
    await store.put(chunk(0));
    transport.enqueue(chunk(0));
    await until(() => attempts.length >= 2, 5_000);
    expect(refused).toEqual([]);
    // The cap's 429: no more attempts, the transport refuses, the chunk stays stored.
    quota = true;
    transport.retryNow();
    await until(() => refused.length === 1, 5_000);
    const made = attempts.length;
    transport.enqueue(chunk(1));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(attempts).toHaveLength(made);
    expect((await store.all()).map((stored) => stored.seq)).toEqual([0]);
    transport.stop();
  });
});
