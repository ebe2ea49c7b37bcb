/**
 * Test support: the zod schema and a compiled ajv (JSON Schema draft 2020-12) validator for each
 * named wire format, plus the published fixtures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import type { z } from 'zod';
import {
  callEventSchema,
  callSampleSchema,
  chunkSchema,
  errorBodySchema,
  PROTOCOL_JSON_SCHEMA_ID,
  sessionEventSchema,
  sessionMetaSchema,
  trackSampleSchema,
  webhookEventSchema,
} from '../src/index.ts';

export const zodSchemas: Record<string, z.ZodType> = {
  Chunk: chunkSchema,
  SessionMeta: sessionMetaSchema,
  SessionEvent: sessionEventSchema,
  CallSample: callSampleSchema,
  TrackSample: trackSampleSchema,
  CallEvent: callEventSchema,
  WebhookEvent: webhookEventSchema,
  ErrorBody: errorBodySchema,
};

export const committedJsonSchema = JSON.parse(
  readFileSync(new URL('../schema/protocol-v1.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
addFormats(ajv);
ajv.addSchema(committedJsonSchema);

/** The ajv validator of a `$defs` entry of the committed JSON Schema. */
export function jsonSchemaValidator(name: string) {
  const validate = ajv.getSchema(`${PROTOCOL_JSON_SCHEMA_ID}#/$defs/${name}`);
  if (validate === undefined) throw new Error(`No $defs/${name} in schema/protocol-v1.json`);
  return validate;
}

export interface CatalogueEntry {
  name: string;
  reason: string;
  schema: string;
  path: Array<string | number>;
  value: unknown;
  skipped?: Array<{ index: number; type: string }>;
  /** Tolerated chunks only: the optional meta fields `parseChunk` drops (none when absent). */
  dropped?: Array<{ path: string; reason: string }>;
}

const fixtures = new URL('../fixtures/', import.meta.url);

function readJson(url: URL): unknown {
  return JSON.parse(readFileSync(url, 'utf8'));
}

/** Every entry of every catalogue file in `fixtures/<kind>/`. */
export function readCatalogue(kind: 'invalid' | 'tolerated'): CatalogueEntry[] {
  const directory = new URL(`${kind}/`, fixtures);
  return readdirSync(directory)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .flatMap((file) => readJson(new URL(file, directory)) as CatalogueEntry[]);
}

/** Every valid fixture: `fixtures/valid/<schema name>/<name>.json`. */
export function readValidFixtures(): Array<{ schema: string; name: string; value: unknown }> {
  const directory = new URL('valid/', fixtures);
  return readdirSync(directory)
    .sort()
    .flatMap((schema) =>
      readdirSync(new URL(`${schema}/`, directory))
        .filter((file) => file.endsWith('.json'))
        .sort()
        .map((file) => ({
          schema,
          name: `${schema}/${file}`,
          value: readJson(new URL(`${schema}/${file}`, directory)),
        })),
    );
}

/** `path` as a JSON Pointer (ajv's `instancePath`). */
export function toJsonPointer(path: ReadonlyArray<string | number>): string {
  return path.map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}
