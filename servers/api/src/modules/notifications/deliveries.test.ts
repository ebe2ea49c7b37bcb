import { describe, expect, it } from 'vitest';
import { DELIVERY_WINDOW_MS, MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from './deliveries.ts';

describe('nextAttemptAt', () => {
  const queuedAt = Date.UTC(2026, 10, 24, 0, 0, 0);

  it('follows 1 min, 10 min, 1 h, 4 h, 12 h with ±10 % jitter, and stops after the sixth attempt', () => {
    expect(RETRY_DELAYS_MS).toHaveLength(MAX_ATTEMPTS - 1);
    let now = queuedAt;
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) {
      const delay = RETRY_DELAYS_MS[attempt - 1] as number;
      const low = nextAttemptAt(attempt, { queuedAt, now, random: () => 0 });
      const high = nextAttemptAt(attempt, { queuedAt, now, random: () => 0.999_999 });
      expect(low).toBe(now + Math.round(delay * 0.9));
      expect((high as number) - now).toBeGreaterThan(delay * 1.099);
      expect((high as number) - now).toBeLessThanOrEqual(delay * 1.1);
      now = nextAttemptAt(attempt, { queuedAt, now, random: () => 0.999_999 }) as number;
    }
    // Even with the longest jitter every time, the sixth attempt is within 24 h.
    expect(now - queuedAt).toBeLessThan(DELIVERY_WINDOW_MS);
    expect(nextAttemptAt(MAX_ATTEMPTS, { queuedAt, now, random: () => 0.5 })).toBeUndefined();
  });

  it('honours Retry-After within the 24 h window, never earlier than the schedule', () => {
    const now = queuedAt + 60_000;
    expect(nextAttemptAt(1, { queuedAt, now, retryAfterMs: 1_000, random: () => 0.5 })).toBe(now + 60_000);
    expect(nextAttemptAt(1, { queuedAt, now, retryAfterMs: 7_200_000, random: () => 0.5 })).toBe(
      now + 7_200_000,
    );
    expect(nextAttemptAt(1, { queuedAt, now, retryAfterMs: 48 * 3_600_000, random: () => 0.5 })).toBe(
      queuedAt + DELIVERY_WINDOW_MS,
    );
    // Near the end of the window, the next attempt goes out at its end; after it, none.
    const late = queuedAt + DELIVERY_WINDOW_MS - 1_000;
    expect(nextAttemptAt(5, { queuedAt, now: late, retryAfterMs: 3_600_000, random: () => 0.5 })).toBe(
      queuedAt + DELIVERY_WINDOW_MS,
    );
    expect(
      nextAttemptAt(2, { queuedAt, now: queuedAt + DELIVERY_WINDOW_MS, random: () => 0.5 }),
    ).toBeUndefined();
  });
});
