import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { build } from 'vite';
import { newSessionId, postChunk } from '../../api/test/ingest-helpers.ts';
import type { Dashboard } from './harness.ts';

// A page instrumented with the real browser SDK (@svc/browser-sdk, bundled from its sources as
// packages/browser-sdk/test/harness.ts does, here with Vite), served from its own origin and
// recording into the dashboard's server; and synthetic sessions made from what it recorded.

/** The recorded page: a password field, a button, a button that throws, some text, some CSS. */
const BODY = `<style>#save { color: rgb(200, 0, 0); }</style>
<main>
  <h1 id="title">Checkout of Ada Lovelace</h1>
  <p id="note">Private note for the replay test</p>
  <label>Password <input id="password" type="password"></label>
  <button id="save" type="button" style="margin-left: 7px">Save the order</button>
  <button id="break" type="button">Break the page</button>
  <p id="result"></p>
</main>`;

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
export type Json = any;

let bundled: Promise<string> | undefined;

/** The SDK as an IIFE (global `SvcSdk`), from its sources. */
export function sdkBundle(): Promise<string> {
  bundled ??= build({
    configFile: false,
    logLevel: 'silent',
    resolve: { conditions: ['@svc/source', 'browser', 'import', 'module', 'default'] },
    build: {
      write: false,
      minify: false,
      chunkSizeWarningLimit: 8192,
      lib: {
        entry: fileURLToPath(import.meta.resolve('@svc/browser-sdk')).replace(
          /dist\/index\.js$/,
          'src/index.ts',
        ),
        formats: ['iife'],
        name: 'SvcSdk',
      },
    },
  }).then((output) => {
    const outputs = Array.isArray(output) ? output : [output];
    for (const result of outputs)
      if ('output' in result) for (const file of result.output) if (file.type === 'chunk') return file.code;
    throw new Error('no SDK bundle');
  });
  return bundled;
}

export interface RecordedPage {
  url: string;
  close(): Promise<void>;
}

/** Serves `html` at `/` and the SDK bundle at `/sdk.js` on a port of its own (127.0.0.1). */
export async function servePage(html: string, sdk: string): Promise<RecordedPage> {
  const server: Server = createServer((request, response) => {
    if (request.url === '/sdk.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
    else if (request.url === '/') response.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Serves the test page (with the SDK sending to `dashboard.base`) on a port of its own. */
export async function serveRecordedPage(dashboard: Dashboard): Promise<RecordedPage> {
  const sdk = await sdkBundle();
  const options = {
    projectKey: dashboard.test.first.projectKey,
    endpoint: dashboard.base,
    release: '3.1.0',
    flushIntervalSec: 1,
    remoteConfig: false,
  };
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Checkout</title>
<body>${BODY}
<script src="/sdk.js"></script>
<script>
window.sdk = SvcSdk.init(${JSON.stringify(options)});
document.getElementById('save').addEventListener('click', () => {
  document.getElementById('result').textContent = 'Order saved';
  // The app's API is not there: a failed request on the timeline.
  void fetch('/api/orders?draft=7', { method: 'POST', body: '{}' });
});
document.getElementById('break').addEventListener('click', () => {
  throw new Error('Replay test failure');
});
</script></body></html>`;
  return servePage(html, sdk);
}

/** What the SDK recorded: the session id and the moments the test acted. */
export interface Recording {
  sessionId: string;
  /** Epoch ms, measured in the page. */
  clickAt: number;
  trackAt: number;
  errorAt: number;
}

/**
 * Records a session in Chromium: types a password, clicks "Save the order" (which POSTs to a
 * missing API: a 404), tracks a custom
 * event, clicks the button that throws; then flushes and closes the page.
 */
export async function recordSession(browser: Browser, page: RecordedPage): Promise<Recording> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 640 } });
  const tab = await context.newPage();
  await tab.goto(page.url);
  await tab.waitForFunction(() => (window as Json).sdk?.sessionId !== undefined);
  await tab.waitForTimeout(1200);
  await tab.locator('#password').pressSequentially('hunter2-very-secret', { delay: 20 });
  await tab.waitForTimeout(600);
  const clickAt = await tab.evaluate(() => Date.now());
  await tab.locator('#save').click();
  await tab.waitForTimeout(900);
  const trackAt = await tab.evaluate(() => {
    (window as Json).sdk.track('checkout_failed', { step: 3 }, { severity: 'high' });
    return Date.now();
  });
  await tab.waitForTimeout(900);
  const errorAt = await tab.evaluate(() => Date.now());
  await tab.locator('#break').click();
  await tab.waitForTimeout(1200);
  const sessionId = await tab.evaluate(async () => {
    await (window as Json).sdk.flush();
    return (window as Json).sdk.sessionId as string;
  });
  await context.close();
  return { sessionId, clickAt, trackAt, errorAt };
}

/** Every chunk the server stored for a session, in seq order. */
export async function storedChunks(dashboard: Dashboard, sessionId: string): Promise<Json[]> {
  const headers = dashboard.test.first.headers;
  const detail = await dashboard.test.app.inject({ url: `/v1/sessions/${sessionId}`, headers });
  if (detail.statusCode !== 200) throw new Error(`session ${sessionId}: ${detail.statusCode}`);
  const chunks: Json[] = [];
  for (const entry of detail.json().chunks as Array<{ seq: number }>) {
    const chunk = await dashboard.test.app.inject({
      url: `/v1/sessions/${sessionId}/chunks/${entry.seq}`,
      headers,
    });
    chunks.push(chunk.json());
  }
  return chunks;
}

/**
 * A new session made of `events` (as the SDK sent them), cut into chunks of `perChunk` events
 * whose seqs are 0, 1, 2…; only the seqs `keep` accepts are ingested. Returns its id.
 */
export async function ingestSynthetic(
  dashboard: Dashboard,
  template: Json,
  events: Json[],
  options: { perChunk?: number; keep?: (seq: number) => boolean; projectKey?: string } = {},
): Promise<string> {
  const sessionId = newSessionId();
  const perChunk = options.perChunk ?? 50;
  for (let seq = 0; seq * perChunk < events.length; seq++) {
    if (options.keep !== undefined && !options.keep(seq)) continue;
    const slice = events.slice(seq * perChunk, (seq + 1) * perChunk);
    const chunk = {
      v: template.v,
      sessionId,
      visitId: template.visitId,
      seq,
      sentAt: slice.at(-1).t + 100,
      ...(seq === 0 ? { meta: { ...template.meta, startedAt: events[0].t } } : {}),
      events: slice,
    };
    const answer = await postChunk(
      dashboard.test.app,
      options.projectKey ?? dashboard.test.first.projectKey,
      Buffer.from(JSON.stringify(chunk)),
    );
    if (answer.statusCode !== 200) throw new Error(`ingest ${seq}: ${answer.statusCode} ${answer.body}`);
  }
  return sessionId;
}

/**
 * The fixture recording's events with one error left, its first, made a `TypeError: cart has no
 * items` thrown with `stack` (the other errors dropped): a session of one known error.
 */
export function withOneError(events: readonly Json[], stack: string): Json[] {
  const firstError = events.find((event) => event.type === 'error');
  return events
    .filter((event) => event.type !== 'error' || event === firstError)
    .map((event) =>
      event === firstError
        ? {
            t: event.t,
            type: 'error',
            name: 'TypeError',
            message: 'cart has no items',
            stack,
            source: 'onerror',
          }
        : event,
    );
}
