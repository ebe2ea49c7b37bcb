import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createByteLruCache } from './byte-lru-cache.ts';
import { symbolicateFrames } from './symbolicate.ts';

describe('byte LRU cache', () => {
  it('never holds more than its budget, and keeps the last value that fits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.array(
          fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.integer({ min: 0, max: 120 }), fc.boolean()),
        ),
        (maxBytes, operations) => {
          const cache = createByteLruCache<number>({ maxBytes });
          for (const [key, bytes, read] of operations) {
            if (read) cache.get(key);
            else {
              cache.set(key, bytes, bytes);
              if (bytes <= maxBytes) expect(cache.get(key)).toBe(bytes);
              else expect(cache.get(key)).toBeUndefined();
            }
            expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
            expect(cache.bytes).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});

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
