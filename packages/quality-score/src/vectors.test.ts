import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  buildScoreVectors,
  serializeScoreVectors,
  type VectorCase,
  type VectorFile,
} from '../scripts/score-vectors.ts';
import { scoreCall, scoreSample, scoreTrack } from './index.ts';

const committedText = readFileSync(new URL('../vectors/score-v1.json', import.meta.url), 'utf8');
const committed = JSON.parse(committedText) as VectorFile;

function run(vector: VectorCase): number | null {
  switch (vector.function) {
    case 'scoreTrack':
      return scoreTrack(vector.input.track, vector.input.windowMs);
    case 'scoreSample':
      return scoreSample(vector.input.sample);
    case 'scoreCall':
      return scoreCall(vector.input.samples);
  }
}

describe('vectors/score-v1.json', () => {
  it('is what the generator produces today', () => {
    expect(
      committedText === serializeScoreVectors(buildScoreVectors()),
      'vectors/score-v1.json is stale: run `pnpm --filter @svc/quality-score run build:vectors` and commit the result',
    ).toBe(true);
  });

  it('has version 1 and enough cases covering every function, null results and every metric', () => {
    expect(committed.version).toBe(1);
    expect(committed.cases.length).toBeGreaterThanOrEqual(40);
    for (const name of ['scoreTrack', 'scoreSample', 'scoreCall']) {
      expect(committed.cases.filter((vector) => vector.function === name).length).toBeGreaterThanOrEqual(8);
      expect(committed.cases.some((vector) => vector.function === name && vector.expected === null)).toBe(
        true,
      );
    }
    const metricsSeen = new Set(
      committed.cases.flatMap((vector) =>
        vector.function === 'scoreTrack' ? Object.keys(vector.input.track) : [],
      ),
    );
    for (const metric of [
      'lossPct',
      'rttMs',
      'jitterMs',
      'jitterBufferMs',
      'concealmentPct',
      'freezes',
      'freezeMs',
      'maxFreezeMs',
      'frameDropPct',
      'fps',
      'h',
      'stalled',
    ]) {
      expect(metricsSeen, metric).toContain(metric);
    }
  });

  it.each(committed.cases.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    expect(run(vector)).toBe(vector.expected);
  });
});
