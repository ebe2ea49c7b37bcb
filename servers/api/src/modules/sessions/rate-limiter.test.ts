import { describe, expect, it } from 'vitest';
import { createIngestRateLimiter } from './rate-limiter.ts';

function clock() {
  let time = 1_000;
  return {
    now: () => time,
    advance(milliseconds: number) {
      time += milliseconds;
    },
  };
}

describe('createIngestRateLimiter', () => {
  it('lets a burst of two seconds through, then the rate, and says when to retry', () => {
    const time = clock();
    const limiter = createIngestRateLimiter({ now: time.now });
    const taken = Array.from({ length: 25 }, () => limiter.take('proj_a', 10).allowed);
    expect(taken.filter(Boolean)).toHaveLength(20);
    expect(limiter.take('proj_a', 10)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    time.advance(500); // refills 5
    expect(Array.from({ length: 6 }, () => limiter.take('proj_a', 10).allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it('never holds more than the burst, however long a project was quiet', () => {
    const time = clock();
    const limiter = createIngestRateLimiter({ now: time.now });
    limiter.take('proj_a', 5);
    time.advance(3_600_000);
    expect(Array.from({ length: 12 }, () => limiter.take('proj_a', 5).allowed).filter(Boolean)).toHaveLength(
      10,
    );
  });

  it('keeps projects apart, and does not limit without a rate', () => {
    const time = clock();
    const limiter = createIngestRateLimiter({ now: time.now });
    for (let index = 0; index < 2; index += 1) expect(limiter.take('proj_a', 1).allowed).toBe(true);
    expect(limiter.take('proj_a', 1).allowed).toBe(false);
    expect(limiter.take('proj_b', 1).allowed).toBe(true);
    for (let index = 0; index < 1000; index += 1) expect(limiter.take('proj_c', null).allowed).toBe(true);
  });

  it('asks slow rates to wait long enough for one token', () => {
    const time = clock();
    const limiter = createIngestRateLimiter({ now: time.now, burstSeconds: 1 });
    expect(limiter.take('proj_a', 0.1).allowed).toBe(true);
    expect(limiter.take('proj_a', 0.1)).toEqual({ allowed: false, retryAfterSeconds: 10 });
    time.advance(10_000);
    expect(limiter.take('proj_a', 0.1).allowed).toBe(true);
  });

  it('applies a changed rate at once, without minting tokens', () => {
    const time = clock();
    const limiter = createIngestRateLimiter({ now: time.now });
    for (let index = 0; index < 200; index += 1) limiter.take('proj_a', 100);
    expect(limiter.take('proj_a', 1).allowed).toBe(false);
    time.advance(1_000);
    expect(limiter.take('proj_a', 1).allowed).toBe(true);
    expect(limiter.take('proj_a', 1).allowed).toBe(false);
  });

  it('forgets the least recently used project beyond its bound', () => {
    const time = clock();
    const limiter = createIngestRateLimiter({ now: time.now, maxProjects: 2 });
    limiter.take('proj_a', 1);
    limiter.take('proj_a', 1);
    limiter.take('proj_b', 1);
    limiter.take('proj_c', 1); // proj_a is forgotten: a full bucket again
    expect(limiter.take('proj_a', 1).allowed).toBe(true);
  });

  it('refuses a rate that is not positive', () => {
    const limiter = createIngestRateLimiter();
    expect(() => limiter.take('proj_a', 0)).toThrow(RangeError);
    expect(() => limiter.take('proj_a', Number.NaN)).toThrow(RangeError);
  });
});
