import { describe, expect, it } from 'vitest';
import { createTtlCache } from './ttl-cache.ts';

describe('createTtlCache', () => {
  it('returns a value until its time to live has passed', () => {
    let now = 1_000;
    const cache = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 10, now: () => now });
    cache.set('pk_a', 'project a');
    now += 59_999;
    expect(cache.get('pk_a')).toBe('project a');
    now += 1;
    expect(cache.get('pk_a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest entry past maxEntries, and deletes by value', () => {
    const cache = createTtlCache<{ id: string }>({ ttlMs: 60_000, maxEntries: 2 });
    cache.set('one', { id: 'p1' });
    cache.set('two', { id: 'p2' });
    cache.set('three', { id: 'p2' });
    expect(cache.get('one')).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.deleteWhere((value) => value.id === 'p2');
    expect(cache.size).toBe(0);
  });
});
