import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type DestinationPolicy, policyLookup } from '../../platform/http/destination-policy.ts';

/** One webhook attempt: where, what, and under which destination policy. */
export interface WebhookPost {
  url: string;
  /** Sent byte-exact as UTF-8; never repeated in an error. */
  body: string;
  /** Sent as given, except `Content-Length` and `User-Agent`, which the sender sets. */
  headers: Record<string, string>;
  /** Bounds the whole exchange: lookup, connect, response headers and reading up to 2 KiB of body. */
  timeoutMs: number;
  policy: DestinationPolicy;
}

/** What happened to one attempt, in terms safe to show to the channel's owner. */
export interface WebhookResult {
  /**
   * `delivered`: a 2xx status arrived within `timeoutMs`. `refused`: the URL is not http(s) or
   * the policy refused the destination, and nothing was sent. `failed`: anything else.
   */
  outcome: 'delivered' | 'failed' | 'refused';
  status?: number;
  /** Whole milliseconds from the call to the result. */
  durationMs: number;
  /**
   * First 2 048 bytes of the response body, decoded as UTF-8 (lossy: invalid sequences and NUL
   * become U+FFFD); never more kept in memory.
   */
  responseBody?: string;
  /** Why it was not delivered, e.g. `timed out after 10000 ms`, `redirect 302 not followed`, `HTTP 500`. */
  error?: string;
  /** From `Retry-After` on 429 or 503 (seconds or an HTTP date), as ms from now, capped at 24 h. */
  retryAfterMs?: number;
}

/** How much of a response body is kept. */
const responseBodyLimitBytes = 2048;
const retryAfterCapMs = 24 * 60 * 60 * 1000;
const userAgent = 'svc-webhooks/1.0';
const day = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const month = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const time = '\\d{2}:\\d{2}:\\d{2}';
const httpDateForms = {
  imfFixdate: new RegExp(`^${day}, \\d{2} ${month} \\d{4} ${time} GMT$`),
  rfc850: new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${month}-\\d{2} ${time} GMT$`),
  asctime: new RegExp(`^${day} ${month} [ \\d]\\d ${time} \\d{4}$`),
};
/** setTimeout's largest delay; a longer one fires at once. */
const maximumTimeoutMs = 2_147_483_647;

/**
 * POSTs one webhook and reports the outcome; never throws for anything the receiver or the
 * network does (only for a `timeoutMs` that is not a positive number of milliseconds).
 *
 * - The destination is checked on the address actually connected to: an IP-literal host before
 *   connecting, a name in the connection's own `lookup` (every address it resolved to, so which one
 *   happy eyeballs picks does not matter and a rebinding name cannot slip a second answer through).
 * - Redirects are never followed: a 3xx is `failed`.
 * - One timer bounds the whole exchange and destroys the request. A status that arrived in time
 *   decides the outcome even if the body is slow or cut off: 2xx headers within `timeoutMs` are
 *   `delivered` with whatever body arrived by then.
 * - A fresh connection per attempt (`agent: false`), closed when the result is known.
 *
 * @example
 * ```ts
 * const result = await postWebhook({
 *   url: channel.url,
 *   body,
 *   headers: { 'Content-Type': 'application/json', 'X-Service-Signature': signature },
 *   timeoutMs: 10_000,
 *   policy: createDestinationPolicy(parseAllowedHosts(process.env.SVC_WEBHOOK_ALLOWED_HOSTS).allowed),
 * });
 * if (result.outcome !== 'delivered') console.log(result.error, result.retryAfterMs);
 * ```
 */
export async function postWebhook(post: WebhookPost): Promise<WebhookResult> {
  const { timeoutMs, policy } = post;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > maximumTimeoutMs) {
    throw new RangeError(`timeoutMs must be from 1 to ${maximumTimeoutMs}, got ${timeoutMs}`);
  }
  const startedAt = performance.now();
  const elapsed = () => Math.round(performance.now() - startedAt);

  const url = URL.canParse(post.url) ? new URL(post.url) : undefined;
  if (url === undefined) return { outcome: 'refused', durationMs: elapsed(), error: 'not a valid URL' };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      outcome: 'refused',
      durationMs: elapsed(),
      error: `only http and https URLs can receive webhooks, not ${url.protocol}`,
    };
  }
  // The URL parser has already canonicalized IPv4 literals (`2130706433`, `0x7f.1` → `127.0.0.1`).
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literalFamily = net.isIP(hostname);
  if (literalFamily !== 0) {
    const refusal = policy.refusal(hostname, hostname, literalFamily === 4 ? 4 : 6);
    if (refusal !== undefined) return { outcome: 'refused', durationMs: elapsed(), error: refusal };
  }

  const body = Buffer.from(post.body, 'utf8');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(post.headers)) {
    const lower = name.toLowerCase();
    if (lower !== 'content-length' && lower !== 'user-agent') headers[name] = value;
  }
  headers['Content-Length'] = String(body.length);
  headers['User-Agent'] = userAgent;

  return new Promise<WebhookResult>((resolve) => {
    let refusal: string | undefined;
    let status: number | undefined;
    let retryAfterMs: number | undefined;
    const received: Buffer[] = [];
    let receivedBytes = 0;
    let settled = false;
    let request: http.ClientRequest | undefined;

    const finish = (failure?: { outcome: 'failed' | 'refused'; error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request?.destroy();
      const result: WebhookResult = { outcome: 'failed', durationMs: elapsed() };
      if (status !== undefined) {
        // The status arrived in time: it decides, whatever happened to the body afterwards.
        result.status = status;
        // NUL is replaced too: PostgreSQL text cannot hold it, and the body is kept for display.
        result.responseBody = Buffer.concat(received).toString('utf8').replaceAll('\0', '\uFFFD');
        if (status >= 200 && status < 300) result.outcome = 'delivered';
        else if (status >= 300 && status < 400) result.error = `redirect ${status} not followed`;
        else result.error = `HTTP ${status}`;
        if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
      } else {
        result.outcome = failure?.outcome ?? 'failed';
        result.error = failure?.error ?? 'connection closed before a response';
      }
      resolve(result);
    };

    const timer = setTimeout(() => {
      finish({ outcome: 'failed', error: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);

    const lookup = policyLookup(policy, 'ERR_WEBHOOK_DESTINATION_REFUSED', (reason) => {
      refusal = reason;
    });

    try {
      request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers,
        agent: false,
        lookup,
      });
    } catch (error) {
      // Only headers Node refuses to send (e.g. a value with a line break) get here.
      finish({ outcome: 'failed', error: `request not sent: ${describe(error, hostname)}` });
      return;
    }

    // Also heard after `finish` destroyed the request, when it is ignored.
    request.on('error', (error) => {
      if (refusal !== undefined) finish({ outcome: 'refused', error: refusal });
      else finish({ outcome: 'failed', error: describe(error, hostname) });
    });
    request.on('response', (response) => {
      status = response.statusCode ?? 0;
      if (status === 429 || status === 503) retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      response.on('data', (chunk: Buffer) => {
        const kept = chunk.subarray(0, responseBodyLimitBytes - receivedBytes);
        received.push(kept);
        receivedBytes += kept.length;
        if (receivedBytes >= responseBodyLimitBytes) finish();
      });
      response.on('end', () => finish());
      // A body cut off by the receiver: the status that arrived still decides.
      response.on('error', () => finish());
      response.on('close', () => finish());
    });
    request.end(body);
  });
}

/**
 * `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date (a past date is 0),
 * capped at 24 h; undefined when absent or unreadable.
 *
 * @example
 * ```ts
 * parseRetryAfter('120'); // 120_000
 * parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('Wed, 21 Oct 2026 07:27:00 GMT')); // 60_000
 * ```
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, retryAfterCapMs);
  // The three HTTP-date forms (RFC 9110 5.6.7), all GMT; anything else Date.parse would guess at
  // (in local time, for some) is unreadable.
  const asctime = httpDateForms.asctime.test(text);
  if (!asctime && !httpDateForms.imfFixdate.test(text) && !httpDateForms.rfc850.test(text)) return undefined;
  const at = Date.parse(asctime ? `${text} GMT` : text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - now, 0), retryAfterCapMs);
}

/** A network error as a sentence for the channel's owner; never the body sent. */
function describe(error: unknown, hostname: string): string {
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return `connection closed before a response (${code})`;
    case 'ECONNREFUSED':
      return `connection refused (${code})`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'ENODATA':
      return `DNS lookup of ${hostname} failed (${code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${hostname} is unreachable (${code})`;
    case 'ETIMEDOUT':
      return `connecting to ${hostname} timed out (${code})`;
    case undefined:
      return message;
    default:
      return `${message} (${code})`;
  }
}
