/**
 * `@svc/detectors/thresholds-schema`: the zod schema of a project's threshold overrides, for the
 * server's project settings. A separate entry so the main entry (shipped in the browser SDK)
 * never imports zod; zod is an optional peer dependency needed only here.
 *
 * @packageDocumentation
 */
import { z } from 'zod';
import { THRESHOLD_BOUNDS, type ThresholdName } from './thresholds.ts';

function bounded(name: ThresholdName) {
  const { min, max, integer } = THRESHOLD_BOUNDS[name];
  return (integer ? z.int() : z.number()).min(min).max(max).optional();
}

/**
 * Per-project overrides of the detector thresholds: a partial, strict object (unknown names are
 * rejected) whose every value is finite, an integer where it is a duration, a count, a score or
 * a height, and within `THRESHOLD_BOUNDS`. The parsed value can be passed as
 * `createDetector({ thresholds })` and handed to the SDK in `GET /v1/config`.
 *
 * @example
 * ```ts
 * import { thresholdOverridesSchema } from '@svc/detectors/thresholds-schema';
 *
 * thresholdOverridesSchema.parse({ lossPct: 3, lossSustainMs: 5000 }); // ok
 * thresholdOverridesSchema.safeParse({ lossPct: 300 }).success; // false: over 100
 * thresholdOverridesSchema.safeParse({ lossPercent: 3 }).success; // false: unknown name
 * ```
 */
export const thresholdOverridesSchema = z.strictObject({
  connectTimeoutMs: bounded('connectTimeoutMs'),
  oneWayMs: bounded('oneWayMs'),
  freezeSingleMs: bounded('freezeSingleMs'),
  freezeRatioPct: bounded('freezeRatioPct'),
  minObservedMs: bounded('minObservedMs'),
  concealmentPct: bounded('concealmentPct'),
  concealmentSustainMs: bounded('concealmentSustainMs'),
  reconnectCount: bounded('reconnectCount'),
  reconnectWindowMs: bounded('reconnectWindowMs'),
  abandonMs: bounded('abandonMs'),
  abandonScore: bounded('abandonScore'),
  lossPct: bounded('lossPct'),
  lossSustainMs: bounded('lossSustainMs'),
  rttMs: bounded('rttMs'),
  rttSustainMs: bounded('rttSustainMs'),
  cpuLimitedPct: bounded('cpuLimitedPct'),
  lowResHeight: bounded('lowResHeight'),
  lowResSustainMs: bounded('lowResSustainMs'),
});

/**
 * A project's validated threshold overrides.
 *
 * @example
 * ```ts
 * import type { ThresholdOverrides } from '@svc/detectors/thresholds-schema';
 *
 * const overrides: ThresholdOverrides = { rttMs: 250 };
 * ```
 */
export type ThresholdOverrides = z.infer<typeof thresholdOverridesSchema>;
