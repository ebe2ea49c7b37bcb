/**
 * Headless Chromium with the WebRTC collector in a page, for the poll-cost benchmark and the
 * collector's Chromium tests (`src/webrtc/collector.chromium.test.ts`): the page fixture
 * (`src/webrtc/__fixtures__/call-page.ts`) is bundled with esbuild as the SDK ships it (ESM,
 * split: the SDP redaction module is its own chunk) and served from `http://127.0.0.1` (a secure
 * context: `navigator.mediaDevices` exists). Chromium from apt (`/usr/bin/chromium`, or
 * `SVC_CHROMIUM`) with a fake camera and microphone, granted; peers of one page connect over
 * loopback.
 */

import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, CHROMIUM_ARGS, GRANT_MEDIA } from '@svc-dev/chromium';
import { build } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';

export { CHROMIUM, CHROMIUM_ARGS } from '@svc-dev/chromium';

export interface CollectorBrowser {
  browser: Browser;
  /** The file name of the SDP redaction chunk (requested only when SDP is captured). */
  sdpChunk: string;
  /** A fresh page (its own context) with `window.callPage` ready; `requests` lists the paths it fetched. */
  open(): Promise<{ page: Page; requests: string[] }>;
  close(): Promise<void>;
}

/** Bundles the page fixture: every output file by its path, and the SDP chunk's name. */
async function bundle(): Promise<{ files: Map<string, string>; sdpChunk: string }> {
  const result = await build({
    entryPoints: { page: fileURLToPath(new URL('../src/webrtc/__fixtures__/call-page.ts', import.meta.url)) },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: ['@svc/source'],
    outdir: '/out',
    write: false,
    metafile: true,
  });
  const files = new Map(result.outputFiles.map((file) => [file.path.replace('/out', ''), file.text]));
  const sdpChunk = Object.entries(result.metafile.outputs).find(([, output]) =>
    Object.keys(output.inputs).some((input) => input.endsWith('src/webrtc/sdp.ts')),
  )?.[0];
  if (sdpChunk === undefined) throw new Error('the SDP module is not a chunk of its own');
  return { files, sdpChunk: sdpChunk.replace(/^.*\//, '') };
}

/**
 * Starts the page server and Chromium. The page is cross-origin isolated (COOP and COEP), which
 * gives `performance.now()` its fine resolution (5 µs rather than 100 µs) for the benchmark.
 */
export async function launchCollectorBrowser(): Promise<CollectorBrowser> {
  const { files, sdpChunk } = await bundle();
  const html =
    '<!doctype html><meta charset="utf-8"><title>collector</title><script type="module" src="/page.js"></script>';
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    const script = files.get(path);
    response.setHeader('cross-origin-opener-policy', 'same-origin');
    response.setHeader('cross-origin-embedder-policy', 'require-corp');
    if (script !== undefined) response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (path === '/') response.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const url = `http://127.0.0.1:${address.port}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, GRANT_MEDIA] });
  return {
    browser,
    sdpChunk,
    async open() {
      const page = await (await browser.newContext()).newPage();
      const requests: string[] = [];
      page.on('request', (request) => requests.push(new URL(request.url()).pathname));
      await page.goto(url);
      await page.waitForFunction(() => window.callPage !== undefined);
      return { page, requests };
    },
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type { Call, CallPage, Emitted } from '../src/webrtc/__fixtures__/call-page.ts';
