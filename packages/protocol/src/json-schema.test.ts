import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createProtocolJsonSchema, PROTOCOL_JSON_SCHEMA_ID } from './json-schema.ts';

const committed = readFileSync(new URL('../schema/protocol-v1.json', import.meta.url), 'utf8');

describe('schema/protocol-v1.json', () => {
  it('equals a fresh generation (run `pnpm --filter @svc/protocol run build:schema` to regenerate it)', () => {
    expect(
      committed,
      'schema/protocol-v1.json is stale: run `pnpm --filter @svc/protocol run build:schema`',
    ).toBe(`${JSON.stringify(createProtocolJsonSchema(), null, 2)}\n`);
  });

  it('is a draft 2020-12 document whose root is a Chunk and whose $defs name every wire format', () => {
    const document = createProtocolJsonSchema();
    expect(document).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: PROTOCOL_JSON_SCHEMA_ID,
      $ref: '#/$defs/Chunk',
    });
    expect(Object.keys(document.$defs as object)).toEqual(
      expect.arrayContaining([
        'Chunk',
        'SessionMeta',
        'SessionEvent',
        'UnknownEvent',
        'RrwebEvent',
        'NavEvent',
        'ErrorEvent',
        'CustomEvent',
        'VitalEvent',
        'IdentifyEvent',
        'TriggerEvent',
        'GapEvent',
        'GovernorEvent',
        'CallSample',
        'TrackSample',
        'ConnectionInfo',
        'CallEvent',
        'PeerConnectionCreatedEvent',
        'PeerConnectionClosedEvent',
        'MediaErrorClass',
        'WebhookEvent',
        'ReleaseRegression',
        'VitalsRegression',
        'ErrorBody',
      ]),
    );
  });

  it('carries the rules zod checks in code: meta on seq 0, unknown types exclude known ones', () => {
    const definitions = createProtocolJsonSchema().$defs as Record<string, Record<string, unknown>>;
    expect(definitions.Chunk).toMatchObject({
      additionalProperties: false,
      if: { properties: { seq: { const: 0 } }, required: ['seq'] },
      // biome-ignore lint/suspicious/noThenProperty: the JSON Schema `then` keyword, not a thenable
      then: { required: ['meta'] },
    });
    expect(definitions.UnknownEvent).toMatchObject({
      properties: { type: { not: { enum: expect.arrayContaining(['nav', 'call.sample', 'call.event']) } } },
    });
  });

  it('generates the same text twice (deterministic)', () => {
    expect(JSON.stringify(createProtocolJsonSchema())).toBe(JSON.stringify(createProtocolJsonSchema()));
  });
});
