import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AssetKind } from '../../platform/database/tables/assets.table.ts';
import { type DestinationPolicy, policyLookup } from '../../platform/http/destination-policy.ts';

/** The largest archived stylesheet, counted while it streams in. */
const MAX_STYLESHEET_BYTES = 2 * 1024 * 1024;
/** The largest archived font or image. */
const MAX_FONT_OR_IMAGE_BYTES = 5 * 1024 * 1024;

const userAgent = 'svc-assets/1.0 (session replay archiver)';

/** One fetch: the URL, what it should be, and the rules it is fetched under. */
export interface AssetFetch {
  url: string;
  kind: AssetKind;
  policy: DestinationPolicy;
  /** Bounds the whole exchange: lookup, connect, headers and the body. */
  timeoutMs: number;
  /** Defaults: {@link MAX_STYLESHEET_BYTES}, {@link MAX_FONT_OR_IMAGE_BYTES}. */
  maxBytes?: number;
}

/** A fetched asset, or why there is none (in words safe to show to the project's members). */
export type AssetFetchResult =
  | { success: true; bytes: Buffer; contentType: string; sha256: string }
  | { success: false; error: string; refused: boolean };

/** Whether a media type (lowercase, without parameters) is acceptable for a kind of asset. */
function acceptable(kind: AssetKind, type: string): boolean {
  switch (kind) {
    case 'stylesheet':
      return type === 'text/css';
    case 'font':
      return (
        type.startsWith('font/') ||
        type.startsWith('application/font-') ||
        type.startsWith('application/x-font-') ||
        type === 'application/vnd.ms-fontobject' ||
        type === 'application/octet-stream'
      );
    case 'image':
      return type.startsWith('image/');
  }
}

/**
 * GETs one asset under the destination policy and returns its bytes, media type and SHA-256
 * (lowercase hex); never throws for what the site or the network does.
 *
 * - Only `http:` and `https:`. The policy judges the address actually connected to: an IP
 *   literal before connecting, a name in the connection's own `lookup` (as webhooks are sent).
 * - No redirects followed (a 3xx is a failure), no cookies, no credentials.
 * - Only a 200 whose `Content-Type` fits the kind (`text/css` for stylesheets, `font/*` and the
 *   usual legacy font types for fonts, `image/*` for images).
 * - The size limit is enforced while the body streams (and from `Content-Length` before it):
 *   past it, the connection is destroyed and nothing is kept.
 *
 * @example
 * ```ts
 * const result = await fetchAsset({ url: 'https://shop.example.com/site.css', kind: 'stylesheet', policy, timeoutMs: 10_000 });
 * if (result.success) await blobStore.put(`assets/${projectId}/${result.sha256}`, result.bytes);
 * ```
 */
export async function fetchAsset(fetch: AssetFetch): Promise<AssetFetchResult> {
  const { policy, timeoutMs, kind } = fetch;
  const maxBytes = fetch.maxBytes ?? (kind === 'stylesheet' ? MAX_STYLESHEET_BYTES : MAX_FONT_OR_IMAGE_BYTES);
  const url = URL.canParse(fetch.url) ? new URL(fetch.url) : undefined;
  if (url === undefined) return { success: false, error: 'not a valid URL', refused: true };
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return {
      success: false,
      error: `only http and https URLs are archived, not ${url.protocol}`,
      refused: true,
    };
  if (url.username !== '' || url.password !== '')
    return { success: false, error: 'URLs with credentials are not archived', refused: true };
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literalFamily = net.isIP(hostname);
  if (literalFamily !== 0) {
    const refusal = policy.refusal(hostname, hostname, literalFamily === 4 ? 4 : 6);
    if (refusal !== undefined) return { success: false, error: refusal, refused: true };
  }

  return new Promise<AssetFetchResult>((resolve) => {
    let refusal: string | undefined;
    let settled = false;
    let request: http.ClientRequest | undefined;
    const finish = (result: AssetFetchResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request?.destroy();
      resolve(result);
    };
    const fail = (error: string) => finish({ success: false, error, refused: refusal !== undefined });
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);

    const lookup = policyLookup(policy, 'ERR_ASSET_DESTINATION_REFUSED', (reason) => {
      refusal = reason;
    });

    request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'GET',
      headers: { 'user-agent': userAgent, accept: acceptHeader(kind), 'accept-encoding': 'identity' },
      agent: false,
      lookup,
    });
    request.on('error', (error) => {
      fail(refusal ?? `${error.message}${'code' in error ? ` (${String(error.code)})` : ''}`);
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status !== 200)
        return fail(status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`);
      const type = (response.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!acceptable(kind, type))
        return fail(`Content-Type ${JSON.stringify(type.slice(0, 100))} is not a ${kind}'s`);
      const encoding = response.headers['content-encoding']?.trim().toLowerCase();
      if (encoding !== undefined && encoding !== '' && encoding !== 'identity')
        return fail(`Content-Encoding ${JSON.stringify(encoding.slice(0, 50))} was not asked for`);
      const declared = Number(response.headers['content-length']);
      if (declared > maxBytes) return fail(`larger than ${maxBytes} bytes (Content-Length ${declared})`);
      const parts: Buffer[] = [];
      let received = 0;
      response.on('data', (part: Buffer) => {
        received += part.length;
        if (received > maxBytes) return fail(`larger than ${maxBytes} bytes`);
        parts.push(part);
      });
      response.on('end', () => {
        const bytes = Buffer.concat(parts);
        finish({
          success: true,
          bytes,
          contentType: type,
          sha256: createHash('sha256').update(bytes).digest('hex'),
        });
      });
      response.on('error', () => fail('the body was cut off'));
      response.on('close', () => {
        if (!response.complete) fail('the body was cut off');
      });
    });
    request.end();
  });
}

function acceptHeader(kind: AssetKind): string {
  return kind === 'stylesheet'
    ? 'text/css,*/*;q=0.1'
    : kind === 'font'
      ? 'font/*,*/*;q=0.1'
      : 'image/*,*/*;q=0.1';
}
