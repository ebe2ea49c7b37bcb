import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { symbolicateFrames } from './symbolicate.ts';

const frameArbitrary = fc.record(
  {
    file: fc.string({ maxLength: 40 }),
    line: fc.integer({ min: 1, max: 1000 }),
    column: fc.integer({ min: 1, max: 1000 }),
    function: fc.string({ maxLength: 20 }),
  },
  { requiredKeys: [] },
);

describe('symbolicateFrames', () => {
  it('answers one frame per frame, in order, and unmapped frames as they were', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frameArbitrary, { maxLength: 30 }), async (frames) => {
        const output = await symbolicateFrames(frames, async () => undefined);
        expect(output).toEqual(frames.map((frame) => ({ ...frame, mapped: false })));
      }),
    );
  });
});
