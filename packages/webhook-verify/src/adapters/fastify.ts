/**
 * `@svc/webhook-verify/fastify`: an encapsulated Fastify plugin that registers the webhook
 * route with its own raw-body parser (no `fastify-plugin`, so nothing leaks to the rest of the
 * app, and nothing the app registers elsewhere changes how the webhook body is read).
 *
 * @packageDocumentation
 */
import {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookSecrets,
} from '@svc/webhook-verify';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_BODY_LIMIT, errorResponse, readLimit } from './shared.ts';

export { DEFAULT_BODY_LIMIT };

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified webhook event (set by `@svc/webhook-verify/fastify` on its route). */
    webhookEvent?: WebhookEvent;
  }
}

/**
 * Options of {@link webhookPlugin} (plus Fastify's own `prefix`).
 *
 * @example
 * ```ts
 * const options: WebhookPluginOptions = { secrets: 'whsec_…', onEvent: (event) => console.log(event.type) };
 * ```
 */
export interface WebhookPluginOptions extends VerifyWebhookOptions {
  /** The channel's signing secret, or several during a rotation. */
  secrets: WebhookSecrets;
  /**
   * Called with each verified event (also on `request.webhookEvent`). Send a reply yourself, or
   * return and the plugin answers `200 { "received": true }` (with the status you set, if any).
   * A throw goes to Fastify's error handler (500, and the service retries).
   */
  onEvent: (event: WebhookEvent, request: FastifyRequest, reply: FastifyReply) => unknown;
  /** The route path inside the plugin's `prefix` (default `/`). */
  path?: string | undefined;
  /** The largest body accepted, in bytes (default 1 MiB); larger answers 413. */
  bodyLimit?: number | undefined;
}

/**
 * Registers `POST <prefix><path>` that reads the body as raw bytes (a content-type parser
 * scoped to this plugin, any content type, with `bodyLimit`), verifies it and calls `onEvent`.
 * Rejections answer 400 (413 when too large) with `{ error, code }` and are logged at `warn`
 * with the detailed message.
 *
 * Raw-body pitfall: a JSON parser registered on the root instance (or the default one) would
 * hand the route a parsed object. This plugin is encapsulated and removes the inherited
 * parsers inside its scope, so whatever the app registers elsewhere, the webhook route gets
 * the bytes.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { webhookPlugin } from '@svc/webhook-verify/fastify';
 *
 * const app = Fastify({ logger: true });
 * await app.register(webhookPlugin, {
 *   prefix: '/webhooks',
 *   secrets: process.env.WEBHOOK_SECRET ?? '',
 *   onEvent: (event) => app.log.info({ type: event.type }, 'webhook'),
 * });
 * ```
 */
export const webhookPlugin: FastifyPluginAsync<WebhookPluginOptions> = async (instance, options) => {
  const bodyLimit = readLimit(options.bodyLimit);
  const { secrets, onEvent } = options;

  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => {
    done(null, body);
  });
  instance.decorateRequest('webhookEvent', undefined);

  instance.setErrorHandler((error, request, reply) => {
    const code = (error as { code?: unknown }).code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      request.log.warn({ code: 'payload_too_large' }, 'webhook rejected: body too large');
      return reply.code(413).header('connection', 'close').send({
        error: 'The request body is too large.',
        code: 'payload_too_large',
      });
    }
    throw error; // the app's error handler
  });

  instance.post(options.path ?? '/', { bodyLimit }, async (request, reply) => {
    let event: WebhookEvent;
    try {
      event = await verifyWebhook(
        (request.body as Buffer | undefined) ?? new Uint8Array(0),
        request.headers,
        secrets,
        options,
      );
    } catch (error) {
      const { status, body } = errorResponse(error);
      if (status === 500) throw error;
      request.log.warn({ code: body.code }, `webhook rejected: ${(error as Error).message}`);
      return reply.code(status).send(body);
    }
    request.webhookEvent = event;
    await onEvent(event, request, reply);
    if (reply.sent) return reply;
    return reply.send({ received: true });
  });
};
