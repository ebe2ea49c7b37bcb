import { readFileSync } from 'node:fs';
import { callEventSchema, callSampleSchema } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import {
  buildDetectorVectors,
  serializeDetectorVectors,
  type VectorFile,
} from '../scripts/detector-vectors.ts';
import { createDetector, DETECTOR_KINDS, detect } from './index.ts';

const committedText = readFileSync(new URL('../vectors/detectors-v1.json', import.meta.url), 'utf8');
const committed = JSON.parse(committedText) as VectorFile;

describe('vectors/detectors-v1.json', () => {
  it('is what the generator produces today', () => {
    expect(
      committedText === serializeDetectorVectors(buildDetectorVectors()),
      'vectors/detectors-v1.json is stale: run `pnpm --filter @svc/detectors run build:vectors` and commit the result',
    ).toBe(true);
  });

  it('has version 1, enough cases, and a firing case for every kind plus near misses', () => {
    expect(committed.version).toBe(1);
    expect(committed.cases.length).toBeGreaterThanOrEqual(30);
    const fired = new Set(
      committed.cases.flatMap((vector) => vector.expected.map((finding) => finding.kind)),
    );
    expect([...fired].sort()).toEqual([...DETECTOR_KINDS].sort());
    expect(committed.cases.filter((vector) => vector.expected.length === 0).length).toBeGreaterThanOrEqual(
      15,
    );
    expect(committed.cases.some((vector) => vector.options?.thresholds !== undefined)).toBe(true);
    expect(committed.cases.some((vector) => new Set(vector.items.map((item) => item.pc)).size > 2)).toBe(
      true,
    );
  });

  it('every item is valid protocol v1 wire data', () => {
    for (const vector of committed.cases) {
      for (const item of vector.items) {
        const schema = item.type === 'call.sample' ? callSampleSchema : callEventSchema;
        expect(schema.safeParse(item).success, `${vector.name}: ${JSON.stringify(item)}`).toBe(true);
      }
    }
  });

  it.each(committed.cases.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    expect(detect(vector.items, vector.options)).toEqual(vector.expected);
    // The streaming form agrees.
    const detector = createDetector(vector.options);
    for (const item of vector.items.slice().sort((left, right) => left.t - right.t)) detector.push(item);
    detector.advance(
      Math.max(vector.options?.now ?? Number.NEGATIVE_INFINITY, ...vector.items.map((item) => item.t)),
    );
    expect(detector.findings()).toEqual(vector.expected);
  });
});
