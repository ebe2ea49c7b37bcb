/**
 * `@svc/webhook-verify`, WebCrypto build (`crypto.subtle`, the `CryptoKey` cached per secret)
 * for browsers, Cloudflare Workers, Deno, Bun and edge runtimes: verify and parse the service's
 * signed webhooks (PROTOCOL.md §6). Node gets the `node:crypto` build (`./index.ts`) with the
 * same API and the same type declarations, through the package's export conditions.
 *
 * @packageDocumentation
 */
import { webCrypto } from './crypto-web.ts';
import type { SignWebhook, VerifyWebhook } from './types.ts';
import { createWebhookFunctions } from './verify.ts';

export * from './common.ts';

const functions = createWebhookFunctions(webCrypto);

/**
 * Verifies a webhook delivery, then parses it. Checks, in order: the header (present, well
 * formed, bounded), that one `v1` is the HMAC-SHA256 of `<t>.<raw body>` with one of the
 * secrets (constant-time), that `t` is within `toleranceSec` (300 s) of now in either
 * direction, and that the body is a JSON event (`id`, `type`, `data`). Only then is the body
 * parsed. Rejects with a {@link WebhookVerificationError} (`code` says why), or a `TypeError`
 * for a programming error (no secret, invalid options).
 *
 * @param rawBody - the request body exactly as received (string, Buffer, Uint8Array, ArrayBuffer), never a parsed object
 * @param signatureHeader - the `X-Service-Signature` value, or the request's headers
 * @param secrets - the channel's signing secret, or several during a rotation
 * @param options - `toleranceSec` (default 300), `now`
 * @returns the event; its `type` may be newer than this package (see {@link WebhookEvent})
 *
 * @example
 * ```ts
 * import { verifyWebhook } from '@svc/webhook-verify';
 *
 * // Next.js App Router (app/webhooks/route.ts)
 * export async function POST(request: Request) {
 *   const event = await verifyWebhook(await request.text(), request.headers, process.env.WEBHOOK_SECRET ?? '');
 *   if (event.type === 'cluster.created') console.log(event.data.cluster.title);
 *   return new Response(null, { status: 204 });
 * }
 * ```
 */
export const verifyWebhook: VerifyWebhook = functions.verifyWebhook;

/**
 * Signs a body the way the service does and returns the `X-Service-Signature` value:
 * `t=<unix s>,v1=<hex>` with one `v1` per secret, in order. For tests of receivers and for other
 * senders; byte-for-byte Stripe's scheme.
 *
 * @param rawBody - the exact body that will be sent
 * @param secrets - one secret, or several (each gets a `v1`)
 * @param options - `timestamp` in Unix seconds (default now)
 *
 * @example
 * ```ts
 * import { signWebhook, verifyWebhook } from '@svc/webhook-verify';
 *
 * const body = JSON.stringify(event);
 * const header = await signWebhook(body, 'whsec_test');
 * await verifyWebhook(body, header, 'whsec_test'); // event
 * ```
 */
export const signWebhook: SignWebhook = functions.signWebhook;
