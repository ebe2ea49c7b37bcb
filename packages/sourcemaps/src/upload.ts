import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readDebugId } from './debug-id.ts';
import { findBundles } from './directory.ts';
import { SourcemapsError } from './errors.ts';

// `POST /v1/sourcemaps` of the service (servers/api README, "Source maps"): multipart/form-data
// with the fields `release` and `urlPrefix` and one part per file, named by its path relative to
// the build's output directory; `Authorization: Bearer <API token with sourcemaps:write>`.

/** A file to upload: its path relative to the build's output directory, and its bytes. */
export interface UploadFile {
  /** `assets/index-4f2a.js` or `assets/index-4f2a.js.map` (`/`-separated, no `..`). */
  name: string;
  content: string | Uint8Array;
}

/** A file as the server stored it. */
export interface UploadedFile {
  id: string;
  release?: string;
  /** The URL prefix joined with the file's name, e.g. `~/assets/index-4f2a.js`. */
  url: string;
  kind: 'bundle' | 'map';
  debugId?: string;
  size: number;
  sha256: string;
}

export interface UploadOptions {
  /** The service's base URL, e.g. `https://svc.example.com`. */
  url: string;
  /** An API token of the project with the scope `sourcemaps:write`. */
  token: string;
  /** The release the files belong to (e.g. `shop@1.4.0` or a commit SHA); optional with debug ids. */
  release?: string;
  /** Where the files are served: `~/` (any origin, the server's default), `~/static/`, `https://cdn.example.com/app/`. */
  urlPrefix?: string;
  files: readonly UploadFile[];
  /** Attempts after the first on a 5xx answer or no answer (default 2), waiting `retryDelay` ms times the attempt. */
  retries?: number;
  /** Milliseconds (default 1000). */
  retryDelay?: number;
  /** Milliseconds one request may take (default 120 000). */
  timeout?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface UploadResult {
  release?: string;
  /** Every stored file, in the order sent. */
  items: UploadedFile[];
  /** How many requests it took (an upload over the server's per-request limits is split). */
  requests: number;
}

// Below the server's defaults (200 files and 128 MiB a request).
const MAX_FILES_PER_REQUEST = 200;
const MAX_BYTES_PER_REQUEST = 100 * 1024 * 1024;

/**
 * Uploads bundles and source maps in one multipart request (several when they exceed 200 files or
 * 100 MiB). Throws a {@link SourcemapsError}: `unauthorized` on 401/403, `rejected` on another 4xx
 * (with the server's message), `server_error` / `network_error` once the retries are spent.
 *
 * @example
 * ```ts
 * const { items } = await uploadSourcemaps({
 *   url: 'https://svc.example.com',
 *   token: process.env.SVC_API_TOKEN ?? '',
 *   release: 'shop@1.4.0',
 *   files: [{ name: 'main.js', content: code }, { name: 'main.js.map', content: map }],
 * });
 * ```
 */
export async function uploadSourcemaps(options: UploadOptions): Promise<UploadResult> {
  const endpoint = endpointOf(options.url);
  if (options.token.trim() === '')
    throw new SourcemapsError({
      code: 'invalid_options',
      message: 'token is empty: pass an API token with the scope sourcemaps:write',
    });
  if (options.files.length === 0)
    throw new SourcemapsError({ code: 'no_files', message: 'There are no files to upload' });
  const items: UploadedFile[] = [];
  let release: string | undefined;
  const batches = split(options.files);
  for (const batch of batches) {
    const body = await send(endpoint, options, batch);
    items.push(...body.items);
    release = body.release;
  }
  return { ...(release === undefined ? {} : { release }), items, requests: batches.length };
}

/**
 * The files to upload from a build's output directory: every bundle that has a source map, and
 * the map; `withoutDebugId` lists the bundles among them that carry no debug id (run
 * `injectDirectory` first), `withoutMap` the bundles left out.
 *
 * @example
 * ```ts
 * const { files } = await readUploadFiles('dist');
 * await uploadSourcemaps({ url, token, files });
 * ```
 */
export async function readUploadFiles(
  directory: string,
): Promise<{ files: UploadFile[]; withoutDebugId: string[]; withoutMap: string[] }> {
  const root = resolve(directory);
  const files: UploadFile[] = [];
  const withoutDebugId: string[] = [];
  const withoutMap: string[] = [];
  for (const found of await findBundles(root)) {
    if (found.map === undefined) {
      withoutMap.push(found.bundle);
      continue;
    }
    const code = await readFile(join(root, found.bundle));
    if (readDebugId(code.toString('utf8')) === undefined) withoutDebugId.push(found.bundle);
    files.push({ name: found.bundle, content: code });
    files.push({ name: found.map, content: await readFile(join(root, found.map)) });
  }
  return { files, withoutDebugId, withoutMap };
}

function endpointOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SourcemapsError({
      code: 'invalid_options',
      message: `url "${url}" is not a URL, e.g. https://svc.example.com`,
    });
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new SourcemapsError({ code: 'invalid_options', message: `url "${url}" is not http(s)` });
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}/v1/sourcemaps`;
}

function sizeOf(file: UploadFile): number {
  return typeof file.content === 'string' ? Buffer.byteLength(file.content) : file.content.byteLength;
}

function split(files: readonly UploadFile[]): UploadFile[][] {
  const batches: UploadFile[][] = [];
  let current: UploadFile[] = [];
  let bytes = 0;
  for (const file of files) {
    const size = sizeOf(file);
    if (
      current.length > 0 &&
      (current.length >= MAX_FILES_PER_REQUEST || bytes + size > MAX_BYTES_PER_REQUEST)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(file);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

async function send(
  endpoint: string,
  options: UploadOptions,
  files: readonly UploadFile[],
): Promise<{ release?: string; items: UploadedFile[] }> {
  const retries = options.retries ?? 2;
  const what = `Uploading ${files.length} file${files.length === 1 ? '' : 's'} to ${endpoint}`;
  for (let attempt = 0; ; attempt += 1) {
    const form = new FormData();
    if (options.release !== undefined) form.append('release', options.release);
    if (options.urlPrefix !== undefined) form.append('urlPrefix', options.urlPrefix);
    for (const file of files) form.append('file', new Blob([file.content]), file.name);
    let failure: SourcemapsError;
    try {
      const response = await (options.fetch ?? fetch)(endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.token}` },
        body: form,
        signal: AbortSignal.timeout(options.timeout ?? 120_000),
      });
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as { release?: string; items: UploadedFile[] };
      const reason = reasonOf(text);
      const message = `${what} failed: ${response.status} ${reason}`;
      if (response.status === 401 || response.status === 403)
        throw new SourcemapsError({
          code: 'unauthorized',
          status: response.status,
          message: `${message} (is the token an API token of the project with the scope sourcemaps:write?)`,
        });
      if (response.status < 500)
        throw new SourcemapsError({ code: 'rejected', status: response.status, message });
      failure = new SourcemapsError({ code: 'server_error', status: response.status, message });
    } catch (error) {
      if (SourcemapsError.isInstance(error)) throw error;
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      failure = new SourcemapsError({
        code: 'network_error',
        message: `${what} failed: ${reason}`,
        cause: error,
      });
    }
    if (attempt >= retries) throw failure;
    await new Promise((done) => setTimeout(done, (options.retryDelay ?? 1000) * (attempt + 1)));
  }
}

/** The server's `{ error, code }`, else the start of the body. */
function reasonOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown };
    if (typeof body.error === 'string')
      return typeof body.code === 'string' ? `${body.error} (${body.code})` : body.error;
  } catch {
    // Not JSON: a proxy's page.
  }
  return text.trim().slice(0, 200) || '(empty body)';
}
