import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from '@svc/webhook-verify';
import { readBody } from '@svc/webhook-verify/node';
import {
  createDeliveryLog,
  type DeliveryLog,
  errorBodies,
  listen,
  type ReceiverOptions,
  readDeliveryHeaders,
  type WebhookReceiver,
  webhookPath,
} from './receiver.ts';

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    // The rest of a body that was not read (413) is not worth reading: end the connection.
    ...(status === 413 ? { connection: 'close' } : {}),
  });
  response.end(text);
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * The request listener: reads the body with the package's `readBody` (bounded) and verifies the
 * raw bytes with `verifyWebhook` before anything parses them. The package's ready-made
 * `createWebhookListener` hands `onEvent` the parsed event only; a receiver that records the raw
 * body uses these two parts instead.
 */
function createListener(log: DeliveryLog, options: ReceiverOptions) {
  const path = webhookPath(options);
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const receivedAt = Date.now();
    if (new URL(request.url ?? '/', 'http://receiver').pathname !== path) {
      sendJson(response, 404, errorBodies.notFound);
      return;
    }
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      sendJson(response, 405, errorBodies.methodNotAllowed);
      return;
    }
    const headers = readDeliveryHeaders((name) => header(request, name));
    let body: Buffer;
    let event: WebhookEvent;
    try {
      body = await readBody(request, { limit: options.limit });
      event = await verifyWebhook(body, request.headers, log.secrets());
    } catch (error) {
      if (WebhookVerificationError.isInstance(error)) {
        log.recordRejection(error, headers, receivedAt);
        sendJson(response, error.status, errorBodies.rejected(error));
      } else if (!response.headersSent && !response.destroyed) {
        // The client went away mid-body, or a programming error: nothing was verified.
        sendJson(response, 500, errorBodies.internal);
      }
      return;
    }

    const delivery = log.recordDelivery({ event, rawBody: body.toString('utf8'), ...headers, receivedAt });
    const answer = await log.respond(delivery); // a throw answers 500 (below)
    if (answer === 'hang') return; // close() ends it
    if (answer === 'close') {
      response.destroy();
      return;
    }
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body);
  };
}

/**
 * Starts a `node:http` receiver: the body is read with `readBody` from
 * `@svc/webhook-verify/node` and verified with `verifyWebhook`, then recorded and answered as
 * `respond` says.
 *
 * @example
 * ```ts
 * import { startNodeReceiver } from '@example/webhook-receiver';
 *
 * const receiver = await startNodeReceiver({ secrets: channel.secret });
 * await createChannel({ type: 'webhook', name: 'e2e', url: receiver.url });
 * const delivery = await receiver.waitFor((delivery) => delivery.event.type === 'notification.test');
 * await receiver.close();
 * ```
 */
export async function startNodeReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const log = createDeliveryLog(options);
  const listener = createListener(log, options);
  const server = createServer((request, response) => {
    // A throw in `respond`, or an answer Node refuses (a status outside 100..999, a header with
    // a newline): a masked 500 when nothing was sent yet.
    listener(request, response).catch(() => {
      if (response.headersSent) response.destroy();
      else sendJson(response, 500, errorBodies.internal);
    });
  });
  return listen(server, log, options);
}
