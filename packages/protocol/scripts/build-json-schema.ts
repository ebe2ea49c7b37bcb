/**
 * Writes `schema/protocol-v1.json`, the JSON Schema of every protocol v1 wire format, from the zod
 * schemas. Run with `pnpm --filter @svc/protocol run build:schema`; `src/json-schema.test.ts`
 * fails when the committed file differs from a fresh generation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createProtocolJsonSchema } from '../src/json-schema.ts';

const target = new URL('../schema/protocol-v1.json', import.meta.url);
mkdirSync(new URL('.', target), { recursive: true });
writeFileSync(target, `${JSON.stringify(createProtocolJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
