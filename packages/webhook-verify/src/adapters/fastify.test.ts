import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BODY, delivery, EVENT, largeBody, SECRET, sendChunked } from '../../test/helpers.ts';
import { webhookPlugin } from './fastify.ts';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app with a root-level JSON parser that would break verification if it reached the route. */
async function start(options: Partial<Parameters<typeof webhookPlugin>[1]> = {}) {
  const onEvent = vi.fn(options.onEvent ?? (() => undefined));
  app = Fastify();
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    // Re-serialises, like a parser that normalises JSON would: the signed bytes would be lost.
    done(null, { parsedByRoot: JSON.parse(String(body)) });
  });
  app.post('/api/echo', async (request) => request.body);
  await app.register(webhookPlugin, { prefix: '/webhooks', secrets: SECRET, ...options, onEvent });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { base: address, onEvent };
}

describe('webhookPlugin on a real Fastify 5 app over HTTP', () => {
  it('valid delivery → onEvent gets the event (also on request.webhookEvent), 200', async () => {
    const seen: unknown[] = [];
    const { base, onEvent } = await start({
      onEvent: (_event, request) => {
        seen.push(request.webhookEvent);
      },
    });
    const response = await fetch(`${base}/webhooks`, await delivery());
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(onEvent).toHaveBeenCalledTimes(1);
    expect(onEvent.mock.calls[0]?.[0]).toEqual(EVENT);
    expect(seen).toEqual([EVENT]);
  });

  it('the root JSON parser still serves the rest of the app (the route-scoped parser wins only inside)', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/api/echo`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toEqual({ parsedByRoot: { a: 1 } });
  });

  it('tampered → 400 { error, code }, handler not called', async () => {
    const { base, onEvent } = await start();
    const response = await fetch(`${base}/webhooks`, await delivery(BODY, { tamper: true }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'No signature matches the request body.',
      code: 'no_matching_signature',
    });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('missing header and a non-JSON content type are verified the same way', async () => {
    const { base, onEvent } = await start();
    const missing = await fetch(`${base}/webhooks`, {
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json' },
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'missing_header' });
    const init = await delivery();
    const textPlain = await fetch(`${base}/webhooks`, {
      ...init,
      headers: { ...init.headers, 'content-type': 'text/plain' },
    });
    expect(textPlain.status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('oversized (Content-Length) → 413 { error, code }, handler not called', async () => {
    const { base, onEvent } = await start({ bodyLimit: 1024 });
    const response = await fetch(`${base}/webhooks`, await delivery(largeBody(4000)));
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: 'The request body is too large.',
      code: 'payload_too_large',
    });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('oversized chunked body → 413', async () => {
    const { base, onEvent } = await start({ bodyLimit: 1024 });
    const init = await delivery(largeBody(4000));
    const response = await sendChunked(`${base}/webhooks`, init.headers, init.body as string);
    expect(response.status).toBe(413);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('onEvent may reply itself; a throw goes to the app error handler (500)', async () => {
    const { base } = await start({
      onEvent: (event, _request, reply) => {
        if (event.data.title === 'boom') throw new Error('handler failed');
        return reply.code(202).send({ id: event.id });
      },
    });
    const accepted = await fetch(`${base}/webhooks`, await delivery());
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ id: EVENT.id });
    const failing = await fetch(
      `${base}/webhooks`,
      await delivery(JSON.stringify({ ...EVENT, data: { ...EVENT.data, title: 'boom' } })),
    );
    expect(failing.status).toBe(500);
  });

  it('a path option places the route inside the prefix; inject works too', async () => {
    app = Fastify();
    const onEvent = vi.fn();
    await app.register(webhookPlugin, { prefix: '/hooks', path: '/service', secrets: [SECRET], onEvent });
    const init = await delivery();
    const response = await app.inject({
      method: 'POST',
      url: '/hooks/service',
      payload: init.body as string,
      headers: init.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });
});
