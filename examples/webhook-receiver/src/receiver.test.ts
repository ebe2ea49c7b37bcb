import { webhookEventSchema } from '@svc/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ReceiverOptions,
  startFetchReceiver,
  startNodeReceiver,
  type WebhookReceiver,
} from './index.ts';
import { createEvent, createSecret, deliver, signDelivery } from './test-deliveries.ts';

const receivers = [
  { name: 'node:http', startReceiver: startNodeReceiver },
  { name: 'fetch adapter', startReceiver: startFetchReceiver },
];

describe.each(receivers)('$name receiver', ({ startReceiver }) => {
  const secret = createSecret();
  const open: WebhookReceiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((receiver) => receiver.close()));
  });
  async function start(options: Partial<ReceiverOptions> = {}): Promise<WebhookReceiver> {
    const receiver = await startReceiver({ secrets: secret, ...options });
    open.push(receiver);
    return receiver;
  }

  it('records a verified delivery with its headers and answers 200', async () => {
    const receiver = await start();
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
    const event = createEvent();
    const before = Date.now();
    const { response, sent } = await deliver(receiver.url, {
      body: JSON.stringify(event),
      secrets: secret,
      attempt: 3,
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(receiver.deliveries).toHaveLength(1);
    const [delivery] = receiver.deliveries;
    expect(delivery).toEqual({
      event,
      rawBody: sent.body,
      eventId: event.id,
      deliveryId: sent.deliveryId,
      attempt: 3,
      signature: sent.signature,
      duplicate: false,
      receivedAt: expect.any(Number),
    });
    expect(delivery?.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(delivery?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(delivery?.receivedAt).toBeLessThanOrEqual(Date.now());
    // What arrived is still a protocol v1 webhook event.
    expect(webhookEventSchema.parse(delivery?.event)).toEqual(event);
    expect(receiver.rejected).toEqual([]);
  });

  it.each([
    { name: 'a wrong secret', code: 'no_matching_signature', options: { secrets: createSecret() } },
    {
      name: 'a timestamp older than 300 s',
      code: 'timestamp_too_old',
      options: { timestamp: Math.floor(Date.now() / 1000) - 301 },
    },
    {
      name: 'a tampered body',
      code: 'no_matching_signature',
      options: {
        signedBody: JSON.stringify(createEvent({ data: { ...createEvent().data, severity: 'low' } })),
      },
    },
    { name: 'no X-Service-Signature', code: 'missing_header', options: { sign: false } },
  ])('answers $name with 400 and records it in rejected', async ({ code, options }) => {
    const receiver = await start();
    const { response, sent } = await deliver(receiver.url, { secrets: secret, ...options });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.any(String), code });
    expect(receiver.deliveries).toEqual([]);
    expect(receiver.rejected).toEqual([
      {
        code,
        message: expect.any(String),
        ...(sent.signature === undefined ? {} : { signature: sent.signature }),
        deliveryId: sent.deliveryId,
        receivedAt: expect.any(Number),
      },
    ]);
  });

  it('verifies a delivery signed with two secrets (a rotation) when it knows one of them', async () => {
    const receiver = await start();
    const newSecret = createSecret();
    const { response, sent } = await deliver(receiver.url, { secrets: [newSecret, secret] });

    expect(response.status).toBe(200);
    expect(sent.signature?.match(/v1=/g)).toHaveLength(2);
    expect(receiver.deliveries.map((delivery) => delivery.signature)).toEqual([sent.signature]);
  });

  it('verifies with the secrets given to setSecrets from then on', async () => {
    const receiver = await start();
    const newSecret = createSecret();
    expect((await deliver(receiver.url, { secrets: newSecret })).response.status).toBe(400);

    receiver.setSecrets([newSecret]);
    expect((await deliver(receiver.url, { secrets: newSecret })).response.status).toBe(200);
    expect((await deliver(receiver.url, { secrets: secret })).response.status).toBe(400);

    receiver.setSecrets([newSecret, secret]);
    expect((await deliver(receiver.url, { secrets: secret })).response.status).toBe(200);
    expect(receiver.deliveries).toHaveLength(2);
    expect(receiver.rejected.map((request) => request.code)).toEqual([
      'no_matching_signature',
      'no_matching_signature',
    ]);
    expect(() => receiver.setSecrets([])).toThrow(TypeError);
  });

  it('refuses to start without a secret', async () => {
    await expect(startReceiver({ secrets: '' })).rejects.toThrow(TypeError);
  });

  it('flags a second delivery of the same event as a duplicate', async () => {
    const receiver = await start();
    const body = JSON.stringify(createEvent());
    await deliver(receiver.url, { body, secrets: secret, attempt: 1 });
    await deliver(receiver.url, { body, secrets: secret, attempt: 2 });
    await deliver(receiver.url, { secrets: secret });

    expect(receiver.deliveries.map(({ attempt, duplicate }) => ({ attempt, duplicate }))).toEqual([
      { attempt: 1, duplicate: false },
      { attempt: 2, duplicate: true },
      { attempt: 1, duplicate: false },
    ]);
  });

  it.each<{ status: number; headers: Record<string, string>; body: string }>([
    { status: 500, headers: { 'content-type': 'text/plain' }, body: 'database is down' },
    { status: 429, headers: { 'retry-after': '30' }, body: '' },
    { status: 302, headers: { location: 'https://example.com/elsewhere' }, body: 'moved' },
    { status: 202, headers: { 'x-queued': 'yes' }, body: '{"queued":true}' },
  ])('answers $status as respond says, and still records the delivery', async (answer) => {
    const receiver = await start({ respond: async () => answer });
    const { response, sent } = await deliver(receiver.url, { secrets: secret });

    expect(response.status).toBe(answer.status);
    for (const [name, value] of Object.entries(answer.headers))
      expect(response.headers.get(name)).toBe(value);
    expect(await response.text()).toBe(answer.body);
    expect(receiver.deliveries.map((delivery) => delivery.deliveryId)).toEqual([sent.deliveryId]);
  });

  it('hands respond the recorded delivery, and goes back to 200 after setResponder(undefined)', async () => {
    const receiver = await start();
    receiver.setResponder((delivery) => ({ status: delivery.attempt < 2 ? 503 : 200 }));
    expect((await deliver(receiver.url, { secrets: secret, attempt: 1 })).response.status).toBe(503);
    expect((await deliver(receiver.url, { secrets: secret, attempt: 2 })).response.status).toBe(200);

    receiver.setResponder(() => {
      throw new Error('respond failed');
    });
    const failed = await deliver(receiver.url, { secrets: secret });
    expect(failed.response.status).toBe(500);
    expect(await failed.response.json()).toEqual({ error: 'Internal Server Error', code: 'internal_error' });

    receiver.setResponder(undefined);
    const { response } = await deliver(receiver.url, { secrets: secret, attempt: 1 });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    expect(receiver.deliveries).toHaveLength(4);
  });

  it("closes the connection without an answer when respond says 'close'", async () => {
    const receiver = await start({ respond: () => 'close' });
    const attempt = deliver(receiver.url, { secrets: secret });

    await expect(attempt).rejects.toThrow(TypeError); // fetch failed: the socket closed
    expect(receiver.deliveries).toHaveLength(1);
  });

  it("never answers when respond says 'hang': the client times out, and close() still resolves", async () => {
    const receiver = await start({ respond: () => 'hang' });
    const attempt = deliver(receiver.url, { secrets: secret, signal: AbortSignal.timeout(300) });

    await expect(attempt).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(receiver.deliveries).toHaveLength(1);
    await receiver.close();
  });

  it('ends a request that is still hanging on close()', async () => {
    const receiver = await start({ respond: () => 'hang' });
    const attempt = deliver(receiver.url, { secrets: secret });
    attempt.catch(() => undefined);
    await receiver.waitFor(() => true, 2000);

    await receiver.close();
    await expect(attempt).rejects.toThrow(TypeError); // fetch failed: the socket closed
  });

  it('answers a body over the limit with 413 and records it in rejected', async () => {
    const receiver = await start({ limit: 1024 });
    const { response, sent } = await deliver(receiver.url, {
      body: JSON.stringify(createEvent({ data: { ...createEvent().data, summary: 'x'.repeat(2000) } })),
      secrets: secret,
    });

    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: expect.any(String), code: 'payload_too_large' });
    expect(receiver.rejected).toMatchObject([{ code: 'payload_too_large', deliveryId: sent.deliveryId }]);
    expect(receiver.deliveries).toEqual([]);
  });

  it('answers a streamed body over the limit with 413 as soon as it passes the limit', async () => {
    const receiver = await start({ limit: 1024 });
    const { init } = await signDelivery({ secrets: secret });
    // 256 KiB in 64 KiB chunks and no Content-Length: the receiver finds out while reading, and
    // answers while the rest is still on its way.
    const chunk = new TextEncoder().encode(' '.repeat(65_536));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 4; index += 1) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(receiver.url, { ...init, body, duplex: 'half' } as RequestInit);

    expect(response.status).toBe(413);
    expect(receiver.rejected.map((request) => request.code)).toEqual(['payload_too_large']);
  });

  it('answers other paths 404 and other methods 405, recording neither', async () => {
    const receiver = await start();
    const { init } = await signDelivery({ secrets: secret });
    const elsewhere = await fetch(new URL('/other', receiver.url), init);
    const get = await fetch(receiver.url);

    expect(elsewhere.status).toBe(404);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(receiver.deliveries).toEqual([]);
    expect(receiver.rejected).toEqual([]);
  });

  it('serves a custom path', async () => {
    const receiver = await start({ path: '/hooks/svc' });
    expect(new URL(receiver.url).pathname).toBe('/hooks/svc');
    expect((await deliver(receiver.url, { secrets: secret })).response.status).toBe(200);
  });

  it('waitFor resolves with a delivery that arrives later, or that already arrived', async () => {
    const receiver = await start();
    const later = createEvent();
    const waiting = receiver.waitFor((delivery) => delivery.event.id === later.id, 5000);
    await deliver(receiver.url, { secrets: secret });
    await deliver(receiver.url, { body: JSON.stringify(later), secrets: secret });

    expect((await waiting).event).toEqual(later);
    expect((await receiver.waitFor((delivery) => delivery.event.id === later.id, 0)).event).toEqual(later);
  });

  it('waitFor rejects after its timeout, listing what did arrive', async () => {
    const receiver = await start();
    const { sent } = await deliver(receiver.url, { secrets: secret, attempt: 2 });
    await deliver(receiver.url, { secrets: createSecret() });

    const waiting = receiver.waitFor((delivery) => delivery.event.type === 'notification.test', 100);
    await expect(waiting).rejects.toThrow(/no delivery matched within 100 ms/);
    const message = await waiting.catch((error: Error) => error.message);
    expect(message).toContain(`delivered ${sent.eventId} cluster.created attempt 2 ${sent.deliveryId}`);
    expect(message).toContain('rejected no_matching_signature');
  });

  it('waitFor rejects when the receiver closes first', async () => {
    const receiver = await start();
    const waiting = receiver.waitFor(() => true, 5000);
    await receiver.close();

    await expect(waiting).rejects.toThrow(/receiver closed first/);
    await expect(receiver.waitFor(() => true)).rejects.toThrow(/closed/);
  });
});
