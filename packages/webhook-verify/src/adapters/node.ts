/**
 * `@svc/webhook-verify/node`: read an `IncomingMessage` body with a size limit and verify it;
 * a ready-made `node:http` request listener.
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
import { sendJson } from './node-response.ts';
import {
  bodyAlreadyReadMessage,
  DEFAULT_BODY_LIMIT,
  declaredLengthExceeds,
  errorResponse,
  methodNotAllowed,
  readLimit,
  tooLarge,
} from './shared.ts';

export { DEFAULT_BODY_LIMIT };

/**
 * Options of {@link readBody}.
 *
 * @example
 * ```ts
 * const options: ReadBodyOptions = { limit: 64 * 1024 };
 * ```
 */
export interface ReadBodyOptions {
  /** The largest body accepted, in bytes (default {@link DEFAULT_BODY_LIMIT}, 1 MiB). */
  limit?: number | undefined;
}

/**
 * Reads the whole body of a request into one `Buffer`, never holding more than `limit` bytes:
 * rejects with `payload_too_large` (status 413) before reading when `Content-Length` is above
 * the limit, and as soon as the bytes read pass it otherwise (the stream is then paused: answer
 * 413 with `Connection: close`). Rejects with an `Error` when the body was already consumed
 * (by a body parser that ran before) or the client aborted.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { verifyWebhook } from '@svc/webhook-verify';
 * import { readBody } from '@svc/webhook-verify/node';
 *
 * createServer(async (request, response) => {
 *   const body = await readBody(request, { limit: 64 * 1024 });
 *   const event = await verifyWebhook(body, request.headers, process.env.WEBHOOK_SECRET ?? '');
 *   response.end();
 * });
 * ```
 */
export function readBody(request: IncomingMessage, options?: ReadBodyOptions): Promise<Buffer> {
  const limit = readLimit(options?.limit);
  return new Promise((resolve, reject) => {
    const declared = request.headers['content-length'];
    if (declaredLengthExceeds(declared, limit)) {
      reject(tooLarge(limit, `is ${declared?.trim()} bytes (Content-Length)`));
      return;
    }
    if (request.readableEnded) {
      reject(new Error(bodyAlreadyReadMessage));
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      length += buffer.length;
      if (length > limit) {
        cleanup();
        request.pause();
        reject(tooLarge(limit, `passed ${length} bytes while reading`));
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, length));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('The client closed the connection before the request body was complete.'));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/**
 * Options of {@link verifyNodeRequest}: the verification options and the body `limit`.
 *
 * @example
 * ```ts
 * const options: VerifyNodeRequestOptions = { limit: 64 * 1024, toleranceSec: 300 };
 * ```
 */
export interface VerifyNodeRequestOptions extends VerifyWebhookOptions, ReadBodyOptions {}

/**
 * Reads the body of a request (with {@link readBody}'s limit) and verifies it with the
 * `X-Service-Signature` header of the request.
 *
 * @example
 * ```ts
 * import { verifyNodeRequest } from '@svc/webhook-verify/node';
 *
 * const event = await verifyNodeRequest(request, process.env.WEBHOOK_SECRET ?? '');
 * ```
 */
export async function verifyNodeRequest(
  request: IncomingMessage,
  secrets: WebhookSecrets,
  options?: VerifyNodeRequestOptions,
): Promise<WebhookEvent> {
  const body = await readBody(request, options);
  return verifyWebhook(body, request.headers, secrets, options);
}

/**
 * Options of {@link createWebhookListener}.
 *
 * @example
 * ```ts
 * const options: WebhookListenerOptions = { secrets: 'whsec_…', onEvent: (event) => console.log(event.type) };
 * ```
 */
export interface WebhookListenerOptions extends VerifyWebhookOptions, ReadBodyOptions {
  /** The channel's signing secret, or several during a rotation. */
  secrets: WebhookSecrets;
  /**
   * Called with each verified event. Answer yourself through `response`, or return and the
   * listener answers `200 { "received": true }`. A throw answers 500 (the service retries).
   */
  onEvent: (event: WebhookEvent, request: IncomingMessage, response: ServerResponse) => unknown;
  /** Called with every rejection and failure, for logging (the detailed `message` is here). */
  onError?: ((error: unknown, request: IncomingMessage) => void) | undefined;
}

/**
 * A `node:http` request listener that receives webhooks: only `POST` (405 otherwise), body
 * limit (413), verification (400 with `{ error, code }`), then `onEvent` (200).
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createWebhookListener } from '@svc/webhook-verify/node';
 *
 * createServer(
 *   createWebhookListener({
 *     secrets: process.env.WEBHOOK_SECRET ?? '',
 *     onEvent: (event) => console.log(event.type, event.id),
 *   }),
 * ).listen(3000);
 * ```
 */
export function createWebhookListener(
  options: WebhookListenerOptions,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  readLimit(options.limit);
  return async (request, response) => {
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      sendJson(response, 405, methodNotAllowed);
      return;
    }
    let event: WebhookEvent;
    try {
      event = await verifyNodeRequest(request, options.secrets, options);
      await options.onEvent(event, request, response);
    } catch (error) {
      options.onError?.(error, request);
      if (!response.headersSent) {
        const { status, body } = errorResponse(error);
        sendJson(response, status, body);
      } else if (!response.writableEnded) {
        response.end();
      }
      return;
    }
    if (!response.headersSent) sendJson(response, 200, { received: true });
  };
}
