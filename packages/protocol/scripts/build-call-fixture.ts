/**
 * Writes `fixtures/valid/Chunk/call.json` from the Chromium dumps in
 * `dev-packages/fixtures/getstats` (see scripts/call-fixture.ts for every derivation). Run with
 * `pnpm --filter @svc/protocol run build:call-fixture`; `src/fixtures.test.ts` fails when the
 * committed file differs from a fresh build.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderCallChunk } from './call-fixture.ts';

const target = new URL('../fixtures/valid/Chunk/call.json', import.meta.url);
writeFileSync(target, renderCallChunk());
console.log(`wrote ${fileURLToPath(target)}`);
