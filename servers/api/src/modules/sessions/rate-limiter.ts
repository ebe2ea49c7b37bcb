/** What {@link IngestRateLimiter.take} decided. */
type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Per-project token buckets for ingest (see {@link createIngestRateLimiter}). */
export interface IngestRateLimiter {
  /**
   * Takes one chunk's token from the project's bucket when `perSecond` is set (`null`: no
   * limit). A refused chunk takes nothing.
   */
  take(projectId: string, perSecond: number | null): RateDecision;
}

/** Options of {@link createIngestRateLimiter}. */
export interface IngestRateLimiterOptions {
  /** Seconds of the rate a bucket holds when full: the largest burst. Default 2. */
  burstSeconds?: number;
  /** Buckets kept; the least recently used one goes beyond it. Default 10 000. */
  maxProjects?: number;
  /** Milliseconds clock. Default `performance.now`. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per project: it refills at `perSecond` tokens a second up to `burstSeconds` times
 * that, and each chunk takes one, so a project sends at most `perSecond` chunks a second on
 * average with bursts of up to twice that (SDKs upload in bursts when a page comes back online).
 * Buckets live in this process: with several server processes each allows the rate.
 *
 * @example
 * ```ts
 * const limiter = createIngestRateLimiter();
 * const decision = limiter.take(project.id, settings.ingest.maxChunksPerSecond);
 * if (!decision.allowed) reply.header('retry-after', String(decision.retryAfterSeconds));
 * ```
 */
export function createIngestRateLimiter(options: IngestRateLimiterOptions = {}): IngestRateLimiter {
  const burstSeconds = options.burstSeconds ?? 2;
  const maxProjects = Math.max(1, options.maxProjects ?? 10_000);
  const now = options.now ?? (() => performance.now());
  const buckets = new Map<string, Bucket>();

  return {
    take(projectId, perSecond) {
      if (perSecond === null) return { allowed: true };
      if (!(perSecond > 0)) throw new RangeError('perSecond must be positive or null');
      const capacity = Math.max(1, perSecond * burstSeconds);
      const time = now();
      let bucket = buckets.get(projectId);
      if (bucket === undefined) {
        bucket = { tokens: capacity, updatedAt: time };
        if (buckets.size >= maxProjects) {
          const oldest = buckets.keys().next();
          if (oldest.done !== true) buckets.delete(oldest.value);
        }
      } else {
        buckets.delete(projectId); // re-inserted below: most recently used last
        bucket.tokens = Math.min(capacity, bucket.tokens + ((time - bucket.updatedAt) / 1000) * perSecond);
        bucket.updatedAt = time;
      }
      buckets.set(projectId, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) };
    },
  };
}
