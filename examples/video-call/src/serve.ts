import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { PageConfig } from './config.ts';

export interface CallPageOptions extends PageConfig {
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1: pages need a secure context for the camera, which localhost is. */
  host?: string;
}

export interface CallPage {
  /** The page, e.g. `http://127.0.0.1:5173/`. */
  url: string;
  close(): Promise<void>;
}

const escapeJson = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * Bundles the example page (`page.ts`, with the browser SDK and its lazily loaded chunks, split
 * as an app's bundler would) with esbuild and serves it with `config` injected.
 *
 * @example
 * ```ts
 * const page = await startCallPage({ sdk: { projectKey: 'pk_…', endpoint: 'http://127.0.0.1:8080' } });
 * console.log(page.url);
 * ```
 */
export async function startCallPage(options: CallPageOptions): Promise<CallPage> {
  const result = await build({
    entryPoints: { page: fileURLToPath(new URL('./page.ts', import.meta.url)) },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    // The workspace packages from their sources (published apps get their dist/).
    conditions: ['@svc/source'],
    outdir: '/assets',
    write: false,
  });
  const files = new Map(result.outputFiles.map((file) => [file.path, file.text]));
  const config: PageConfig = {
    sdk: options.sdk,
    ...(options.call === undefined ? {} : { call: options.call }),
  };
  const html = `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Video call: svc example</title>
<style>body{font:16px system-ui;margin:2rem}video{width:320px;background:#111;margin-right:1rem}</style>
<h1>Video call</h1>
<p><button id="start">Start call</button> <button id="pause">Caller sends nothing for 8 s</button> <button id="hangup">Hang up</button> <output id="status">idle</output></p>
<video id="local" autoplay muted playsinline></video><video id="remote" autoplay muted playsinline></video>
<script>window.videoCallConfig = ${escapeJson(config)};</script>
<script type="module" src="/assets/page.js"></script>
</html>`;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const script = files.get(path);
    if (script !== undefined) response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (path === '/') response.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the page server has no address');
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${address.port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
