import { type Kysely, sql } from 'kysely';

// Migrations never import application code; this expression must stay equal to
// SESSION_SEARCH_TEXT_SQL in src/database/session-search.ts (a test checks the two agree).
export const SEARCH_TEXT =
  "(coalesce(url, '') || E'\\x1f' || coalesce(user_id, '') || E'\\x1f' || coalesce(user_email, '') || E'\\x1f' || coalesce(user_name, '') || E'\\x1f' || coalesce(release, '') || E'\\x1f' || coalesce(environment, ''))";

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  // pg_trgm ships with PostgreSQL's contrib (and with PGlite, loaded in createDatabase). Where it
  // is not installed the index is left out: free-text search stays correct, only slower.
  const available = await sql<{ name: string }>`
    select name from pg_available_extensions where name = 'pg_trgm'
  `.execute(database);
  if (available.rows.length === 0) return;
  await sql`create extension if not exists pg_trgm`.execute(database);
  await sql`
    create index sessions_search_trigram on sessions using gin ((${sql.raw(SEARCH_TEXT)}) gin_trgm_ops)
  `.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop index if exists sessions_search_trigram`.execute(database);
}
