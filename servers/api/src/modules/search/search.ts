import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Scope } from '../../platform/http/authentication.ts';
import { forbidden, invalid } from '../../platform/http/errors.ts';
import { decodeSearchCursor, encodeSearchCursor, MAX_SEARCH_RESULTS, queryDigest } from './cursor.ts';
import { parseFreeText } from './free-text.ts';
import {
  DEFAULT_SEARCH_LIMIT,
  SEARCH_TYPES,
  type SearchFilters,
  type SearchQuery,
  type SearchType,
} from './query.ts';
import {
  countIssueOccurrences,
  findCallRows,
  findIssueRows,
  findSearchHits,
  findSessionRows,
} from './repository.ts';
import {
  type SearchAnswer,
  type SearchResult,
  toCallResult,
  toIssueResult,
  toSessionResult,
} from './views.ts';

/** The scope that reads each result type. */
export const SEARCH_SCOPES: Readonly<Record<SearchType, Scope>> = {
  session: 'sessions:read',
  call: 'calls:read',
  issue: 'issues:read',
};

/** Which result types each filter applies to (the others are left out when it is given). */
const FILTER_TYPES: Readonly<Record<keyof SearchFilters, readonly SearchType[]>> = {
  browser: ['session', 'call'],
  os: ['session', 'call'],
  device: ['session', 'call'],
  release: ['session', 'call'],
  environment: ['session', 'call'],
  user: ['session', 'call'],
  urlContains: ['session', 'call'],
  minDurationSec: ['session', 'call'],
  maxDurationSec: ['session', 'call'],
  hasErrors: ['session'],
  relayed: ['call'],
  failedToConnect: ['call'],
  minQuality: ['call'],
  maxQuality: ['call'],
  status: ['issue'],
  kind: ['issue'],
  severity: ['session', 'call', 'issue'],
};

const PLURAL: Readonly<Record<SearchType, string>> = { session: 'sessions', call: 'calls', issue: 'issues' };
const listed = (types: readonly SearchType[]) => types.map((type) => PLURAL[type]).join(' and ');

/**
 * The result types a query searches: those it asks for (default: every type), each needing its
 * read scope, narrowed to those every given filter applies to. Asking for a type without its
 * scope is a 403 naming the scope; asking for a type a filter does not apply to, or giving
 * filters no type takes together, a 400; filters that only apply to types the caller may not
 * read, a 403.
 *
 * @example
 * ```ts
 * resolveTypes({ filters: { relayed: true } }, new Set(['sessions:read', 'calls:read'])); // Set { 'call' }
 * ```
 */
export function resolveTypes(query: SearchQuery, scopes: ReadonlySet<Scope>): Set<SearchType> {
  const asked = query.types === undefined ? undefined : [...new Set(query.types)];
  for (const type of asked ?? []) {
    if (!scopes.has(SEARCH_SCOPES[type]))
      throw forbidden(
        `Searching ${PLURAL[type]} needs the ${SEARCH_SCOPES[type]} scope, which this caller lacks`,
      );
  }
  const given = Object.entries(query.filters ?? {})
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name as keyof SearchFilters);
  let types: SearchType[] = asked ?? [...SEARCH_TYPES];
  for (const filter of given) {
    const applies = FILTER_TYPES[filter];
    if (asked !== undefined) {
      const outside = asked.filter((type) => !applies.includes(type));
      if (outside.length > 0)
        throw invalid(
          `The filter \`${filter}\` applies to ${listed(applies)} only: remove ${listed(outside)} from \`types\`, or the filter`,
        );
    }
    types = types.filter((type) => applies.includes(type));
  }
  const describe = (filter: keyof SearchFilters) => `\`${filter}\` (${listed(FILTER_TYPES[filter])})`;
  if (types.length === 0)
    throw invalid(`No result type takes all of these filters: ${given.map(describe).join(', ')}`);
  const readable = types.filter((type) => scopes.has(SEARCH_SCOPES[type]));
  if (readable.length === 0)
    throw forbidden(
      `Searching ${listed(types)} needs the ${types.map((type) => SEARCH_SCOPES[type]).join(' or ')} scope, which this caller lacks${given.length === 0 ? '' : ` (the filters given apply to ${listed(types)} only)`}`,
    );
  return new Set(readable);
}

/** Who searches: the project every statement is scoped to, and the caller's scopes. */
export interface SearchAccess {
  projectId: string;
  scopes: ReadonlySet<Scope>;
}

/**
 * Runs a search (`POST /v1/search`, the MCP endpoint's search tool, the model's tool calls) over
 * the project's sessions, calls and issues the caller may read. `query` must have passed
 * `searchQuerySchema`. Throws an `ApiError`: 403 for a type the caller may not read, 400 for
 * filters no type takes or a bad cursor.
 *
 * @example
 * ```ts
 * const page = await search(database, { projectId, scopes }, searchQuerySchema.parse({ q: 'checkout' }));
 * page.items[0]; // { type: 'session', id: 'ses_…', score: 4.03, title, snippet, t, url: '/sessions/ses_…?t=8200', session: {…} }
 * ```
 */
export async function search(
  database: Kysely<Database>,
  access: SearchAccess,
  query: SearchQuery,
  now: Date = new Date(),
): Promise<SearchAnswer> {
  const types = resolveTypes(query, access.scopes);
  const digest = queryDigest(query);
  const position =
    query.cursor === undefined ? { offset: 0, at: now, digest } : decodeSearchCursor(query.cursor, digest);
  const limit = Math.min(query.limit ?? DEFAULT_SEARCH_LIMIT, MAX_SEARCH_RESULTS - position.offset);
  const text = parseFreeText(query.q);
  const { hits, more } = await findSearchHits(database, {
    projectId: access.projectId,
    types,
    text,
    filters: query.filters ?? {},
    from: query.from === undefined ? undefined : new Date(query.from),
    to: query.to === undefined ? undefined : new Date(query.to),
    at: position.at,
    offset: position.offset,
    limit,
  });

  const idsOf = (type: SearchType) => hits.filter((hit) => hit.type === type).map((hit) => hit.id);
  const issueIds = idsOf('issue');
  const [sessions, calls, issues, counts] = await Promise.all([
    findSessionRows(database, access.projectId, idsOf('session')),
    findCallRows(database, access.projectId, idsOf('call')),
    findIssueRows(database, access.projectId, issueIds),
    countIssueOccurrences(database, access.projectId, issueIds, new Date(now.getTime() - 24 * 3600 * 1000)),
  ]);
  const sessionById = new Map(sessions.map((row) => [row.id, row]));
  const callById = new Map(calls.map((row) => [row.id, row]));
  const issueById = new Map(issues.map((row) => [row.id, row]));
  const countsById = new Map(counts.map((row) => [row.cluster_id, row]));
  const items: SearchResult[] = [];
  for (const hit of hits) {
    // A row deleted between the two statements is left out.
    if (hit.type === 'session') {
      const row = sessionById.get(hit.id);
      if (row !== undefined) items.push(toSessionResult(hit, row, text));
    } else if (hit.type === 'call') {
      const row = callById.get(hit.id);
      if (row !== undefined) items.push(toCallResult(hit, row, text));
    } else {
      const row = issueById.get(hit.id);
      if (row !== undefined) items.push(toIssueResult(hit, row, countsById.get(hit.id), text));
    }
  }
  const next = position.offset + limit;
  return {
    items,
    nextCursor:
      more && next < MAX_SEARCH_RESULTS
        ? encodeSearchCursor({ offset: next, at: position.at, digest })
        : undefined,
  };
}
