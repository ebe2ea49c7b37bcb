/** The governor's levels, least constrained first (PROTOCOL.md `governor` event). */
export const GOVERNOR_LEVELS = ['healthy', 'constrained', 'degraded', 'survival'] as const;
export type GovernorLevel = (typeof GOVERNOR_LEVELS)[number];

/** What the governor measures. */
export interface GovernorMeasure {
  /** Bytes sealed and not acknowledged yet. */
  backlogBytes: number;
  /** Failed upload attempts in a row. */
  failures: number;
  /** JS heap in use, where the browser reports it (`performance.memory`, Chromium). */
  heapBytes?: number;
  /** When measured (ms). */
  now: number;
}

/**
 * Where each level starts: a measure at or above a level's `enter` value raises the governor to
 * that level at once. Going down needs every measure below the lower level's `leave` values
 * (lower than `enter`: the hysteresis band) for `calmMs`.
 */
export interface GovernorThresholds {
  backlogBytes: readonly [constrained: number, degraded: number, survival: number];
  failures: readonly [constrained: number, degraded: number, survival: number];
  heapBytes: readonly [constrained: number, degraded: number, survival: number];
  /** `leave` = `enter` × this (0..1). */
  leaveRatio: number;
  /** How long measures must stay low before the governor steps down one level. */
  calmMs: number;
}

export const DEFAULT_GOVERNOR_THRESHOLDS: GovernorThresholds = {
  backlogBytes: [256 * 1024, 1024 * 1024, 4 * 1024 * 1024],
  failures: [2, 4, 8],
  heapBytes: [256 * 1024 * 1024, 512 * 1024 * 1024, 1024 * 1024 * 1024],
  leaveRatio: 0.5,
  calmMs: 30_000,
};

/** What a level allows (PROTOCOL.md §2 cadence; the recorder's detail). */
export interface GovernorPolicy {
  /** Seconds between regular WebRTC samples; `null`: none (lifecycle events only). */
  sampleIntervalSec: 5 | 15 | 30 | null;
  /** Only samples emitted because a detector threshold was crossed. */
  thresholdCrossingsOnly: boolean;
  /** Only `call.event` lifecycle events (no samples). */
  lifecycleEventsOnly: boolean;
  /** The session recorder: everything, fewer details (no canvas, inputs, mouse moves), bare DOM, or paused. */
  recording: 'full' | 'reduced' | 'minimal' | 'paused';
}

const POLICIES: Readonly<Record<GovernorLevel, GovernorPolicy>> = {
  healthy: {
    sampleIntervalSec: 5,
    thresholdCrossingsOnly: false,
    lifecycleEventsOnly: false,
    recording: 'full',
  },
  constrained: {
    sampleIntervalSec: 15,
    thresholdCrossingsOnly: false,
    lifecycleEventsOnly: false,
    recording: 'reduced',
  },
  degraded: {
    sampleIntervalSec: 30,
    thresholdCrossingsOnly: true,
    lifecycleEventsOnly: false,
    recording: 'minimal',
  },
  survival: {
    sampleIntervalSec: null,
    thresholdCrossingsOnly: false,
    lifecycleEventsOnly: true,
    recording: 'paused',
  },
};

/**
 * What a level allows.
 *
 * @example
 * ```ts
 * governorPolicy('degraded').sampleIntervalSec; // 30
 * ```
 */
export function governorPolicy(level: GovernorLevel): GovernorPolicy {
  return POLICIES[level];
}

/** The level each measure alone asks for, by `enter` (or `leave`) thresholds. */
function levelFor(measure: GovernorMeasure, thresholds: GovernorThresholds, ratio: number): number {
  let level = 0;
  const check = (value: number | undefined, limits: readonly number[]) => {
    if (value === undefined) return;
    limits.forEach((limit, index) => {
      if (value >= limit * ratio) level = Math.max(level, index + 1);
    });
  };
  check(measure.backlogBytes, thresholds.backlogBytes);
  check(measure.failures, thresholds.failures);
  check(measure.heapBytes, thresholds.heapBytes);
  return level;
}

export interface Governor {
  /** Feeds a measure; returns the new level when it changed, else undefined. */
  observe(measure: GovernorMeasure): GovernorLevel | undefined;
  level(): GovernorLevel;
}

/**
 * The upload and memory governor, with hysteresis:
 *
 * - **up at once**: the level is raised to the highest one any measure reaches (`enter`
 *   thresholds: a backlog of 256 KB / 1 MB / 4 MB, 2 / 4 / 8 failed uploads in a row, a heap of
 *   256 MB / 512 MB / 1 GB);
 * - **down one level at a time**: only when every measure has stayed below half the current
 *   level's thresholds (`leaveRatio`) for 30 s (`calmMs`), so a measure hovering at a threshold
 *   never makes the level flap.
 *
 * Monotone: a worse measure never lowers the level.
 *
 * @example
 * ```ts
 * const governor = createGovernor();
 * governor.observe({ backlogBytes: 2_000_000, failures: 0, now: Date.now() }); // 'degraded'
 * ```
 */
export function createGovernor(thresholds: GovernorThresholds = DEFAULT_GOVERNOR_THRESHOLDS): Governor {
  let current = 0;
  let calmSince: number | undefined;
  return {
    observe(measure) {
      const before = current;
      const wanted = levelFor(measure, thresholds, 1);
      if (wanted > current) {
        current = wanted;
        calmSince = undefined;
      } else if (current > 0) {
        // Calm: every measure below the leave thresholds of the current level.
        const stillHigh = levelFor(measure, thresholds, thresholds.leaveRatio) >= current;
        if (stillHigh) calmSince = undefined;
        else {
          calmSince ??= measure.now;
          if (measure.now - calmSince >= thresholds.calmMs) {
            current -= 1;
            calmSince = current > 0 ? measure.now : undefined;
          }
        }
      }
      return current === before ? undefined : (GOVERNOR_LEVELS[current] as GovernorLevel);
    },
    level() {
      return GOVERNOR_LEVELS[current] as GovernorLevel;
    },
  };
}
