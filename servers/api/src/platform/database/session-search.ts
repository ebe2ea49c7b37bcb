import { sql } from 'kysely';

/**
 * The text `q` searches in a session: URL, user id, email and name, release and environment,
 * joined by a unit separator (U+001F) so a match never spans two fields. Used verbatim by the
 * `sessions_search_trigram` index (migration 2026-11-22-session-search) and by the query, so
 * PostgreSQL can answer `ILIKE '%…%'` from the trigram index instead of reading every session.
 */
export const SESSION_SEARCH_TEXT_SQL =
  "(coalesce(url, '') || E'\\x1f' || coalesce(user_id, '') || E'\\x1f' || coalesce(user_email, '') || E'\\x1f' || coalesce(user_name, '') || E'\\x1f' || coalesce(release, '') || E'\\x1f' || coalesce(environment, ''))";

/** {@link SESSION_SEARCH_TEXT_SQL} as a kysely expression. */
export const sessionSearchText = sql<string>`${sql.raw(SESSION_SEARCH_TEXT_SQL)}`;
