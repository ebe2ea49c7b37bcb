/** PostgreSQL's bind parameters per statement (a 16-bit count), with room to spare. */
const MAX_PARAMETERS = 60_000;

/**
 * Multi-row INSERTs cut to fit: rows in batches of at most `maxRows`, and never more bind
 * parameters per statement than PostgreSQL takes (65 535; the column count comes from the first
 * row).
 *
 * @example
 * ```ts
 * for (const batch of insertBatches(rows)) await transaction.insertInto('call_items').values(batch).execute();
 * ```
 */
export function* insertBatches<Row extends object>(rows: readonly Row[], maxRows = 2_000): Generator<Row[]> {
  const columns = Math.max(1, Object.keys(rows[0] ?? {}).length);
  const size = Math.max(1, Math.min(maxRows, Math.floor(MAX_PARAMETERS / columns)));
  for (let start = 0; start < rows.length; start += size) yield rows.slice(start, start + size);
}
