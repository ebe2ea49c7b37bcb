/**
 * The tunable thresholds of the detectors (PROTOCOL.md §5), by their protocol names. Durations
 * and counts are integers; percentages 0..100.
 *
 * @example
 * ```ts
 * import { DEFAULT_THRESHOLDS, type Thresholds } from '@svc/detectors';
 *
 * const strict: Thresholds = { ...DEFAULT_THRESHOLDS, lossPct: 2 };
 * ```
 */
export interface Thresholds {
  /** `webrtc_connect_failure`: no `connected` within this long of `pc_created`, ms. */
  readonly connectTimeoutMs: number;
  /** `webrtc_one_way_media`: how long one direction must be stalled, ms. */
  readonly oneWayMs: number;
  /** `webrtc_freeze`: a single freeze longer than this fires, ms. */
  readonly freezeSingleMs: number;
  /** `webrtc_freeze`: frozen share of the observed inbound video time above this fires, %. */
  readonly freezeRatioPct: number;
  /** `webrtc_freeze`, `webrtc_cpu_limited`: observed video time needed before a ratio is judged, ms. */
  readonly minObservedMs: number;
  /** `webrtc_audio_dropout`: inbound audio concealment above this, %. */
  readonly concealmentPct: number;
  /** `webrtc_audio_dropout`: for this long, ms. */
  readonly concealmentSustainMs: number;
  /** `webrtc_reconnect_storm`: this many reconnects or more... */
  readonly reconnectCount: number;
  /** `webrtc_reconnect_storm`: ...within this long, ms. */
  readonly reconnectWindowMs: number;
  /** `webrtc_call_abandoned`: closed sooner than this after `pc_created`, ms... */
  readonly abandonMs: number;
  /** `webrtc_call_abandoned`: ...with a call score below this (0..100). */
  readonly abandonScore: number;
  /** `webrtc_packet_loss`: any track's loss above this, %. */
  readonly lossPct: number;
  /** `webrtc_packet_loss`: for this long, ms. */
  readonly lossSustainMs: number;
  /** `webrtc_high_latency`: round trip time above this, ms. */
  readonly rttMs: number;
  /** `webrtc_high_latency`: for this long, ms. */
  readonly rttSustainMs: number;
  /** `webrtc_cpu_limited`: CPU-limited share of the observed outbound video time above this, %. */
  readonly cpuLimitedPct: number;
  /** `webrtc_low_resolution`: inbound video height below this, pixels. */
  readonly lowResHeight: number;
  /** `webrtc_low_resolution`: for this long, ms. */
  readonly lowResSustainMs: number;
}

/**
 * A threshold name.
 *
 * @example
 * ```ts
 * import type { ThresholdName } from '@svc/detectors';
 *
 * const name: ThresholdName = 'lossSustainMs';
 * ```
 */
export type ThresholdName = keyof Thresholds;

/**
 * The default thresholds (PROTOCOL.md §5).
 *
 * @example
 * ```ts
 * import { DEFAULT_THRESHOLDS } from '@svc/detectors';
 *
 * DEFAULT_THRESHOLDS.connectTimeoutMs; // 15000
 * ```
 */
export const DEFAULT_THRESHOLDS: Readonly<Thresholds> = {
  connectTimeoutMs: 15_000,
  oneWayMs: 6_000,
  freezeSingleMs: 2_000,
  freezeRatioPct: 5,
  minObservedMs: 30_000,
  concealmentPct: 5,
  concealmentSustainMs: 10_000,
  reconnectCount: 3,
  reconnectWindowMs: 60_000,
  abandonMs: 30_000,
  abandonScore: 60,
  lossPct: 5,
  lossSustainMs: 10_000,
  rttMs: 300,
  rttSustainMs: 15_000,
  cpuLimitedPct: 20,
  lowResHeight: 240,
  lowResSustainMs: 20_000,
};

/**
 * Every threshold name, in the order of {@link DEFAULT_THRESHOLDS}.
 *
 * @example
 * ```ts
 * import { THRESHOLD_NAMES } from '@svc/detectors';
 *
 * THRESHOLD_NAMES.length; // 18
 * ```
 */
export const THRESHOLD_NAMES = [
  'connectTimeoutMs',
  'oneWayMs',
  'freezeSingleMs',
  'freezeRatioPct',
  'minObservedMs',
  'concealmentPct',
  'concealmentSustainMs',
  'reconnectCount',
  'reconnectWindowMs',
  'abandonMs',
  'abandonScore',
  'lossPct',
  'lossSustainMs',
  'rttMs',
  'rttSustainMs',
  'cpuLimitedPct',
  'lowResHeight',
  'lowResSustainMs',
] as const satisfies readonly ThresholdName[];

/**
 * The range a per-project override of each threshold must lie in (inclusive), and whether it must
 * be an integer (durations, counts, the score and the height are). `thresholdOverridesSchema`
 * (`@svc/detectors/thresholds-schema`) enforces exactly these.
 *
 * @example
 * ```ts
 * import { THRESHOLD_BOUNDS } from '@svc/detectors';
 *
 * THRESHOLD_BOUNDS.lossPct; // { min: 0, max: 100, integer: false }
 * ```
 */
export const THRESHOLD_BOUNDS: Readonly<
  Record<ThresholdName, { readonly min: number; readonly max: number; readonly integer: boolean }>
> = {
  connectTimeoutMs: { min: 1_000, max: 300_000, integer: true },
  oneWayMs: { min: 1_000, max: 600_000, integer: true },
  freezeSingleMs: { min: 100, max: 60_000, integer: true },
  freezeRatioPct: { min: 0, max: 100, integer: false },
  minObservedMs: { min: 1_000, max: 3_600_000, integer: true },
  concealmentPct: { min: 0, max: 100, integer: false },
  concealmentSustainMs: { min: 1_000, max: 600_000, integer: true },
  reconnectCount: { min: 1, max: 100, integer: true },
  reconnectWindowMs: { min: 1_000, max: 3_600_000, integer: true },
  abandonMs: { min: 0, max: 3_600_000, integer: true },
  abandonScore: { min: 0, max: 100, integer: true },
  lossPct: { min: 0, max: 100, integer: false },
  lossSustainMs: { min: 1_000, max: 600_000, integer: true },
  rttMs: { min: 1, max: 60_000, integer: true },
  rttSustainMs: { min: 1_000, max: 600_000, integer: true },
  cpuLimitedPct: { min: 0, max: 100, integer: false },
  lowResHeight: { min: 1, max: 16_384, integer: true },
  lowResSustainMs: { min: 1_000, max: 600_000, integer: true },
};

/**
 * Merges overrides over {@link DEFAULT_THRESHOLDS}. Only known names with finite numbers are
 * taken; anything else (unknown names, `NaN`, strings, `null`) falls back to the default, so the
 * detectors never throw on a malformed configuration. Ranges are not enforced here: validate
 * project settings with `thresholdOverridesSchema` from `@svc/detectors/thresholds-schema`.
 *
 * @example
 * ```ts
 * import { resolveThresholds } from '@svc/detectors';
 *
 * resolveThresholds({ lossPct: 2 }).lossPct; // 2
 * resolveThresholds({ lossPct: Number.NaN }).lossPct; // 5
 * ```
 */
export function resolveThresholds(overrides?: Partial<Thresholds> | null): Thresholds {
  const thresholds: Record<ThresholdName, number> = { ...DEFAULT_THRESHOLDS };
  if (typeof overrides !== 'object' || overrides === null) return thresholds;
  for (const name of THRESHOLD_NAMES) {
    const value: unknown = (overrides as Record<string, unknown>)[name];
    if (typeof value === 'number' && Number.isFinite(value)) thresholds[name] = value;
  }
  return thresholds;
}
