/**
 * Writes `vectors/detectors-v1.json` from the current implementation:
 * `pnpm --filter @svc/detectors run build:vectors`.
 */
import { writeFileSync } from 'node:fs';
import { buildDetectorVectors, serializeDetectorVectors } from './detector-vectors.ts';

const target = new URL('../vectors/detectors-v1.json', import.meta.url);
const file = buildDetectorVectors();
writeFileSync(target, serializeDetectorVectors(file));
console.log(`wrote ${file.cases.length} cases to ${target.pathname}`);
