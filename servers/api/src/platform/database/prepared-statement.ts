/**
 * Marks a statement to be prepared once per connection: SQL text that starts with
 * `preparedStatement(name)` runs as the named statement `name`, so the database parses and plans
 * it once per connection instead of on every call. Both drivers honour it (the `pg` client of
 * `database.ts` and `PGliteDialect`). For hot statements whose text never changes (the batch index
 * insert); anything else reads it as a comment.
 *
 * @example
 * ```ts
 * const text = `${preparedStatement('svc_index_chunks')} select …`;
 * ```
 */
export function preparedStatement(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new TypeError(`preparedStatement: invalid name ${name}`);
  return `/* prepare:${name} */`;
}

const PREPARED = /^\/\* prepare:([a-z_][a-z0-9_]*) \*\//;

/** The name a text was marked with by {@link preparedStatement}, if any. */
export function preparedStatementName(text: string): string | undefined {
  return PREPARED.exec(text)?.[1];
}
