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

/**
 * Whether a database error is a transient conflict between concurrent transactions that the same
 * statement, run again, resolves: a deadlock (SQLSTATE 40P01) or a serialization failure (40001).
 * PostgreSQL aborts one of the statements involved and expects the client to retry it.
 */
export function isTransientConflict(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === '40P01' || code === '40001';
}

/**
 * Runs `operation`, again when it fails with a transient conflict ({@link isTransientConflict}),
 * up to `attempts` times in all, after a short random pause each time (so two statements that
 * deadlocked do not meet again in the same order). Any other error is thrown at once.
 *
 * @example
 * ```ts
 * const stored = await retryTransientConflicts(() => indexChunks(database, records));
 * ```
 */
export async function retryTransientConflicts<Result>(
  operation: () => Promise<Result>,
  options: { attempts?: number; maxPauseMs?: number } = {},
): Promise<Result> {
  const attempts = Math.max(1, options.attempts ?? 4);
  const maxPauseMs = options.maxPauseMs ?? 50;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= attempts || !isTransientConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * maxPauseMs * attempt));
    }
  }
}
