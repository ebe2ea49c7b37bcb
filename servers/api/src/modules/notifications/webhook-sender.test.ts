import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDestinationPolicy,
  type DestinationPolicy,
  parseAllowedHosts,
} from '../../platform/http/destination-policy.ts';
import { parseRetryAfter, postWebhook, type WebhookPost, type WebhookResult } from './webhook-sender.ts';

interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

interface Receiver {
  /** `http://<host>:<port>` */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  connections: number;
}

const receivers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(
    receivers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A real HTTP server that records every connection and request, then answers with `answer`. */
async function startReceiver(
  answer: (request: http.IncomingMessage, response: http.ServerResponse) => void,
  host = '127.0.0.1',
): Promise<Receiver> {
  const server = http.createServer();
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    requests: [],
    connections: 0,
  };
  server.on('connection', () => {
    receiver.connections += 1;
  });
  server.on('request', (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.requests.push({
        method: request.method,
        url: request.url,
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks),
      });
      // Writes after the sender hung up fail; that is expected here.
      response.on('error', () => {});
      answer(request, response);
    });
  });
  return receiver;
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const allowLocal = createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed);
const defaultPolicy = createDestinationPolicy();
const secretBody = '{"type":"cluster.new","data":{"title":"SECRET-PAYLOAD"}}';

function post(url: string, overrides: Partial<WebhookPost> = {}): Promise<WebhookResult> {
  return postWebhook({
    url,
    body: secretBody,
    headers: { 'Content-Type': 'application/json' },
    timeoutMs: 2_000,
    policy: allowLocal,
    ...overrides,
  });
}

describe('postWebhook to an allowed receiver', () => {
  it('delivers the headers and the body byte-exact, as a POST', async () => {
    const receiver = await startReceiver((_request, response) => response.end('ok'));
    const body = '{"id":"evt_01J","title":"héllo ✓ 🚀","n":1}';
    const result = await postWebhook({
      url: `${receiver.origin}/hooks/in?channel=ch_1`,
      body,
      headers: {
        'Content-Type': 'application/json',
        'X-Service-Signature': 't=1763700000,v1=abc123',
        'X-Service-Event-Id': 'evt_01J',
        'X-Service-Delivery-Id': 'dlv_01J',
        'X-Service-Attempt': '2',
        'content-length': '1',
        'user-agent': 'spoofed',
      },
      timeoutMs: 2_000,
      policy: allowLocal,
    });
    expect(result).toMatchObject({ outcome: 'delivered', status: 200, responseBody: 'ok' });
    expect(result.error).toBeUndefined();
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/hooks/in?channel=ch_1');
    expect(request?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-signature': 't=1763700000,v1=abc123',
      'x-service-event-id': 'evt_01J',
      'x-service-delivery-id': 'dlv_01J',
      'x-service-attempt': '2',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'svc-webhooks/1.0',
    });
    // Sent once each, with the names as given.
    const names = request?.rawHeaders.filter((_value, index) => index % 2 === 0) ?? [];
    expect(names.filter((name) => /^(content-length|user-agent)$/i.test(name))).toEqual([
      'Content-Length',
      'User-Agent',
    ]);
    expect(names).toContain('X-Service-Signature');
  });

  it('keeps the first 2 048 bytes of a 1 MB answer and stops reading', async () => {
    const answer = Buffer.alloc(1024 * 1024);
    for (let index = 0; index < answer.length; index += 1) answer[index] = 97 + (index % 26);
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end(answer);
    });
    const result = await post(receiver.origin);
    expect(result.outcome).toBe('delivered');
    expect(result.responseBody).toBe(answer.subarray(0, 2048).toString('utf8'));
  });

  it('decodes the kept bytes as UTF-8, lossily where the cut splits a character', async () => {
    // 2 047 ASCII bytes then a 3-byte character: 1 byte of it falls inside the limit.
    const receiver = await startReceiver((_request, response) => response.end(`${'a'.repeat(2047)}✓✓`));
    const result = await post(receiver.origin);
    expect(result.responseBody).toBe(`${'a'.repeat(2047)}\uFFFD`);
  });

  it('replaces NUL, which PostgreSQL text cannot hold', async () => {
    const receiver = await startReceiver((_request, response) =>
      response.end(Buffer.from([0x6f, 0x00, 0x6b])),
    );
    const result = await post(receiver.origin);
    expect(result.responseBody).toBe('o\uFFFDk');
  });

  it('fails on a 500, keeping its status and answer', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(500, { 'Retry-After': '30' });
      response.end('boom');
    });
    const result = await post(receiver.origin);
    expect(result).toMatchObject({ outcome: 'failed', status: 500, error: 'HTTP 500', responseBody: 'boom' });
    // Retry-After counts on 429 and 503 only.
    expect(result.retryAfterMs).toBeUndefined();
  });

  it('fails on a 302 and does not follow it', async () => {
    const target = await startReceiver((_request, response) => response.end('should not be reached'));
    const redirecting = await startReceiver((_request, response) => {
      response.writeHead(302, { Location: `${target.origin}/elsewhere` });
      response.end();
    });
    const result = await post(redirecting.origin);
    expect(result).toMatchObject({ outcome: 'failed', status: 302, error: 'redirect 302 not followed' });
    expect(redirecting.requests).toHaveLength(1);
    expect(target.connections).toBe(0);
    expect(target.requests).toHaveLength(0);
  });

  it('reads Retry-After seconds on a 429', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(429, { 'Retry-After': '120' });
      response.end();
    });
    const result = await post(receiver.origin);
    expect(result).toMatchObject({
      outcome: 'failed',
      status: 429,
      error: 'HTTP 429',
      retryAfterMs: 120_000,
    });
  });

  it('reads a Retry-After HTTP date on a 503', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(503, { 'Retry-After': new Date(Date.now() + 90_000).toUTCString() });
      response.end();
    });
    const result = await post(receiver.origin);
    expect(result).toMatchObject({ outcome: 'failed', status: 503, error: 'HTTP 503' });
    // toUTCString drops the milliseconds, and a little time passes before the sender reads it.
    expect(result.retryAfterMs).toBeGreaterThan(85_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(90_000);
  });

  it('fails with the timeout when the receiver never answers', async () => {
    const receiver = await startReceiver(() => {});
    const result = await post(receiver.origin, { timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'failed', error: 'timed out after 300 ms' });
    expect(result.status).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(295);
    expect(result.durationMs).toBeLessThan(1_500);
    expect(receiver.requests).toHaveLength(1);
  });

  it('counts 2xx headers that arrived in time as delivered while the body hangs', async () => {
    const receiver = await startReceiver((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.write('partial');
    });
    const result = await post(receiver.origin, { timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'delivered', status: 200, responseBody: 'partial' });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(295);
    expect(result.durationMs).toBeLessThan(1_500);
  });

  it('fails when the receiver destroys the connection', async () => {
    const receiver = await startReceiver((request) => request.socket.destroy());
    const result = await post(receiver.origin);
    expect(result).toMatchObject({
      outcome: 'failed',
      error: 'connection closed before a response (ECONNRESET)',
    });
    expect(result.status).toBeUndefined();
  });

  it('fails when the connection is refused', async () => {
    const port = await closedPort();
    const result = await post(`http://127.0.0.1:${port}/`);
    expect(result).toMatchObject({ outcome: 'failed', error: 'connection refused (ECONNREFUSED)' });
  });

  it('asks the policy about the address a name resolved to, at connect time', async () => {
    const receiver = await startReceiver((_request, response) => response.end());
    const asked: Array<[string, string, number]> = [];
    const recording: DestinationPolicy = {
      refusal(hostname, address, family) {
        asked.push([hostname, address, family]);
        return undefined;
      },
    };
    const result = await post(`http://localhost:${receiver.port}/`, { policy: recording });
    expect(result.outcome).toBe('delivered');
    expect(asked).toContainEqual(['localhost', '127.0.0.1', 4]);
  });

  it('connects to an allowed hostname that resolves to a refused address', async () => {
    const receiver = await startReceiver((_request, response) => response.end());
    const policy = createDestinationPolicy(parseAllowedHosts('LocalHost').allowed);
    const result = await post(`http://localhost:${receiver.port}/`, { policy });
    expect(result.outcome).toBe('delivered');
    expect(receiver.requests).toHaveLength(1);
  });

  it('never puts the body sent in an error', async () => {
    const resetting = await startReceiver((request) => request.socket.destroy());
    const silent = await startReceiver(() => {});
    const failing = await startReceiver((_request, response) => {
      response.writeHead(500);
      response.end();
    });
    const results = await Promise.all([
      post(resetting.origin),
      post(silent.origin, { timeoutMs: 300 }),
      post(failing.origin),
      post(`http://127.0.0.1:${await closedPort()}/`),
      post(`http://127.0.0.1:${resetting.port}/`, { headers: { 'X-Bad': 'a\r\nb' } }),
    ]);
    for (const result of results) {
      expect(result.outcome).toBe('failed');
      expect(result.error).toBeTruthy();
      expect(result.error).not.toContain('SECRET-PAYLOAD');
    }
  });
});

describe('postWebhook under the default policy', () => {
  it.each([
    [
      '127.0.0.1',
      (port: number) => `http://127.0.0.1:${port}/hook`,
      /^127\.0\.0\.1 is a loopback address; set/,
    ],
    [
      'localhost',
      (port: number) => `http://localhost:${port}/hook`,
      /^127\.0\.0\.1 is a loopback address; set/,
    ],
    [
      'an IPv4-mapped literal',
      (port: number) => `http://[::ffff:127.0.0.1]:${port}/`,
      /^::ffff:7f00:1 \(127\.0\.0\.1\) is a loopback/,
    ],
    ['a decimal literal', (port: number) => `http://2130706433:${port}/`, /^127\.0\.0\.1 is a loopback/],
  ])('refuses %s before any byte is sent', async (_name, url, error) => {
    const receiver = await startReceiver((_request, response) => response.end());
    const result = await post(url(receiver.port), { policy: defaultPolicy });
    expect(result.outcome).toBe('refused');
    expect(result.error).toMatch(error);
    expect(result.status).toBeUndefined();
    expect(receiver.connections).toBe(0);
  });

  it('refuses [::1] before any byte is sent', async () => {
    const receiver = await startReceiver((_request, response) => response.end(), '::1');
    const result = await post(`${receiver.origin}/hook`, { policy: defaultPolicy });
    expect(result).toMatchObject({
      outcome: 'refused',
      error: '::1 is a loopback address; set SVC_WEBHOOK_ALLOWED_HOSTS to allow it',
    });
    expect(receiver.connections).toBe(0);
  });

  it('refuses the cloud metadata address at once', async () => {
    const result = await post('http://169.254.169.254/latest/meta-data/', { policy: defaultPolicy });
    expect(result).toMatchObject({
      outcome: 'refused',
      error: '169.254.169.254 is a cloud metadata address; set SVC_WEBHOOK_ALLOWED_HOSTS to allow it',
    });
    expect(result.durationMs).toBeLessThan(100);
  });

  it.each([
    ['ftp://127.0.0.1/hook', 'only http and https URLs can receive webhooks, not ftp:'],
    ['file:///etc/passwd', 'only http and https URLs can receive webhooks, not file:'],
    ['not a url', 'not a valid URL'],
  ])('refuses %s', async (url, error) => {
    expect(await post(url)).toMatchObject({ outcome: 'refused', error });
  });

  it('refuses a timeout that is not a positive number of milliseconds', async () => {
    await expect(post('http://127.0.0.1/', { timeoutMs: 0 })).rejects.toThrow(RangeError);
    await expect(post('http://127.0.0.1/', { timeoutMs: Number.NaN })).rejects.toThrow(RangeError);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('Wed, 21 Oct 2026 07:27:00 GMT');
  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['86401', 86_400_000],
    ['99999999999999999999', 86_400_000],
    ['Wed, 21 Oct 2026 07:28:00 GMT', 60_000],
    ['Wednesday, 21-Oct-26 07:28:00 GMT', 60_000],
    ['Wed Oct 21 07:28:00 2026', 60_000],
    ['Thu Oct  1 07:27:00 2026', 0],
    ['Sat Oct 31 07:27:00 2026', 86_400_000],
    ['Wed, 21 Oct 2026 07:28:00', undefined],
    ['Wed Oct 21 2026', undefined],
    ['Wed, 21 Oct 2026 07:00:00 GMT', 0],
    ['Fri, 21 Oct 2050 07:28:00 GMT', 86_400_000],
    ['-5', undefined],
    ['1.5', undefined],
    ['2026-10-21T07:28:00Z', undefined],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('reads %j as %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
