/**
 * A least-recently-used cache bounded by the bytes of its values (as the caller counts them):
 * adding past `maxBytes` drops the least recently read entries first. A value larger than the
 * whole budget is not kept.
 *
 * @example
 * ```ts
 * const cache = createByteLruCache<string>({ maxBytes: 10 });
 * cache.set('a', 'aaaa', 4);
 * cache.set('b', 'bbbbbbbb', 8); // drops 'a'
 * cache.get('a'); // undefined
 * ```
 */
export interface ByteLruCache<Value> {
  get(key: string): Value | undefined;
  set(key: string, value: Value, bytes: number): void;
  /** The bytes held now (never more than `maxBytes`). */
  readonly bytes: number;
}

export function createByteLruCache<Value>(options: { maxBytes: number }): ByteLruCache<Value> {
  // A Map iterates in insertion order: re-inserting on read keeps the oldest read first.
  const entries = new Map<string, { value: Value; bytes: number }>();
  let total = 0;
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set(key, value, bytes) {
      const previous = entries.get(key);
      if (previous !== undefined) {
        entries.delete(key);
        total -= previous.bytes;
      }
      if (bytes > options.maxBytes) return;
      entries.set(key, { value, bytes });
      total += bytes;
      for (const [oldest, entry] of entries) {
        if (total <= options.maxBytes) break;
        entries.delete(oldest);
        total -= entry.bytes;
      }
    },
    get bytes() {
      return total;
    },
  };
}
