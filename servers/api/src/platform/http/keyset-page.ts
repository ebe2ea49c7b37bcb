/**
 * The page of a keyset query that fetched `limit + 1` rows: its first `limit` rows, and the last
 * of them when more rows follow (the position the next page starts after).
 *
 * @example
 * ```ts
 * const { page, more } = keysetPage(await query.limit(limit + 1).execute(), limit);
 * return { items: page, nextCursor: more === undefined ? undefined : encodeIdCursor(more.id) };
 * ```
 */
export function keysetPage<Row>(rows: readonly Row[], limit: number): { page: Row[]; more?: Row } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return rows.length > limit && last !== undefined ? { page, more: last } : { page };
}
