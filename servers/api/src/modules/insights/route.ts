// Route normalization: the route of a page view is its URL path with the id-like segments replaced
// by `:id`, unless one of the project's route patterns matches it (servers/api/README.md, Insights).

/** The segment that stands for an id in a normalized route. */
const ID_SEGMENT = ':id';

const DIGITS = /^\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** 26 Crockford base32 characters (no I, L, O, U), the first 0-7 (a 48-bit time). */
const ULID = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/i;
const LONG_HEX = /^[0-9a-f]{16,}$/i;
/** 20 or more letters and digits, with at least one of each (nanoid, cuid, Stripe-like ids). */
const MIXED = /^(?=[a-z0-9]*[a-z])(?=[a-z0-9]*\d)[a-z0-9]{20,}$/i;
const SCHEME_AND_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i;

/**
 * Whether a path segment is an id: all digits, a UUID (any version, any case), a ULID (26
 * Crockford base32 characters starting with 0-7), 16 or more hex digits, or 20 or more ASCII
 * letters and digits with at least one of each. Words, slugs with hyphens (`my-post-2024`) and
 * short codes are not.
 */
function isIdSegment(segment: string): boolean {
  return (
    DIGITS.test(segment) ||
    UUID.test(segment) ||
    ULID.test(segment) ||
    LONG_HEX.test(segment) ||
    MIXED.test(segment)
  );
}

/**
 * The non-empty segments of a URL's or a path's path: the hash and the query go, then a leading
 * `scheme://authority`. Percent-encoding is kept as sent (never decoded or re-encoded), and so
 * are `.` and `..`; empty segments (a trailing slash, `//`) are dropped.
 */
function pathSegments(urlOrPath: string): string[] {
  let path = urlOrPath;
  const hash = path.indexOf('#');
  if (hash !== -1) path = path.slice(0, hash);
  const query = path.indexOf('?');
  if (query !== -1) path = path.slice(0, query);
  path = path.replace(SCHEME_AND_AUTHORITY, '');
  return path.split('/').filter((segment) => segment !== '');
}

function joinSegments(segments: readonly string[]): string {
  return `/${segments.join('/')}`;
}

function matchesPattern(segments: readonly string[], pattern: readonly string[]): boolean {
  return (
    segments.length === pattern.length &&
    pattern.every((part, index) => part.startsWith(':') || part === segments[index])
  );
}

/**
 * The route of a URL or a path: its path without origin, query and hash, with id-like segments
 * replaced by `:id`, or the first of `patterns` that matches it. A pattern (`/docs/:slug`,
 * `/u/:id/settings`) matches a path with as many segments, segment by segment, where a `:name`
 * segment matches any one segment and any other must be equal; the route is then the pattern
 * itself (normalized the same way: no trailing slash). Routes start with `/` and end without one
 * (`/` alone for an empty path); a route normalizes to itself.
 *
 * @example
 * ```ts
 * normalizeRoute('https://app.example.com/orders/42/items/?tab=2#top'); // '/orders/:id/items'
 * normalizeRoute('/docs/getting-started', ['/docs/:slug']); // '/docs/:slug'
 * ```
 */
export function normalizeRoute(urlOrPath: string, patterns: readonly string[] = []): string {
  const segments = pathSegments(urlOrPath);
  for (const pattern of patterns) {
    const patternSegments = pathSegments(pattern);
    if (matchesPattern(segments, patternSegments)) return joinSegments(patternSegments);
  }
  return joinSegments(segments.map((segment) => (isIdSegment(segment) ? ID_SEGMENT : segment)));
}
