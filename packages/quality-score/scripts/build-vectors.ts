/**
 * Writes `vectors/score-v1.json` from the current implementation:
 * `pnpm --filter @svc/quality-score run build:vectors`.
 */
import { writeFileSync } from 'node:fs';
import { buildScoreVectors, serializeScoreVectors } from './score-vectors.ts';

const target = new URL('../vectors/score-v1.json', import.meta.url);
const file = buildScoreVectors();
writeFileSync(target, serializeScoreVectors(file));
console.log(`wrote ${file.cases.length} cases to ${target.pathname}`);
