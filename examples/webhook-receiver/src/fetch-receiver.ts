import { createServer } from 'node:http';
import { WebhookVerificationError } from '@svc/webhook-verify';
import { handleWebhook } from '@svc/webhook-verify/fetch';
import { createFetchListener } from './node-fetch-bridge.ts';
import {
  createDeliveryLog,
  type DeliveryLog,
  errorBodies,
  listen,
  type ReceiverOptions,
  type ReceiverResponse,
  readDeliveryHeaders,
  type WebhookReceiver,
  webhookPath,
} from './receiver.ts';

/** Statuses whose `Response` cannot have a body. */
const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);

/** Waits until the connection of `request` closes (the client gave up, or `close()`). */
function closed(request: Request): Promise<void> {
  if (request.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** The `Response` for an answer; `'close'` is a network error, which the bridge turns into a destroyed socket. */
async function toResponse(answer: ReceiverResponse, request: Request): Promise<Response> {
  if (answer === 'hang') {
    await closed(request);
    return Response.error();
  }
  if (answer === 'close') return Response.error();
  const body = nullBodyStatuses.has(answer.status) ? null : (answer.body ?? null);
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * `request` with a body that keeps a copy of every chunk the handler reads. `onEvent` gets the
 * parsed event only; the receiver also records the raw body, which by then has been read whole.
 * (A `request.clone()` would not do: the package cancels its reader at the size limit, and a
 * tee's cancel waits for the other branch.)
 */
function recordBody(request: Request): { request: Request; rawBody: () => string } {
  const chunks: Uint8Array[] = [];
  if (request.body === null) return { request, rawBody: () => '' };
  const body = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        chunks.push(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  return {
    request: new Request(request, { body, duplex: 'half' }),
    rawBody: () => Buffer.concat(chunks).toString('utf8'),
  };
}

/**
 * The Fetch-API handler: `handleWebhook` from `@svc/webhook-verify/fetch` does the method check,
 * the bounded read, the verification of the raw bytes and the 400/413 answers; `onEvent` records
 * the delivery and answers as `respond` says.
 */
function createHandler(log: DeliveryLog, options: ReceiverOptions): (request: Request) => Promise<Response> {
  const path = webhookPath(options);
  return async (incoming) => {
    const receivedAt = Date.now();
    if (new URL(incoming.url).pathname !== path) return Response.json(errorBodies.notFound, { status: 404 });
    const headers = readDeliveryHeaders((name) => incoming.headers.get(name) ?? undefined);
    const { request, rawBody } = recordBody(incoming);
    try {
      return await handleWebhook(request, {
        secrets: log.secrets(),
        limit: options.limit,
        onError: (error) => {
          if (WebhookVerificationError.isInstance(error)) log.recordRejection(error, headers, receivedAt);
        },
        onEvent: async (event) => {
          const delivery = log.recordDelivery({ event, rawBody: rawBody(), ...headers, receivedAt });
          return toResponse(await log.respond(delivery), request);
        },
      });
    } finally {
      // Rejected on its declared Content-Length, the body was never read: let it go.
      if (!request.bodyUsed) await request.body?.cancel().catch(() => undefined);
    }
  };
}

/**
 * Starts a receiver built on the Fetch-API adapter: `handleWebhook` from
 * `@svc/webhook-verify/fetch`, served by `node:http` through a small `Request`/`Response`
 * bridge, as a Next.js route handler, Hono, Workers, Bun or Deno would run it.
 *
 * @example
 * ```ts
 * import { startFetchReceiver } from '@example/webhook-receiver';
 *
 * const receiver = await startFetchReceiver({ secrets: channel.secret, respond: () => ({ status: 503, headers: { 'retry-after': '1' } }) });
 * const first = await receiver.waitFor((delivery) => delivery.attempt === 1);
 * receiver.setResponder(undefined); // 200 from now on
 * await receiver.waitFor((delivery) => delivery.event.id === first.event.id && delivery.attempt === 2);
 * await receiver.close();
 * ```
 */
export async function startFetchReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const log = createDeliveryLog(options);
  const server = createServer(createFetchListener(createHandler(log, options)));
  return listen(server, log, options);
}
