/** Time-aligned arrays: `t[i]` is the end of sample i's window; `null` where it lacked a metric. */
export type Series = Record<string, Array<number | string | boolean | null>>;

/** The samples a series holds: the length of its `t`. */
export function seriesLength(series: Series): number {
  return series.t?.length ?? 0;
}

/**
 * jsonb's order of object keys (shorter first, then bytewise): a joined series lists its keys
 * as a series read back from a jsonb column does, so the API answers the same bytes whether a
 * call's series were written whole or in pieces.
 */
function jsonbKeyOrder(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * One series from consecutive pieces of it (each a series of the samples after the previous
 * piece's): every key any piece has, its arrays concatenated, `null` for the samples of a piece
 * that lacked the key. What the whole series would have been, computed at once.
 *
 * @example
 * ```ts
 * joinSeries([{ t: [1], windowMs: [1000] }, { t: [2], windowMs: [1000], h: [720] }]);
 * // { t: [1, 2], h: [null, 720], windowMs: [1000, 1000] }
 * ```
 */
export function joinSeries(pieces: readonly Series[]): Series {
  if (pieces.length === 1) return pieces[0] as Series;
  const keys = new Set<string>();
  for (const piece of pieces) for (const key of Object.keys(piece)) keys.add(key);
  const joined: Series = {};
  for (const key of [...keys].sort(jsonbKeyOrder)) {
    const values: Series[string] = [];
    for (const piece of pieces) {
      const own = piece[key];
      if (own !== undefined) for (const value of own) values.push(value);
      else for (let index = seriesLength(piece); index > 0; index--) values.push(null);
    }
    joined[key] = values;
  }
  return joined;
}
