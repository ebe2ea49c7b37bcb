import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BODY, close, delivery, EVENT, largeBody, listen, SECRET, sendChunked } from '../../test/helpers.ts';
import { createWebhookListener, readBody, verifyNodeRequest } from './node.ts';

let server: Server | undefined;
afterEach(async () => {
  if (server) await close(server);
  server = undefined;
});

async function start(listener: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(listener);
  return listen(server);
}

describe('createWebhookListener on node:http', () => {
  it('valid delivery → onEvent gets the event, 200', async () => {
    const onEvent = vi.fn();
    const base = await start(createWebhookListener({ secrets: SECRET, onEvent }));
    const response = await fetch(base, await delivery());
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(onEvent.mock.calls[0]?.[0]).toEqual(EVENT);
  });

  it('tampered → 400 { error, code }, onEvent not called', async () => {
    const onEvent = vi.fn();
    const base = await start(createWebhookListener({ secrets: SECRET, onEvent }));
    const response = await fetch(base, await delivery(BODY, { tamper: true }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'no_matching_signature' });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('oversized (Content-Length) → 413 before reading, connection closed', async () => {
    const onEvent = vi.fn();
    const base = await start(createWebhookListener({ secrets: SECRET, onEvent, limit: 1024 }));
    const response = await fetch(base, await delivery(largeBody(3000)));
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('oversized chunked body → 413 while reading', async () => {
    const onEvent = vi.fn();
    const base = await start(createWebhookListener({ secrets: SECRET, onEvent, limit: 1024 }));
    const init = await delivery(largeBody(3000));
    const response = await sendChunked(base, init.headers, init.body as string);
    expect(response.status).toBe(413);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('a chunked body within the limit is read whole', async () => {
    const onEvent = vi.fn();
    const base = await start(createWebhookListener({ secrets: SECRET, onEvent }));
    const init = await delivery(largeBody(3000));
    const response = await sendChunked(base, init.headers, init.body as string);
    expect(response.status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('onEvent may answer itself; a throwing onEvent answers a masked 500', async () => {
    const base = await start(
      createWebhookListener({
        secrets: SECRET,
        onEvent: (event, _request, response) => {
          if (event.data.title === 'boom') throw new Error('secret internals');
          response.writeHead(204).end();
        },
      }),
    );
    expect((await fetch(base, await delivery())).status).toBe(204);
    const failing = await fetch(
      base,
      await delivery(JSON.stringify({ ...EVENT, data: { ...EVENT.data, title: 'boom' } })),
    );
    expect(failing.status).toBe(500);
    expect(await failing.json()).toEqual({ error: 'Internal Server Error', code: 'internal_error' });
  });

  it('GET → 405', async () => {
    const base = await start(createWebhookListener({ secrets: SECRET, onEvent: () => undefined }));
    const response = await fetch(base);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('readBody and verifyNodeRequest', () => {
  it('verifyNodeRequest reads and verifies in one call', async () => {
    const seen: unknown[] = [];
    const base = await start(async (request, response) => {
      seen.push(await verifyNodeRequest(request, SECRET));
      response.end();
    });
    await fetch(base, await delivery());
    expect(seen).toEqual([EVENT]);
  });

  it('never holds more than the limit: rejects as soon as the bytes read pass it', async () => {
    const outcome: { error?: unknown; received?: number } = {};
    const base = await start(async (request: IncomingMessage, response) => {
      let received = 0;
      request.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      try {
        await readBody(request, { limit: 1000 });
      } catch (error) {
        outcome.error = error;
      }
      outcome.received = received;
      response.writeHead(413, { connection: 'close' }).end();
    });
    const init = await delivery(largeBody(50_000));
    const response = await sendChunked(base, init.headers, init.body as string);
    expect(response.status).toBe(413);
    expect(outcome.error).toMatchObject({ code: 'payload_too_large', status: 413 });
    // Stopped within a chunk or two of the limit, long before the 50 kB body.
    expect(outcome.received).toBeLessThan(20_000);
  });

  it('a body consumed before readBody is an Error explaining the raw-body pitfall', async () => {
    const outcome: { error?: unknown } = {};
    const base = await start(async (request, response) => {
      for await (const _chunk of request) {
        // consume
      }
      await readBody(request).catch((error: unknown) => {
        outcome.error = error;
      });
      response.end();
    });
    await fetch(base, await delivery());
    expect(String(outcome.error)).toMatch(/already read/);
  });
});
