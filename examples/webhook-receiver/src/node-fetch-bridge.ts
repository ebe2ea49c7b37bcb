/**
 * A minimal `node:http` → `Request`/`Response` bridge, so a Fetch-API handler (what Next.js,
 * Hono, Workers, Bun and Deno run) can be served by Node without a dependency.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * The request body as a web stream that reads only when pulled and can be cancelled before or
 * while it is read (a handler that refuses a body over its size limit). `Readable.toWeb` does
 * not survive that on Node 24: data arriving after the cancel throws an uncaught
 * `ERR_INVALID_STATE` (the receiver's 413 tests catch it). The connection is closed after the
 * answer instead (see {@link createFetchListener}).
 */
function bodyStream(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      incoming.pause(); // before the 'data' listener, so it does not start the flow: pull() does
      incoming.on('data', (chunk: Buffer) => {
        if (settled) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once('end', () => {
        if (!settled) controller.close();
        settled = true;
      });
      incoming.once('close', () => {
        if (!settled)
          controller.error(new Error('The client closed the connection before the body was complete.'));
        settled = true;
      });
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      settled = true;
      incoming.pause();
    },
  });
}

function toRequest(incoming: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2) {
    const name = incoming.rawHeaders[index];
    const value = incoming.rawHeaders[index + 1];
    if (name !== undefined && value !== undefined) headers.append(name, value);
  }
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(incoming.url ?? '/', `http://${incoming.headers.host ?? 'localhost'}`), {
    method,
    headers,
    body: hasBody ? bodyStream(incoming) : null,
    signal,
    // Node's fetch requires this for a streamed request body.
    duplex: 'half',
  });
}

/**
 * A `node:http` request listener that answers with `handler`. `request.signal` aborts when the
 * connection closes (the client gave up, or the server is closing), so a handler that waits can
 * stop. A `Response.error()` (a network error in the Fetch standard) destroys the connection
 * without an answer. A throw answers a plain 500.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 *
 * createServer(createFetchListener(async (request) => new Response(`hello ${request.method}`))).listen(3000);
 * ```
 */
export function createFetchListener(handler: (request: Request) => Promise<Response>): RequestListener {
  const listener = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const controller = new AbortController();
    outgoing.once('close', () => controller.abort());
    let response: Response;
    try {
      response = await handler(toRequest(incoming, controller.signal));
    } catch {
      response = new Response('Internal Server Error', { status: 500 });
    }
    if (response.type === 'error') {
      outgoing.destroy();
      return;
    }
    if (outgoing.destroyed) return;
    outgoing.statusCode = response.status;
    outgoing.setHeaders(response.headers);
    // A body the handler did not read to the end (a 413) is not read either: end the connection.
    if (!incoming.complete) outgoing.setHeader('connection', 'close');
    if (response.body === null) outgoing.end();
    else await pipeline(Readable.fromWeb(response.body), outgoing);
  };
  return (incoming, outgoing) => {
    listener(incoming, outgoing).catch(() => outgoing.destroy());
  };
}
