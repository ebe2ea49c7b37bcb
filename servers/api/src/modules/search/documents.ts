import { sql } from 'kysely';

// What full-text search reads of each row: `to_tsvector('simple', …)` over its text with ASCII
// punctuation turned into spaces (so `/checkout/83`, `payment_failed` and `web@1.2.0` give their
// words). These are the expressions of the GIN indexes of migration 2026-12-14-search, verbatim:
// the planner uses an expression index only for the same expression (a test checks they agree).
// Column names are bare: each is used where its table is the nearest one in scope (its own
// `from`, or a lateral subquery of it).

/** ASCII punctuation (`!`–`/`, `:`–`@`, `[`–`` ` ``, `{`–`~`) as a POSIX bracket expression. */
const PUNCTUATION = "'[!-/:-@[-`{-~]+'";

const document = (text: string) => `to_tsvector('simple', regexp_replace(${text}, ${PUNCTUATION}, ' ', 'g'))`;

/** A session: URL, user id, email and name, release, environment. */
export const SESSION_DOCUMENT_SQL = document(
  "coalesce(url, '') || ' ' || coalesce(user_id, '') || ' ' || coalesce(user_email, '') || ' ' || coalesce(user_name, '') || ' ' || coalesce(release, '') || ' ' || coalesce(environment, '')",
);
/** A signal (an error's name and message, a custom event's name). */
export const SIGNAL_DOCUMENT_SQL = document("name || ' ' || coalesce(message, '')");
/** A call: network type, failure reason, finding kinds, browser, OS, device, protocol, codec. */
export const CALL_DOCUMENT_SQL = document(
  "coalesce(network_type, '') || ' ' || coalesce(failure_reason, '') || ' ' || issue_kinds::text || ' ' || coalesce(browser_name, '') || ' ' || coalesce(os_name, '') || ' ' || coalesce(device, '') || ' ' || coalesce(protocol, '') || ' ' || coalesce(codec, '')",
);
/** An issue cluster: title, kind, fingerprint. */
export const ISSUE_DOCUMENT_SQL = document("title || ' ' || kind || ' ' || fingerprint");
/** The signals indexed (the partial index's predicate): errors and custom events. */
export const SEARCHED_SIGNALS_SQL = "kind in ('error', 'custom')";

export const sessionDocument = sql.raw(SESSION_DOCUMENT_SQL);
export const signalDocument = sql.raw(SIGNAL_DOCUMENT_SQL);
export const callDocument = sql.raw(CALL_DOCUMENT_SQL);
export const issueDocument = sql.raw(ISSUE_DOCUMENT_SQL);
export const searchedSignals = sql.raw(SEARCHED_SIGNALS_SQL);
