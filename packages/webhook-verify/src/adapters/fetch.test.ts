import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { BODY, close, delivery, EVENT, largeBody, SECRET, sendChunked } from '../../test/helpers.ts';
import { createWebhookHandler, handleWebhook, readRequestBody } from './fetch.ts';

describe('createWebhookHandler through Hono and @hono/node-server', () => {
  const onEvent = vi.fn();
  const onError = vi.fn();
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = new Hono();
    // A JSON body parser for the rest of the app does not touch the webhook route.
    app.use('/api/*', async (context, next) => {
      context.set('body' as never, (await context.req.json()) as never);
      await next();
    });
    app.post('/api/echo', (context) => context.json(context.get('body' as never)));
    const handler = createWebhookHandler({ secrets: SECRET, onEvent, onError, limit: 4096 });
    app.post('/webhooks', (context) => handler(context.req.raw));
    app.post('/webhooks/custom', (context) =>
      handleWebhook(context.req.raw, {
        secrets: ['whsec_other', SECRET],
        onEvent: (event) => Response.json({ handled: event.id }, { status: 202 }),
      }),
    );
    app.post('/webhooks/failing', (context) =>
      handleWebhook(context.req.raw, {
        secrets: SECRET,
        onEvent: () => {
          throw new Error('database down: secret details');
        },
        onError,
      }),
    );
    app.get('/webhooks', (context) => handler(context.req.raw));
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
        base = `http://127.0.0.1:${info.port}`;
        resolve();
      }) as Server;
    });
  });
  afterAll(() => close(server));
  beforeEach(() => {
    onEvent.mockReset();
    onError.mockReset();
  });

  it('a valid delivery reaches onEvent and answers 200', async () => {
    const response = await fetch(`${base}/webhooks`, await delivery());
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(onEvent).toHaveBeenCalledTimes(1);
    expect(onEvent.mock.calls[0]?.[0]).toEqual(EVENT);
  });

  it('a tampered body answers 400 { error, code } and onEvent is not called', async () => {
    const response = await fetch(`${base}/webhooks`, await delivery(BODY, { tamper: true }));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({
      error: 'No signature matches the request body.',
      code: 'no_matching_signature',
    });
    expect(onEvent).not.toHaveBeenCalled();
    expect(onError.mock.calls[0]?.[0]).toMatchObject({ code: 'no_matching_signature' });
  });

  it('a missing header answers 400 missing_header', async () => {
    const response = await fetch(`${base}/webhooks`, { method: 'POST', body: BODY });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'missing_header' });
  });

  it('a wrong secret answers 400 without echoing any secret', async () => {
    const response = await fetch(`${base}/webhooks`, await delivery(BODY, { secret: 'whsec_attacker' }));
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('whsec_');
  });

  it('an oversized body answers 413 (Content-Length) and onEvent is not called', async () => {
    const body = largeBody(8000);
    const response = await fetch(`${base}/webhooks`, await delivery(body));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('an oversized streamed body (no Content-Length) answers 413', async () => {
    const init = await delivery(largeBody(8000));
    const response = await sendChunked(`${base}/webhooks`, init.headers, init.body as string);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'payload_too_large' });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('a Response returned by onEvent is the answer; rotation secrets are tried in turn', async () => {
    const response = await fetch(`${base}/webhooks/custom`, await delivery());
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ handled: EVENT.id });
  });

  it('a throwing onEvent answers a masked 500 and reports the error', async () => {
    const response = await fetch(`${base}/webhooks/failing`, await delivery());
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: 'Internal Server Error', code: 'internal_error' });
    expect(text).not.toContain('database');
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('GET answers 405 with Allow: POST', async () => {
    const response = await fetch(`${base}/webhooks`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('the JSON parser of the other routes still works', async () => {
    const response = await fetch(`${base}/api/echo`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toEqual({ a: 1 });
  });
});

describe('handleWebhook and readRequestBody with plain Request objects', () => {
  it('verifies a Request built in memory (Next.js App Router, Workers, Bun, Deno)', async () => {
    const onEvent = vi.fn();
    const response = await handleWebhook(new Request('https://receiver.example/webhooks', await delivery()), {
      secrets: SECRET,
      onEvent,
    });
    expect(response.status).toBe(200);
    expect(onEvent).toHaveBeenCalledWith(EVENT, expect.any(Request));
  });

  it('reads an empty body as no bytes', async () => {
    expect(await readRequestBody(new Request('https://x.example/', { method: 'POST' }))).toEqual(
      new Uint8Array(0),
    );
  });

  it('rejects a body already read by request.json()', async () => {
    const request = new Request('https://x.example/', await delivery());
    await request.json();
    await expect(readRequestBody(request)).rejects.toThrow(/already read/);
  });

  it('rejects an invalid limit as a programming error', () => {
    expect(() => createWebhookHandler({ secrets: SECRET, onEvent: () => undefined, limit: -1 })).toThrow(
      TypeError,
    );
  });
});
