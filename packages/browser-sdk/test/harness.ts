import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from '@svc/api/src/server.ts';
import { CHROMIUM, CHROMIUM_ARGS, GRANT_MEDIA } from '@svc-dev/chromium';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { expect } from 'vitest';
import { credentialsOf, dataDirectory, startApi } from './api-server.ts';

export { CHROMIUM } from '@svc-dev/chromium';
export { until } from './api-server.ts';

// The SDK in headless Chromium against the real server (servers/api on its embedded store): the
// page is served from one origin, the API from another, as in production (CORS included).

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
export type Json = any;

/** The test page's body: text, inputs, media and an unmasked region for the privacy tests. */
const BODY = `<main>
  <h1 id="title">Account of Ada Lovelace</h1>
  <p id="secret">Card 4111 1111 1111 1111</p>
  <input id="email" placeholder="Your e-mail" value="ada@example.com">
  <input id="password" type="password" value="hunter2">
  <img id="avatar" alt="Ada's portrait" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="40" height="40">
  <section class="svc-unmask"><p id="public">Plan Pro</p><input id="coupon" value="SPRING24"><input id="pin" type="password" value="1234"></section>
  <div class="svc-block" id="blocked">Internal note</div>
</main>`;

export interface Harness {
  api: RunningServer;
  /**
   * The test page; `?options=<json>` is spread over the SDK's init options. It calls `init` as
   * it loads (`window.sdk`), or with `?manual` only when the test calls `window.initSdk()`.
   */
  pageUrl: string;
  browser: Browser;
  /** A GET on the API with the project's token (asserts 200). */
  read(path: string): Promise<Json>;
  /** A request on the API with the project's token. */
  request(method: string, path: string, body?: unknown): Promise<Response>;
  /** Every event the server holds for the session, in seq order, and the session's detail. */
  stored(sessionId: string): Promise<{ session: Json; events: Json[] }>;
  close(): Promise<void>;
}

/** `?options=` for the test page. */
export const withOptions = (pageUrl: string, options: unknown) =>
  `${pageUrl}?options=${encodeURIComponent(JSON.stringify(options))}`;

/** The real server on a fresh data directory, the SDK bundle on a page server, and Chromium. */
export async function startHarness(): Promise<Harness> {
  const directory = await dataDirectory();
  const api = await startApi(directory.path);
  const bundle = (entry: string, globalName: string) =>
    build({
      entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
      bundle: true,
      format: 'iife',
      globalName,
      platform: 'browser',
      target: 'es2022',
      // The workspace packages from their sources, as the tests import them.
      conditions: ['@svc/source'],
      // Chromium has CompressionStream: the on-demand pako import never runs here.
      external: ['pako'],
      write: false,
    }).then((built) => built.outputFiles[0]?.text ?? '');
  // The SDK as a page loads it, and the recorder alone (`/recorder.js`, global `SvcRecorder`).
  const scripts: Record<string, string> = {
    '/sdk.js': await bundle('../src/index.ts', 'SvcSdk'),
    '/recorder.js': await bundle('../src/recorder/index.ts', 'SvcRecorder'),
  };
  const credentials = credentialsOf(api);
  const html = `<!doctype html><meta charset="utf-8"><title>sdk</title>
<body>${BODY}
<script src="/sdk.js"></script>
<script>window.initSdk = () => (window.sdk = SvcSdk.init({
  ...${JSON.stringify({ projectKey: credentials.projectKey, endpoint: api.url, release: '2.0.0', flushIntervalSec: 1 })},
  ...JSON.parse(new URLSearchParams(location.search).get('options') ?? '{}'),
}));
if (!new URLSearchParams(location.search).has('manual')) initSdk();</script></body>`;
  const pages: Server = createServer((request, response) => {
    const script = scripts[request.url ?? ''];
    if (script !== undefined) response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    // The app's API for the network tests: 404 for /api/missing, else the traceparent received.
    else if (request.url?.startsWith('/api/missing')) response.writeHead(404).end();
    else if (request.url?.startsWith('/api/'))
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ traceparent: request.headers.traceparent ?? null }));
    else response.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const address = pages.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, GRANT_MEDIA] });

  const request = (method: string, path: string, body?: unknown) =>
    fetch(`${api.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${credentials.apiToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const read = async (path: string) => {
    const response = await request('GET', path);
    expect(response.status, path).toBe(200);
    return response.json();
  };
  return {
    api,
    pageUrl: `http://127.0.0.1:${address.port}/`,
    browser,
    read,
    request,
    async stored(sessionId) {
      const session = await read(`/v1/sessions/${sessionId}`);
      const events: Json[] = [];
      for (const chunk of session.chunks)
        events.push(...(await read(`/v1/sessions/${sessionId}/chunks/${chunk.seq}`)).events);
      return { session, events };
    },
    async close() {
      await browser.close();
      await new Promise((resolve) => pages.close(resolve));
      await api.close();
      await directory.remove();
    },
  };
}
