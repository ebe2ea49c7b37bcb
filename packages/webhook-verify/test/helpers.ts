/** Shared by the adapter tests: a secret, an event, a signed delivery and a real HTTP listener. */
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '../src/index.ts';

export const SECRET = 'whsec_adapterTestSecret0123456789abcdef';

export const EVENT = {
  id: 'evt_01KAJBCH80ZPWJ3XE3230KFA1Z',
  type: 'notification.test',
  version: '2026-11-01',
  createdAt: '2025-11-21T04:41:00Z',
  orgId: 'org_01KAJBCH808WMW5DRXRGE3RMW4',
  projectId: 'proj_01KAJBCH807W2TEEGMVMRKKEVW',
  data: { title: 'Test notification', summary: 'A test.', severity: 'info', counts: {}, links: {} },
} as const;

export const BODY = JSON.stringify(EVENT);

/** The request init of a signed delivery (as the service sends it). */
export async function delivery(
  body: string = BODY,
  options: { secret?: string; tamper?: boolean } = {},
): Promise<RequestInit & { headers: Record<string, string> }> {
  const signature = await signWebhook(body, options.secret ?? SECRET);
  return {
    method: 'POST',
    body: options.tamper === true ? body.replace('A test.', 'A test!') : body,
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signature,
      'x-service-event-id': EVENT.id,
      'x-service-delivery-id': 'dlv_01KAJBCH80ZPWJ3XE3230KFA1Z',
      'x-service-attempt': '1',
    },
  };
}

/** A padded event body of about `bytes` bytes (still a valid event). */
export function largeBody(bytes: number): string {
  return JSON.stringify({ ...EVENT, data: { ...EVENT.data, summary: 'x'.repeat(bytes) } });
}

/** Listens on 127.0.0.1 on a free port; resolves to the base URL. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

/**
 * POSTs a body in 256-byte chunks without Content-Length (chunked transfer encoding), with
 * node:http, which writes every chunk before reading the answer (a server that answers 413 and
 * closes early cannot turn the answer into a write error).
 */
export function sendChunked(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    for (let offset = 0; offset < body.length; offset += 256) request.write(body.slice(offset, offset + 256));
    request.end();
  });
}
