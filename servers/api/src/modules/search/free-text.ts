// The free text of a search (`q`), read once in the server: what PostgreSQL's full-text search
// gets (`websearch_to_tsquery('simple', …)`: quoted phrases, `-word`, `or`), a prefix match for
// the last word, the words of the phrase bonus, and the terms snippets look for. Pure functions:
// nothing here touches the database, and no input makes them throw.

/** The full-text part of a query: present when `q` has at least one word that is not negated. */
export interface FullText {
  /** `websearch_to_tsquery`'s input: ASCII punctuation as spaces, quotes and a leading `-` kept. */
  query: string;
  /**
   * The query without its last word, and that word as a `to_tsquery` prefix (`'chec':*`), when
   * the last word is plain (not quoted, not negated, three characters or more): typing
   * `checkout fail` also finds `failed`.
   */
  prefix?: { rest: string; last: string };
  /** The positive words in order, when there are two or more: items holding them as a phrase rank higher. */
  phrase?: string;
  /**
   * ASCII words every match holds as a substring of its text (case-insensitive): a cheap
   * `ILIKE` the database checks before it computes a row's `to_tsvector`. Empty with `or`.
   */
  required: string[];
}

/** A parsed `q`. */
export interface FreeText {
  /** `q` as typed, trimmed: the substring (`ILIKE`) match looks for it. */
  raw: string;
  fullText?: FullText;
  /** Lower-case words and `raw`, for snippets: the first one found in an item's text centres its snippet. */
  terms: string[];
}

/** ASCII punctuation but `"` and `-`, which `websearch_to_tsquery` reads as operators. */
const PUNCTUATION = /[!#-,./:-@[-`{-~]+/g;
const WORD = /[\p{L}\p{N}]+/gu;
const PLAIN_WORD = /^[\p{L}\p{N}]{3,}$/u;

/**
 * Reads a search's free text; `undefined` for none (empty or blank).
 *
 * @example
 * ```ts
 * parseFreeText('"payment declined" -test checkout/83');
 * // { raw: '"payment declined" -test checkout/83',
 * //   fullText: { query: '"payment declined" -test checkout 83', phrase: 'payment declined checkout 83',
 * //     required: ['payment', 'declined', 'checkout', '83'] },
 * //   terms: ['payment', 'declined', 'checkout', '83', '"payment declined" -test checkout/83'] }
 * ```
 */
export function parseFreeText(q: string | undefined): FreeText | undefined {
  const raw = (q ?? '').trim();
  if (raw === '') return undefined;
  // `-` inside a word (`foo-bar`) is punctuation; at the start of a word it negates it.
  const query = raw
    .replace(PUNCTUATION, ' ')
    .replace(/(?<=\S)-/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const positive: string[] = [];
  let hasOr = false;
  /** The last token, when it is a plain word (not quoted, not negated, not `or`). */
  let lastPlain: string | undefined;
  let inQuote = false;
  let negated = false;
  for (const token of query.split(' ')) {
    let text = token;
    // A leading `-` negates the word, or the quoted phrase it opens until the phrase closes.
    if (!inQuote) {
      negated = text.startsWith('-');
      text = text.replace(/^-+/, '');
    }
    const quotes = (text.match(/"/g) ?? []).length;
    const isOperator = !inQuote && quotes === 0 && text.toLowerCase() === 'or';
    if (isOperator) hasOr = true;
    if (!negated && !isOperator) positive.push(...(text.match(WORD) ?? []).map((word) => word.toLowerCase()));
    lastPlain = !inQuote && !negated && !isOperator && PLAIN_WORD.test(text) ? text : undefined;
    if (quotes % 2 === 1) inQuote = !inQuote;
  }
  const terms = [...new Set([...positive, raw.toLowerCase()])];
  if (positive.length === 0) return { raw, terms };
  // A match holds each positive word (or, for the last, its prefix): a substring of its text.
  const required = hasOr ? [] : [...new Set(positive.filter((word) => /^[a-z0-9]+$/.test(word)))];
  const fullText: FullText = { query, required };
  if (lastPlain !== undefined && !inQuote) {
    const rest = query.slice(0, query.length - lastPlain.length).trim();
    fullText.prefix = { rest, last: `'${lastPlain.toLowerCase()}':*` };
  }
  if (positive.length >= 2) fullText.phrase = positive.join(' ');
  return { raw, fullText, terms };
}

/** Longest snippet, in characters. */
const SNIPPET_LENGTH = 160;
/** Characters of context kept before the first term found. */
const SNIPPET_LEAD = 50;

/**
 * The part of `text` around the first of `terms` it holds (case-insensitive), at most 160
 * characters, whitespace collapsed, `…` where it was cut; `undefined` when it holds none.
 *
 * @example
 * ```ts
 * snippetOf('TypeError: Cannot read properties of undefined (reading "checkout")', ['checkout']);
 * // 'TypeError: Cannot read properties of undefined (reading "checkout")'
 * ```
 */
export function snippetOf(text: string, terms: readonly string[]): string | undefined {
  const flat = text.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  let at = -1;
  for (const term of terms) {
    if (term === '') continue;
    const index = lower.indexOf(term);
    if (index !== -1 && (at === -1 || index < at)) at = index;
  }
  if (at === -1) return undefined;
  if (flat.length <= SNIPPET_LENGTH) return flat;
  const start = Math.max(0, Math.min(at - SNIPPET_LEAD, flat.length - SNIPPET_LENGTH));
  const end = Math.min(flat.length, start + SNIPPET_LENGTH);
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}
