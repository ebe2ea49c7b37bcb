import { type Kysely, sql } from 'kysely';

// Full-text search over sessions, their errors and custom events, calls and issues
// (`POST /v1/search`, src/modules/search). Expression GIN indexes over the columns that exist,
// no new columns: ingest writes exactly what it wrote before, and an index is maintained only
// when a row is inserted or one of its indexed columns changes.
//
// - `sessions_search_document`: URL, user id, email and name, release and environment: the
//   columns of the trigram index `sessions_search_trigram`, so the updates ingest makes to a
//   session's aggregates (chunk count, last event, bytes) stay HOT as before. One entry per new
//   session, none per chunk.
// - `session_signals_search_document`: an error's name and message, a custom event's name.
//   Partial: errors and custom events only (not gaps, triggers or traces). One entry per such
//   event, the signal row ingest writes anyway.
// - `calls_search_document`: network type, failure reason, finding kinds, browser, OS, device,
//   protocol and codec. Written by processing, not ingest.
// - `issue_clusters_search_document`: title, kind and fingerprint.
//
// Every text is the 'simple' configuration (no stemming, no stop words: URLs, ids, error names
// and several languages) over the text with ASCII punctuation turned into spaces, so
// `/checkout/83`, `payment_failed` and `user@example.com` index their words. GIN's pending list
// (fastupdate, on by default) keeps each insert an append. PGlite has full-text search built in;
// nothing here needs an extension.
//
// Migrations never import application code: these expressions must stay equal to those of
// src/modules/search/documents.ts, which the queries use (a test checks the two agree; the
// planner uses an index only for the same expression).

const PUNCTUATION = "'[!-/:-@[-`{-~]+'";

/** `to_tsvector('simple', …)` of `text` with ASCII punctuation as spaces. */
const document = (text: string) => `to_tsvector('simple', regexp_replace(${text}, ${PUNCTUATION}, ' ', 'g'))`;

export const SESSION_DOCUMENT = document(
  "coalesce(url, '') || ' ' || coalesce(user_id, '') || ' ' || coalesce(user_email, '') || ' ' || coalesce(user_name, '') || ' ' || coalesce(release, '') || ' ' || coalesce(environment, '')",
);
export const SIGNAL_DOCUMENT = document("name || ' ' || coalesce(message, '')");
export const CALL_DOCUMENT = document(
  "coalesce(network_type, '') || ' ' || coalesce(failure_reason, '') || ' ' || issue_kinds::text || ' ' || coalesce(browser_name, '') || ' ' || coalesce(os_name, '') || ' ' || coalesce(device, '') || ' ' || coalesce(protocol, '') || ' ' || coalesce(codec, '')",
);
export const ISSUE_DOCUMENT = document("title || ' ' || kind || ' ' || fingerprint");
/** The signals the signal index holds. */
export const SEARCHED_SIGNALS = "kind in ('error', 'custom')";

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`create index sessions_search_document on sessions using gin ((${sql.raw(SESSION_DOCUMENT)}))`.execute(
    database,
  );
  await sql`
    create index session_signals_search_document on session_signals using gin ((${sql.raw(SIGNAL_DOCUMENT)}))
    where ${sql.raw(SEARCHED_SIGNALS)}`.execute(database);
  await sql`create index calls_search_document on calls using gin ((${sql.raw(CALL_DOCUMENT)}))`.execute(
    database,
  );
  await sql`
    create index issue_clusters_search_document on issue_clusters using gin ((${sql.raw(ISSUE_DOCUMENT)}))`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop index if exists issue_clusters_search_document`.execute(database);
  await sql`drop index if exists calls_search_document`.execute(database);
  await sql`drop index if exists session_signals_search_document`.execute(database);
  await sql`drop index if exists sessions_search_document`.execute(database);
}
