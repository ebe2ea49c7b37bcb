/**
 * `@svc/webhook-verify/express`: route-level middleware that reads the raw body itself (with a
 * size limit), verifies it and hands over the event. Uses no Express API at run time (plain
 * `node:http` request and response), so it works with Express 4 and 5 and needs neither
 * `express.raw()` nor `@types/express`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookSecrets,
} from '@svc/webhook-verify';
import { readBody } from './node.ts';
import { sendJson } from './node-response.ts';
import { bodyAlreadyReadMessage, DEFAULT_BODY_LIMIT, errorResponse, readLimit } from './shared.ts';

export { DEFAULT_BODY_LIMIT };

/**
 * The request as the middleware sees it: a Node request, maybe with a body an earlier parser
 * left (`express.raw()` → `Buffer`, `express.text()` → string) or the raw bytes kept by
 * {@link keepRawBody}; after verification, `webhookEvent`.
 *
 * @example
 * ```ts
 * app.post('/webhooks', createWebhookMiddleware({ secrets }), (request, response) => {
 *   const { webhookEvent } = request as WebhookRequest;
 *   response.sendStatus(204);
 * });
 * ```
 */
export interface WebhookRequest extends IncomingMessage {
  body?: unknown;
  rawBody?: unknown;
  webhookEvent?: WebhookEvent;
}

/**
 * Options of {@link createWebhookMiddleware}.
 *
 * @example
 * ```ts
 * const options: WebhookMiddlewareOptions = { secrets: 'whsec_…', limit: 64 * 1024 };
 * ```
 */
export interface WebhookMiddlewareOptions extends VerifyWebhookOptions {
  /** The channel's signing secret, or several during a rotation. */
  secrets: WebhookSecrets;
  /** The largest body accepted, in bytes (default 1 MiB); larger answers 413. */
  limit?: number | undefined;
  /**
   * Called with each verified event. Answer yourself through `response`, or return and the
   * middleware answers `200 { "received": true }`; a throw goes to Express's error handler
   * (500, and the service retries). Without `onEvent` the middleware sets
   * `request.webhookEvent` and calls `next()`.
   */
  onEvent?: ((event: WebhookEvent, request: WebhookRequest, response: ServerResponse) => unknown) | undefined;
  /** Called with every rejected delivery, for logging (the detailed `message` is here). */
  onError?: ((error: unknown, request: IncomingMessage) => void) | undefined;
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

/** The raw body: left by an earlier raw parser or kept by `keepRawBody`, else read here. */
function rawBodyOf(request: WebhookRequest, limit: number): Promise<Uint8Array | string> {
  if (isBytes(request.body)) return Promise.resolve(request.body);
  if (isBytes(request.rawBody) || typeof request.rawBody === 'string')
    return Promise.resolve(request.rawBody);
  if (typeof request.body === 'string' && request.readableEnded) return Promise.resolve(request.body);
  if (request.readableEnded) return Promise.reject(new Error(bodyAlreadyReadMessage));
  return readBody(request, { limit });
}

/**
 * Route-level middleware for a webhook endpoint. Reads the raw body itself (`Content-Length`
 * and byte-counting limit: 413), verifies it (400 `{ error, code }` on failure) and calls
 * `onEvent`, or sets `request.webhookEvent` and calls `next()`.
 *
 * Raw-body pitfall: a global `app.use(express.json())` registered **before** the webhook route
 * consumes the body first. Register the webhook route before it, or keep the raw bytes with
 * `express.json({ verify: keepRawBody })`; otherwise the middleware fails with a 500 whose
 * message explains this. A JSON parser registered after the route, or on other routes, is fine.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createWebhookMiddleware } from '@svc/webhook-verify/express';
 *
 * const app = express();
 * app.post(
 *   '/webhooks',
 *   createWebhookMiddleware({
 *     secrets: process.env.WEBHOOK_SECRET ?? '',
 *     onEvent: (event) => console.log(event.type, event.id),
 *   }),
 * );
 * app.use(express.json()); // after the webhook route
 * ```
 */
export function createWebhookMiddleware(
  options: WebhookMiddlewareOptions,
): (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void {
  const limit = readLimit(options.limit);
  return (incoming, response, next) => {
    const request = incoming as WebhookRequest;
    const handle = async () => {
      let event: WebhookEvent;
      try {
        event = await verifyWebhook(
          await rawBodyOf(request, limit),
          request.headers,
          options.secrets,
          options,
        );
      } catch (error) {
        options.onError?.(error, request);
        const { status, body } = errorResponse(error);
        if (status === 500) {
          next(error);
          return;
        }
        sendJson(response, status, body);
        return;
      }
      request.webhookEvent = event;
      if (options.onEvent === undefined) {
        next();
        return;
      }
      await options.onEvent(event, request, response);
      if (!response.headersSent) sendJson(response, 200, { received: true });
    };
    handle().catch(next);
  };
}

/**
 * A `verify` function for Express's own body parsers that keeps the raw bytes on
 * `request.rawBody`, so that the webhook middleware still works behind a global
 * `express.json()`.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createWebhookMiddleware, keepRawBody } from '@svc/webhook-verify/express';
 *
 * app.use(express.json({ verify: keepRawBody })); // global, before the webhook route
 * app.post('/webhooks', createWebhookMiddleware({ secrets, onEvent }));
 * ```
 */
export function keepRawBody(request: IncomingMessage, _response: ServerResponse, buffer: Buffer): void {
  (request as WebhookRequest).rawBody = buffer;
}
