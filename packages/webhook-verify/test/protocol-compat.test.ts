/**
 * This package declares the webhook envelope itself (receivers install only it; zero runtime
 * dependencies). This test proves it matches `@svc/protocol`, the source of truth: the type
 * lists are identical, the types are assignable both ways, and every valid webhook fixture of
 * the protocol, signed here, verifies and parses to the same value as the protocol's schema.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as protocol from '@svc/protocol';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CLUSTER_WEBHOOK_EVENT_TYPES,
  type ClusterWebhookEventType,
  isKnownWebhookEventType,
  OTHER_WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_VERSION,
  type WebhookEvent,
  type WebhookEventType,
} from '../src/index.ts';
import { builds } from './builds.ts';

const fixturesDirectory = join(
  dirname(createRequire(import.meta.url).resolve('@svc/protocol/package.json')),
  'fixtures/valid/WebhookEvent',
);
const fixtures = readdirSync(fixturesDirectory)
  .filter((name) => name.endsWith('.json'))
  .map((name) => [name, readFileSync(join(fixturesDirectory, name), 'utf8')] as const);

describe('@svc/protocol compatibility', () => {
  it('has the same event types, in the same order, and the same version', () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual(protocol.WEBHOOK_EVENT_TYPES);
    expect(CLUSTER_WEBHOOK_EVENT_TYPES).toEqual(protocol.CLUSTER_WEBHOOK_EVENT_TYPES);
    expect(OTHER_WEBHOOK_EVENT_TYPES).toEqual(protocol.OTHER_WEBHOOK_EVENT_TYPES);
    expect(WEBHOOK_VERSION).toBe(protocol.WEBHOOK_VERSION);
    for (const type of protocol.WEBHOOK_EVENT_TYPES) expect(isKnownWebhookEventType(type)).toBe(true);
  });

  it('has types assignable both ways with the protocol types', () => {
    expectTypeOf<WebhookEventType>().toEqualTypeOf<protocol.WebhookEventType>();
    expectTypeOf<ClusterWebhookEventType>().toEqualTypeOf<
      (typeof protocol.CLUSTER_WEBHOOK_EVENT_TYPES)[number]
    >();
    expectTypeOf<protocol.WebhookEvent>().toExtend<WebhookEvent>();
    expectTypeOf<WebhookEvent>().toExtend<protocol.WebhookEvent>();
    // Narrowing on `type` gives the cluster data in both.
    const read = (event: WebhookEvent) =>
      event.type === 'cluster.created' ? event.data.cluster.count24h : 0;
    const readProtocol = (event: protocol.WebhookEvent) => read(event);
    expect(readProtocol).toBeTypeOf('function');
  });

  it('has at least one fixture of each data shape', () => {
    const types = fixtures.map(([, text]) => (JSON.parse(text) as { type: string }).type);
    expect(types.some((type) => type.startsWith('cluster.'))).toBe(true);
    expect(types.some((type) => !type.startsWith('cluster.'))).toBe(true);
  });

  describe.each(builds)('%s build', (_name, { signWebhook, verifyWebhook }) => {
    it.each(fixtures)(
      'fixture %s, signed here, verifies and parses like the protocol schema',
      async (_file, text) => {
        const secret = 'whsec_protocolCompat';
        const event = await verifyWebhook(text, await signWebhook(text, secret), secret);
        const parsed = protocol.webhookEventSchema.parse(JSON.parse(text));
        expect(event).toEqual(parsed);
        expect(protocol.webhookEventSchema.parse(event)).toEqual(event);
      },
    );
  });
});
