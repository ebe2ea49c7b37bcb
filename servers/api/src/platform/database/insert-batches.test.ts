import { describe, expect, it } from 'vitest';
import { insertBatches } from './insert-batches.ts';

describe('insertBatches', () => {
  it('keeps every row once, in order, within maxRows and under 65 535 parameters', () => {
    const narrow = Array.from({ length: 4_500 }, (_, index) => ({ a: index, b: 0 }));
    const batches = [...insertBatches(narrow)];
    expect(batches.map((batch) => batch.length)).toEqual([2_000, 2_000, 500]);
    expect(batches.flat()).toEqual(narrow);

    const wide = Array.from({ length: 3_000 }, (_, index) =>
      Object.fromEntries(Array.from({ length: 40 }, (_, column) => [`c${column}`, index])),
    );
    const sizes = [...insertBatches(wide)].map((batch) => batch.length);
    expect(Math.max(...sizes) * 40).toBeLessThan(65_535);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(3_000);
    expect([...insertBatches([])]).toEqual([]);
  });
});
