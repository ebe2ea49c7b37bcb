import { describe, expect, it } from 'vitest';
import { randomBytesFromPool } from './random-pool.ts';

describe('randomBytesFromPool', () => {
  it('hands out the requested number of bytes, never the same bytes twice', () => {
    const seen = new Set<string>();
    // Several refills of the 4 KiB pool, at sizes that do not divide it.
    for (let index = 0; index < 5000; index += 1) {
      const size = [8, 12, 13][index % 3] as number;
      const bytes = randomBytesFromPool(size);
      expect(bytes.byteLength).toBe(size);
      const hex = bytes.toString('hex');
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
  });

  it('returns copies: changing one does not change the next', () => {
    const first = randomBytesFromPool(16);
    const copy = Buffer.from(first);
    first.fill(0);
    expect(randomBytesFromPool(16).equals(copy)).toBe(false);
    expect(copy.equals(Buffer.alloc(16))).toBe(false);
  });

  it('looks uniform: every byte value turns up about equally often', () => {
    const counts = new Array<number>(256).fill(0);
    for (let index = 0; index < 4096; index += 1)
      for (const byte of randomBytesFromPool(64)) counts[byte] = (counts[byte] ?? 0) + 1;
    // 262 144 bytes: 1024 expected per value; a CSPRNG stays well inside ±25%.
    expect(Math.min(...counts)).toBeGreaterThan(768);
    expect(Math.max(...counts)).toBeLessThan(1280);
  });

  it('serves large and empty requests, and refuses nonsense', () => {
    expect(randomBytesFromPool(0).byteLength).toBe(0);
    expect(randomBytesFromPool(10_000).byteLength).toBe(10_000);
    expect(() => randomBytesFromPool(-1)).toThrow(RangeError);
    expect(() => randomBytesFromPool(1.5)).toThrow(RangeError);
  });
});
