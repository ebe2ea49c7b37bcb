// @svc/quality-score declares its own structural input types (it has no dependencies). This test
// pins the contract between the two packages: protocol's CallSample and TrackSample types are
// accepted as they are (a type error here fails `pnpm typecheck`), and every sample of the
// recorded call chunk carries the score that scoreSample gives it, as the SDK sends it.
import { readFileSync } from 'node:fs';
import { type CallSample as ScoreInput, scoreCall, scoreSample, scoreTrack } from '@svc/quality-score';
import { describe, expect, it } from 'vitest';
import { type CallSample, parseChunk, type TrackSample } from '../src/index.ts';

function recordedSamples(): CallSample[] {
  const result = parseChunk(
    JSON.parse(readFileSync(new URL('../fixtures/valid/Chunk/call.json', import.meta.url), 'utf8')),
  );
  if (!result.success) throw new Error(result.error.message);
  return result.chunk.events.filter((event): event is CallSample => event.type === 'call.sample');
}

describe('@svc/quality-score accepts protocol call samples', () => {
  const samples = recordedSamples();

  it('scores every recorded sample to the score it carries', () => {
    expect(samples).toHaveLength(8);
    for (const sample of samples) {
      expect(sample.score).toEqual(expect.any(Number));
      expect(scoreSample(sample)).toBe(sample.score);
    }
  });

  it('takes protocol types without conversion', () => {
    const asInput: ScoreInput[] = samples;
    const track: TrackSample | undefined = samples[0]?.tracks[0];
    if (track === undefined) throw new Error('the recorded sample has no track');
    expect(scoreTrack(track, samples[0]?.windowMs ?? 0)).toEqual(expect.any(Number));
    const call = scoreCall(asInput);
    expect(call).toBeGreaterThanOrEqual(Math.min(...samples.map((sample) => sample.score ?? 100)));
    expect(call).toBeLessThanOrEqual(Math.max(...samples.map((sample) => sample.score ?? 0)));
  });
});
