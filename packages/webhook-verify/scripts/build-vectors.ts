/**
 * Writes `vectors/signature-v1.json` from `scripts/signature-vectors.ts`:
 * `pnpm --filter @svc/webhook-verify run build:vectors`.
 */
import { writeFileSync } from 'node:fs';
import { buildSignatureVectors, serializeSignatureVectors } from './signature-vectors.ts';

const target = new URL('../vectors/signature-v1.json', import.meta.url);
const file = buildSignatureVectors();
writeFileSync(target, serializeSignatureVectors(file));
console.log(`wrote ${file.cases.length} verify and ${file.sign.length} sign cases to ${target.pathname}`);
