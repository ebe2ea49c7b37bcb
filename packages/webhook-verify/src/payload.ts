import { WebhookVerificationError } from './errors.ts';
import type { RawBody, WebhookEvent } from './types.ts';

const rawBodyHelp =
  'The signature covers the exact bytes that were sent: pass the raw request body (a string, Buffer, ' +
  'Uint8Array or ArrayBuffer), never JSON that was parsed and serialised again. ' +
  "Express: use createWebhookMiddleware from '@svc/webhook-verify/express' (or express.raw({ type: 'application/json' }) on the route, before any express.json()); " +
  "Fastify: register webhookPlugin from '@svc/webhook-verify/fastify'; " +
  "Next.js App Router, Hono, Workers: await request.text() or use '@svc/webhook-verify/fetch'; " +
  "node:http: readBody from '@svc/webhook-verify/node'.";

/** The body as a string or bytes (a view over the caller's memory, never a copy). */
export function toBody(rawBody: RawBody): string | Uint8Array {
  if (typeof rawBody === 'string') return rawBody;
  if (rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody))
    return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const received: unknown = rawBody;
  const what =
    received === undefined || received === null
      ? `${received}`
      : typeof received === 'object'
        ? 'a parsed object'
        : `a ${typeof received}`;
  throw new WebhookVerificationError({
    code: 'invalid_payload',
    message: `rawBody is ${what}, not the raw request body. ${rawBodyHelp}`,
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function invalid(detail: string, cause?: unknown): WebhookVerificationError {
  return new WebhookVerificationError({
    code: 'invalid_payload',
    message: `The signature is valid but the body is not a webhook event: ${detail}.`,
    cause,
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a verified body: UTF-8 JSON of an object with a string `id` (`evt_…`), a string
 * `type` and an object `data`. A light structural check, not a schema: unknown types and
 * fields pass through unchanged.
 */
export function parseEvent(body: string | Uint8Array): WebhookEvent {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    try {
      text = utf8.decode(body);
    } catch (error) {
      throw invalid('it is not valid UTF-8', error);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid('it is not JSON', error);
  }
  if (!isPlainObject(value)) throw invalid('it is not a JSON object');
  if (typeof value.id !== 'string' || !value.id.startsWith('evt_'))
    throw invalid('`id` is not an evt_… string');
  if (typeof value.type !== 'string' || value.type === '') throw invalid('`type` is not a string');
  if (!isPlainObject(value.data)) throw invalid('`data` is not an object');
  return value as unknown as WebhookEvent;
}
