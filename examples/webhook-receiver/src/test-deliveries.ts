/**
 * Test helpers: realistic signed deliveries, sent over real HTTP. Not exported by the package.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type WebhookEvent, webhookEventSchema } from '@svc/protocol';
import { signWebhook } from '@svc/webhook-verify';

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A fresh protocol identifier: the prefix and a ULID (time, then randomness). */
export function createId(prefix: 'evt' | 'dlv'): string {
  let time = Date.now();
  let head = '';
  for (let index = 0; index < 10; index += 1) {
    head = crockford.charAt(time % 32) + head;
    time = Math.floor(time / 32);
  }
  const tail = Array.from(randomBytes(16), (byte) => crockford.charAt(byte % 32)).join('');
  return `${prefix}_${head}${tail}`;
}

/** A secret shaped like the ones the service issues. */
export function createSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

// The cluster.created envelope of @svc/protocol's conformance fixtures.
const clusterCreated = JSON.parse(
  readFileSync(
    createRequire(import.meta.url).resolve('@svc/protocol/fixtures/valid/WebhookEvent/cluster-created.json'),
    'utf8',
  ),
);

/** A `cluster.created` event with a fresh id, checked against the protocol's schema. */
export function createEvent(overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  return webhookEventSchema.parse({
    ...clusterCreated,
    id: createId('evt'),
    createdAt: new Date().toISOString(),
    ...overrides,
  });
}

export interface DeliverOptions {
  /** The body sent (default: a fresh `createEvent()`, serialised). */
  body?: string;
  /** The body signed, when it differs from the one sent (a tampered delivery). */
  signedBody?: string;
  secrets: string | string[];
  /** Unix seconds (default now). */
  timestamp?: number;
  /** `false` leaves out `X-Service-Signature`. */
  sign?: boolean;
  eventId?: string;
  deliveryId?: string;
  attempt?: number;
  signal?: AbortSignal;
}

export interface Sent {
  body: string;
  signature: string | undefined;
  eventId: string;
  deliveryId: string;
}

/** The request the service would send for one attempt of a delivery, without sending it. */
export async function signDelivery(options: DeliverOptions): Promise<{ sent: Sent; init: RequestInit }> {
  const body = options.body ?? JSON.stringify(createEvent());
  const signature =
    options.sign === false
      ? undefined
      : await signWebhook(options.signedBody ?? body, options.secrets, {
          timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
        });
  const eventId = options.eventId ?? (JSON.parse(body) as { id: string }).id;
  const deliveryId = options.deliveryId ?? createId('dlv');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-service-event-id': eventId,
    'x-service-delivery-id': deliveryId,
    'x-service-attempt': String(options.attempt ?? 1),
  };
  if (signature !== undefined) headers['x-service-signature'] = signature;
  return {
    sent: { body, signature, eventId, deliveryId },
    init: { method: 'POST', headers, body, redirect: 'manual', signal: options.signal ?? null },
  };
}

/** Sends one attempt of a delivery to `url`. */
export async function deliver(
  url: string,
  options: DeliverOptions,
): Promise<{ response: Response; sent: Sent }> {
  const { sent, init } = await signDelivery(options);
  return { response: await fetch(url, init), sent };
}
