/**
 * Whether a database error is a unique-constraint violation (SQLSTATE 23505), from `pg` or
 * PGlite alike: both put the SQLSTATE in `code`.
 *
 * @example
 * ```ts
 * try { await insertChunk(database, chunk); } catch (error) { if (isUniqueViolation(error)) return duplicate(); throw error; }
 * ```
 */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
