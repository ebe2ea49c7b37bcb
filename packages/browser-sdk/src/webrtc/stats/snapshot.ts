/**
 * One `RTCStats` dictionary as `getStats()` returns it: `id`, `type`, `timestamp` (ms) and the
 * type's own fields, all read defensively (a field of the wrong type counts as missing).
 *
 * @example
 * ```ts
 * const pair: RTCStatsLike = { id: 'CP1', type: 'candidate-pair', timestamp: 1763700000000, currentRoundTripTime: 0.04 };
 * ```
 */
export interface RTCStatsLike {
  id: string;
  type: string;
  timestamp: number;
  [field: string]: unknown;
}

/**
 * One `getStats()` result: every RTCStats object as a plain record by id, and when it was taken
 * (`takenAt`, ms on any clock, as long as successive snapshots of one peer connection use the same).
 *
 * @example
 * ```ts
 * const snapshot: StatsSnapshot = toSnapshot(await peerConnection.getStats(), Date.now());
 * snapshot.stats.get(transportId)?.selectedCandidatePairId;
 * ```
 */
export interface StatsSnapshot {
  takenAt: number;
  stats: ReadonlyMap<string, RTCStatsLike>;
}

function isStats(value: unknown): value is RTCStatsLike {
  if (typeof value !== 'object' || value === null) return false;
  const { id, type } = value as Partial<RTCStatsLike>;
  return typeof id === 'string' && typeof type === 'string';
}

/**
 * Turns an `RTCStatsReport` (or any iterable of stats objects, or a map of them by id) into a
 * {@link StatsSnapshot}. Entries without a string `id` and `type` are skipped; the objects are
 * kept as they are (not copied).
 *
 * @param report - what `RTCPeerConnection.getStats()` resolved to
 * @param takenAt - when it resolved, ms
 * @example
 * ```ts
 * const previous = toSnapshot(await peerConnection.getStats(), performance.now());
 * ```
 */
export function toSnapshot(
  report: RTCStatsReport | Iterable<RTCStatsLike> | ReadonlyMap<string, RTCStatsLike>,
  takenAt: number,
): StatsSnapshot {
  const stats = new Map<string, RTCStatsLike>();
  // A report or a map iterates [id, stats] entries, so read its values(); an array's values()
  // are its elements, and any other iterable is read as it is.
  const values: Iterable<unknown> =
    'values' in report && typeof report.values === 'function' ? report.values() : report;
  for (const value of values) if (isStats(value)) stats.set(value.id, value);
  return { takenAt, stats };
}

/** A finite number field, else `undefined`. */
export function readNumber(stats: RTCStatsLike | undefined, field: string): number | undefined {
  const value = stats?.[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A string field, else `undefined`. */
export function readString(stats: RTCStatsLike | undefined, field: string): string | undefined {
  const value = stats?.[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The difference of a cumulative counter between two polls: `undefined` on its first poll (no
 * previous object, or the field is new) and after a reset (a negative difference).
 */
export function readDelta(
  current: RTCStatsLike | undefined,
  previous: RTCStatsLike | undefined,
  field: string,
): number | undefined {
  const now = readNumber(current, field);
  const before = readNumber(previous, field);
  if (now === undefined || before === undefined || now < before) return undefined;
  return now - before;
}
