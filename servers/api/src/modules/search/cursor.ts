import { invalid } from '../../platform/http/errors.ts';

// A search's pages are an offset into one deterministic order (score, time, type, id): results
// of three tables ranked together have no key to page after. The cursor holds the offset, the
// time the first page ran at (later pages leave out what started after it, so new sessions do
// not shift the pages) and a digest of the query (a cursor passed with another query is a 400).
// Opaque to clients: base64url of a small JSON array, validated on the way in.

/** Results a search pages through at most: offset + limit never passes it. */
export const MAX_SEARCH_RESULTS = 200;

export interface SearchPosition {
  offset: number;
  /** When the first page ran. */
  at: Date;
  /** {@link queryDigest} of the query the cursor continues. */
  digest: string;
}

const MAX_CURSOR_LENGTH = 256;

/**
 * A short digest of what a query asks (everything but `limit` and `cursor`), so a cursor only
 * continues the query it came from. FNV-1a over the canonical JSON; not a security measure.
 */
export function queryDigest(query: Record<string, unknown>): string {
  const { limit: _limit, cursor: _cursor, ...asked } = query;
  const text = JSON.stringify(asked, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([left], [right]) => left.localeCompare(right)))
      : value,
  );
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

/** `[offset, at ms, digest]`. */
export function encodeSearchCursor(position: SearchPosition): string {
  return Buffer.from(
    JSON.stringify([position.offset, position.at.getTime(), position.digest]),
    'utf8',
  ).toString('base64url');
}

/** Throws a 400 `invalid` for anything {@link encodeSearchCursor} did not produce for a query of `digest`. */
export function decodeSearchCursor(cursor: string, digest: string): SearchPosition {
  const bad = invalid('Invalid cursor: pass back the nextCursor of the previous page unchanged');
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad;
  }
  if (!Array.isArray(value) || value.length !== 3) throw bad;
  const [offset, at, from] = value as [unknown, unknown, unknown];
  if (
    !Number.isSafeInteger(offset) ||
    (offset as number) < 1 ||
    (offset as number) >= MAX_SEARCH_RESULTS ||
    !Number.isSafeInteger(at) ||
    (at as number) < 0 ||
    (at as number) > 8_640_000_000_000_000 ||
    typeof from !== 'string'
  )
    throw bad;
  if (from !== digest)
    throw invalid('The cursor belongs to another query: send it with the query of the page it came from');
  return { offset: offset as number, at: new Date(at as number), digest };
}
