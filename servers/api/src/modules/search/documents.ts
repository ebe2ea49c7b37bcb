import { sql } from 'kysely';

// What full-text search reads of each row: `to_tsvector('simple', …)` over its text with ASCII
// punctuation turned into spaces (so `/checkout/83`, `payment_failed` and `web@1.2.0` give their
// words). These are the expressions of the GIN indexes of migration 2026-12-16-search, verbatim:
// the planner uses an expression index only for the same expression (a test checks they agree).
// Column names are bare: each is used where its table is the nearest one in scope (its own
// `from`, or a lateral subquery of it).

/** ASCII punctuation (`!`–`/`, `:`–`@`, `[`–`` ` ``, `{`–`~`) as a POSIX bracket expression. */
const PUNCTUATION = "'[!-/:-@[-`{-~]+'";

const document = (text: string) => `to_tsvector('simple', regexp_replace(${text}, ${PUNCTUATION}, ' ', 'g'))`;

const SESSION_TEXT =
  "coalesce(url, '') || ' ' || coalesce(user_id, '') || ' ' || coalesce(user_email, '') || ' ' || coalesce(user_name, '') || ' ' || coalesce(release, '') || ' ' || coalesce(environment, '')";
const SIGNAL_TEXT = "name || ' ' || coalesce(message, '')";
const CALL_TEXT =
  "coalesce(network_type, '') || ' ' || coalesce(failure_reason, '') || ' ' || issue_kinds::text || ' ' || coalesce(browser_name, '') || ' ' || coalesce(os_name, '') || ' ' || coalesce(device, '') || ' ' || coalesce(protocol, '') || ' ' || coalesce(codec, '')";
const ISSUE_TEXT = "title || ' ' || kind || ' ' || fingerprint";

/** A session: URL, user id, email and name, release, environment. */
export const SESSION_DOCUMENT_SQL = document(SESSION_TEXT);
/** A signal (an error's name and message, a custom event's name). */
export const SIGNAL_DOCUMENT_SQL = document(SIGNAL_TEXT);
/** A call: network type, failure reason, finding kinds, browser, OS, device, protocol, codec. */
export const CALL_DOCUMENT_SQL = document(CALL_TEXT);
/** An issue cluster: title, kind, fingerprint. */
export const ISSUE_DOCUMENT_SQL = document(ISSUE_TEXT);
/** The signals indexed (the partial index's predicate): errors and custom events. */
export const SEARCHED_SIGNALS_SQL = "kind in ('error', 'custom')";

export const sessionDocument = sql.raw(SESSION_DOCUMENT_SQL);
export const signalDocument = sql.raw(SIGNAL_DOCUMENT_SQL);
export const callDocument = sql.raw(CALL_DOCUMENT_SQL);
export const issueDocument = sql.raw(ISSUE_DOCUMENT_SQL);
export const searchedSignals = sql.raw(SEARCHED_SIGNALS_SQL);

// The texts the documents are made of, as they are stored: a word of a document is a substring of
// its text, so `text ILIKE '%word%'` is a cheap test a row must pass before its document is
// computed (sessions' is `sessionSearchText`, which the trigram index serves).
export const signalText = sql.raw(`(${SIGNAL_TEXT})`);
export const callText = sql.raw(`(${CALL_TEXT})`);
export const issueText = sql.raw(`(${ISSUE_TEXT})`);
