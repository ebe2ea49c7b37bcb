import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDestinationPolicy, parseAllowedHosts } from './destination-policy.ts';
import { createPolicyFetch, DESTINATION_REFUSED } from './policy-fetch.ts';

// The policy fetch against a real HTTP server on 127.0.0.1: what it sends and answers, and where
// it refuses to connect (an IP literal before connecting, a name on what it resolves to).

describe('createPolicyFetch', () => {
  let server: Server;
  let port: number;
  const seen: Array<{ method: string; url: string; body: string; length: string | undefined }> = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({
          method: request.method ?? '',
          url: request.url ?? '',
          body: Buffer.concat(chunks).toString('utf8'),
          length: request.headers['content-length'],
        });
        if (request.url === '/empty') {
          response.writeHead(204).end();
        } else if (request.url === '/big') {
          response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(4096));
        } else if (request.url === '/moved') {
          response.writeHead(302, { location: '/elsewhere' }).end();
        } else {
          response.setHeader('set-cookie', ['a=1', 'b=2']);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const allowing = createPolicyFetch(createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed), {
    maxBytes: 1024,
  });

  it('sends the method, headers and body, and answers a Response with status, headers and body', async () => {
    const response = await allowing(`http://127.0.0.1:${port}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'abc' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(await response.json()).toEqual({ ok: true });
    expect(seen.at(-1)).toEqual({
      method: 'POST',
      url: '/token',
      body: 'grant_type=authorization_code&code=abc',
      length: '38',
    });
    const bytes = await allowing(`http://127.0.0.1:${port}/raw`, {
      method: 'PUT',
      body: new Uint8Array([0, 104, 105, 0]).subarray(1, 3),
    });
    expect(bytes.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ method: 'PUT', body: 'hi', length: '2' });
  });

  it('follows no redirect, answers a 204 without a body, and refuses a body over its limit', async () => {
    const moved = await allowing(`http://127.0.0.1:${port}/moved`);
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('/elsewhere');
    const empty = await allowing(`http://127.0.0.1:${port}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    await expect(allowing(`http://127.0.0.1:${port}/big`)).rejects.toThrow('larger than 1024 bytes');
  });

  it('refuses a loopback address before connecting, and a name on the address it resolves to when connecting', async () => {
    const strict = createPolicyFetch(createDestinationPolicy());
    const before = seen.length;
    await expect(strict(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({
      code: DESTINATION_REFUSED,
      message: expect.stringMatching(new RegExp(`^127\\.0\\.0\\.1:${port} is not allowed: .*loopback`)),
    });
    // A name is judged in the connection's own lookup: whatever it resolved to at an earlier check,
    // the address connected to is the one judged (DNS rebinding gets nowhere).
    await expect(strict(`http://localhost:${port}/`)).rejects.toMatchObject({
      code: DESTINATION_REFUSED,
      message: expect.stringMatching(new RegExp(`^localhost:${port} is not allowed: .*loopback`)),
    });
    expect(seen.length).toBe(before);
    await expect(strict('file:///etc/passwd')).rejects.toThrow('Only http and https are fetched');
  });

  it('gives up when its signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('timed out'));
    await expect(allowing(`http://127.0.0.1:${port}/`, { signal: controller.signal })).rejects.toThrow();
  });
});
