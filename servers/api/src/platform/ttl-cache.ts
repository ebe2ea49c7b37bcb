/** A bounded map whose entries expire `ttlMs` after they were set. */
export interface TtlCache<Value> {
  get(key: string): Value | undefined;
  set(key: string, value: Value): void;
  /** Removes every entry whose value matches. */
  deleteWhere(matches: (value: Value) => boolean): void;
  readonly size: number;
}

/**
 * A small time-to-live cache: entries expire `ttlMs` after `set`; past `maxEntries` the oldest
 * entry is dropped. For values that may be a little stale but must never be wrong for long
 * (projects by key: a settings change made in another server process shows within `ttlMs`).
 *
 * @example
 * ```ts
 * const projects = createTtlCache<Project>({ ttlMs: 60_000, maxEntries: 10_000 });
 * ```
 */
export function createTtlCache<Value>(options: {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}): TtlCache<Value> {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: Value; expiresAt: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value) {
      entries.delete(key);
      if (entries.size >= options.maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
      entries.set(key, { value, expiresAt: now() + options.ttlMs });
    },
    deleteWhere(matches) {
      for (const [key, entry] of entries) if (matches(entry.value)) entries.delete(key);
    },
    get size() {
      return entries.size;
    },
  };
}
