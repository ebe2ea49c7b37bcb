import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY, delivery, EVENT, largeBody, sendChunked } from '../../test/helpers.ts';

// The Express app runs in a child process, exactly as in production: see test/express-app.ts.
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  child = spawn(process.execPath, ['--conditions=@svc/source', 'test/express-app.ts'], {
    cwd: new URL('../..', import.meta.url),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  base = `http://127.0.0.1:${(JSON.parse(line.toString()) as { port: number }).port}`;
});

afterAll(async () => {
  child.kill('SIGTERM');
  if (child.exitCode === null) await once(child, 'exit');
});

async function recorded(): Promise<{ events: unknown[]; errors: string[] }> {
  return (await (await fetch(`${base}/_recorded`)).json()) as { events: unknown[]; errors: string[] };
}

/** Runs `send` and returns what onEvent and the error handler saw meanwhile. */
async function during(
  send: () => Promise<Response>,
): Promise<{ response: Response; events: unknown[]; errors: string[] }> {
  const before = await recorded();
  const response = await send();
  const after = await recorded();
  return {
    response,
    events: after.events.slice(before.events.length),
    errors: after.errors.slice(before.errors.length),
  };
}

describe('createWebhookMiddleware on a real Express 5 app over HTTP', () => {
  it('valid delivery → onEvent gets the event, 200; a global express.json() after the route is fine', async () => {
    const { response, events } = await during(async () => fetch(`${base}/after/webhooks`, await delivery()));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(events).toEqual([EVENT]);

    const echo = await fetch(`${base}/after/api/echo`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await echo.json()).toEqual({ a: 1 });
  });

  it('tampered body → 400 { error, code }, handler not called', async () => {
    const { response, events } = await during(async () =>
      fetch(`${base}/after/webhooks`, await delivery(BODY, { tamper: true })),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'No signature matches the request body.',
      code: 'no_matching_signature',
    });
    expect(events).toEqual([]);
  });

  it('missing header → 400 missing_header', async () => {
    const response = await fetch(`${base}/after/webhooks`, { method: 'POST', body: BODY });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'missing_header' });
  });

  it('without onEvent: sets request.webhookEvent and calls next()', async () => {
    const response = await fetch(`${base}/next/webhooks`, await delivery());
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ type: 'notification.test' });
  });

  it('oversized body → 413 (declared Content-Length), handler not called', async () => {
    const { response, events } = await during(async () =>
      fetch(`${base}/limited/webhooks`, await delivery(largeBody(4000))),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large' });
    expect(events).toEqual([]);
  });

  it('oversized chunked body (no Content-Length) → 413 while reading', async () => {
    const init = await delivery(largeBody(4000));
    const before = await recorded();
    const response = await sendChunked(`${base}/limited/webhooks`, init.headers, init.body as string);
    const events = (await recorded()).events.slice(before.events.length);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'payload_too_large' });
    expect(events).toEqual([]);
  });

  it('a global express.json({ verify: keepRawBody }) before the route: the kept raw bytes are verified', async () => {
    const { response, events } = await during(async () => fetch(`${base}/keep/webhooks`, await delivery()));
    expect(response.status).toBe(200);
    expect(events).toEqual([EVENT]);
    expect((await fetch(`${base}/keep/webhooks`, await delivery(BODY, { tamper: true }))).status).toBe(400);
  });

  it('express.raw() on the route before the middleware: its Buffer is verified', async () => {
    const { response, events } = await during(async () => fetch(`${base}/raw/webhooks`, await delivery()));
    expect(response.status).toBe(200);
    expect(events).toEqual([EVENT]);
  });

  it('a plain global express.json() before the route: 500 with a message that explains the fix', async () => {
    const { response, events, errors } = await during(async () =>
      fetch(`${base}/pitfall/webhooks`, await delivery()),
    );
    expect(response.status).toBe(500);
    expect(events).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/already read by another body parser.*keepRawBody/s);
  });

  it('a throwing onEvent goes to the Express error handler (500)', async () => {
    const { response, errors } = await during(async () =>
      fetch(`${base}/throwing/webhooks`, await delivery()),
    );
    expect(response.status).toBe(500);
    expect(errors).toEqual(['Error: handler failed']);
  });
});
