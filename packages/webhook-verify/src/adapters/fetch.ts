/**
 * `@svc/webhook-verify/fetch`: a `(request: Request) => Promise<Response>` webhook handler for
 * every Fetch-API runtime: Next.js App Router route handlers, Hono, Cloudflare Workers, Bun,
 * Deno, Node's own `Request`. It uses whichever build of `@svc/webhook-verify` the runtime
 * resolves (WebCrypto on Workers, Deno, Bun and edge runtimes; `node:crypto` on Node).
 *
 * @packageDocumentation
 */
import {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookSecrets,
} from '@svc/webhook-verify';
import {
  DEFAULT_BODY_LIMIT,
  declaredLengthExceeds,
  errorResponse,
  methodNotAllowed,
  readLimit,
  tooLarge,
} from './shared.ts';

export { DEFAULT_BODY_LIMIT };

/**
 * Options of {@link readRequestBody}.
 *
 * @example
 * ```ts
 * const options: ReadRequestBodyOptions = { limit: 64 * 1024 };
 * ```
 */
export interface ReadRequestBodyOptions {
  /** The largest body accepted, in bytes (default 1 MiB). */
  limit?: number | undefined;
}

/**
 * Reads a `Request`'s body as bytes, never holding more than `limit`: rejects with
 * `payload_too_large` (413) when `Content-Length` says more, or as soon as the bytes read pass
 * the limit (the rest of the stream is cancelled).
 *
 * @example
 * ```ts
 * import { verifyWebhook } from '@svc/webhook-verify';
 * import { readRequestBody } from '@svc/webhook-verify/fetch';
 *
 * const body = await readRequestBody(request, { limit: 64 * 1024 });
 * const event = await verifyWebhook(body, request.headers, env.WEBHOOK_SECRET);
 * ```
 */
export async function readRequestBody(
  request: Request,
  options?: ReadRequestBodyOptions,
): Promise<Uint8Array> {
  const limit = readLimit(options?.limit);
  const declared = request.headers.get('content-length');
  if (declaredLengthExceeds(declared, limit))
    throw tooLarge(limit, `is ${declared?.trim()} bytes (Content-Length)`);
  if (request.bodyUsed) {
    throw new Error(
      'The request body was already read (request.json() or request.text() before verifying?): read it once, as bytes or text, and pass that to verifyWebhook.',
    );
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit, `passed ${length} bytes while reading`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Options of {@link handleWebhook} and {@link createWebhookHandler}.
 *
 * @example
 * ```ts
 * const options: WebhookHandlerOptions = { secrets: 'whsec_…', onEvent: (event) => console.log(event.type) };
 * ```
 */
export interface WebhookHandlerOptions extends VerifyWebhookOptions {
  /** The channel's signing secret, or several during a rotation. */
  secrets: WebhookSecrets;
  /**
   * Called with each verified event. Return a `Response` to answer with it; otherwise the
   * handler answers `200 { "received": true }`. A throw answers a masked 500 (the service
   * retries).
   */
  onEvent: (event: WebhookEvent, request: Request) => unknown;
  /** The largest body accepted, in bytes (default 1 MiB); larger answers 413. */
  limit?: number | undefined;
  /** Called with every rejection and failure, for logging (the detailed `message` is here). */
  onError?: ((error: unknown, request: Request) => void) | undefined;
}

function json(status: number, body: unknown): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (status === 405) headers.allow = 'POST';
  if (status === 413) headers.connection = 'close';
  return new Response(JSON.stringify(body), { status, headers });
}

function isResponse(value: unknown): value is Response {
  return typeof Response !== 'undefined' && value instanceof Response;
}

/**
 * Handles one webhook request: only `POST` (405), body limit (413), verification (400 with
 * `{ error, code }`), then `onEvent` (its `Response`, or 200). Use it where the secret is known
 * per request, as in Cloudflare Workers (`env`).
 *
 * @example
 * ```ts
 * import { handleWebhook } from '@svc/webhook-verify/fetch';
 *
 * export default {
 *   fetch: (request: Request, env: { WEBHOOK_SECRET: string }) =>
 *     handleWebhook(request, { secrets: env.WEBHOOK_SECRET, onEvent: (event) => console.log(event.type) }),
 * };
 * ```
 */
export async function handleWebhook(request: Request, options: WebhookHandlerOptions): Promise<Response> {
  if (request.method !== 'POST') return json(405, methodNotAllowed);
  try {
    const body = await readRequestBody(request, options);
    const event = await verifyWebhook(body, request.headers, options.secrets, options);
    const result = await options.onEvent(event, request);
    return isResponse(result) ? result : json(200, { received: true });
  } catch (error) {
    options.onError?.(error, request);
    const { status, body } = errorResponse(error);
    return json(status, body);
  }
}

/**
 * A `(request: Request) => Promise<Response>` webhook endpoint (see {@link handleWebhook}).
 *
 * @example
 * ```ts
 * // Next.js App Router: app/webhooks/route.ts
 * import { createWebhookHandler } from '@svc/webhook-verify/fetch';
 *
 * export const POST = createWebhookHandler({
 *   secrets: process.env.WEBHOOK_SECRET ?? '',
 *   onEvent: async (event) => {
 *     if (event.type === 'cluster.created') await notifyOnCall(event.data.cluster.title);
 *   },
 * });
 * ```
 */
export function createWebhookHandler(
  options: WebhookHandlerOptions,
): (request: Request) => Promise<Response> {
  readLimit(options.limit);
  return (request) => handleWebhook(request, options);
}
