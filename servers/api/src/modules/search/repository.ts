import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { sessionSearchText } from '../../platform/database/session-search.ts';
import type { Call } from '../../platform/database/tables/calls.table.ts';
import type { IssueCluster } from '../../platform/database/tables/issues.table.ts';
import type { Session } from '../../platform/database/tables/sessions.table.ts';
import { containsPattern, severitiesAtLeast } from '../sessions/index.ts';
import {
  callDocument,
  callText,
  issueDocument,
  issueText,
  searchedSignals,
  sessionDocument,
  signalDocument,
  signalText,
} from './documents.ts';
import type { FreeText, FullText } from './free-text.ts';
import type { SearchFilters, SearchType } from './query.ts';

// The search's statements. One ranks: per type, the candidates each kind of match finds through
// its index (the newest CANDIDATES of each), scored and cut to the page's reach, then the three
// lists merged into one order and the page taken from it. Then one statement per type reads the
// page's rows for their summaries. Every statement is scoped by the project id and bounded.

/** Matches of each kind (full text, substring, errors and custom events) a type ranks at most. */
const CANDIDATES = 200;

/** What to search, validated and resolved (types the caller may read and the filters apply to). */
export interface SearchPlan {
  projectId: string;
  types: ReadonlySet<SearchType>;
  text: FreeText | undefined;
  filters: SearchFilters;
  /** Sessions and calls started at or after it; issues last seen at or after it. */
  from: Date | undefined;
  /** Sessions and calls started before it; issues first seen before it. */
  to: Date | undefined;
  /** When the first page ran: what started (or was first seen) after it is left out. */
  at: Date;
  offset: number;
  limit: number;
}

/** A result's place in the order, before its summary is read. */
export interface SearchHit {
  type: SearchType;
  id: string;
  score: number;
  /** Session or call start, issue last seen. */
  t: Date;
  /** The error or custom event whose text matched ("Name: message"), when that is how it matched. */
  matched: string | null;
  /** When that event happened (sessions). */
  matched_at: Date | null;
}

// Scores. A match in what happened (a session's errors and custom events; a call's failure,
// findings and network; an issue's title or error messages) counts 4, in what describes the item
// (a session's URL, user, release, environment; a call's session) 2, as a substring only 1; the
// sum ranks. Within a kind: + 0.4 × ts_rank_cd (cover density, normalized to 0..1: nearer and more
// matches rank higher) + 0.5 when the words appear as a phrase. So any match in what happened
// (≥ 4) outranks any item without one (≤ 2.9 + 1). Ties: newest first.
const HAPPENED = 4;
const DESCRIBES = 2;
const SUBSTRING = 1;

/** The tsquery of a full text: the words, or the words with the last one as a prefix. */
function tsQuery(fullText: FullText): RawBuilder<unknown> {
  const words = sql`websearch_to_tsquery('simple', ${fullText.query})`;
  if (fullText.prefix === undefined) return words;
  // The words themselves stay in the query, though their prefix matches them too: the planner
  // estimates how many rows hold a word from the index's statistics, and a prefix only by a guess.
  return sql`(${words} || (websearch_to_tsquery('simple', ${fullText.prefix.rest}) && to_tsquery('simple', ${fullText.prefix.last})))`;
}

/**
 * `document` matches the full text. Its GIN index finds the rows; where the plan walks rows in
 * time order instead (a common word), `text`, what the document is made of, is tested first for
 * the words a match holds (`ILIKE`, a few times cheaper than computing the row's `to_tsvector`).
 * Written as `ILIKE ALL (…)`, which no index serves: an `ILIKE` the trigram index could serve
 * would join its bitmap to the GIN one, and every row of the lossy trigram bitmap would then have
 * its document computed for the recheck.
 */
function matching(document: RawBuilder<unknown>, text: RawBuilder<unknown>, fullText: FullText) {
  const match = sql`${document} @@ ${tsQuery(fullText)}`;
  if (fullText.required.length === 0) return match;
  const patterns = fullText.required.map((word) => `%${word}%`);
  return sql`${text} ilike all (${sql.val(patterns)}::text[]) and ${match}`;
}

/** `weight` + rank + phrase bonus when `document` matches, else 0 (float8). */
function matchScore(document: RawBuilder<unknown>, fullText: FullText, weight: number): RawBuilder<number> {
  const query = tsQuery(fullText);
  const phrase =
    fullText.phrase === undefined
      ? sql``
      : sql` + 0.5 * (${document} @@ phraseto_tsquery('simple', ${fullText.phrase}))::int`;
  return sql<number>`(case when ${document} @@ ${query} then ${sql.lit(weight)} + 0.4 * ts_rank_cd(${document}, ${query}, 32)::float8${phrase} else 0 end)::float8`;
}

/** 1 when `text` holds `pattern` (`ILIKE`), else 0 (float8). */
const substringScore = (text: RawBuilder<unknown>, pattern: string) =>
  sql<number>`(case when ${text} ilike ${pattern} then ${sql.lit(SUBSTRING)} else 0 end)::float8`;

const and = (conditions: readonly RawBuilder<unknown>[]) => sql.join(conditions, sql` and `);

/** Ids of `table`'s rows matching `where`, newest first, at most CANDIDATES. */
function candidates(table: 'sessions' | 'calls', where: readonly RawBuilder<unknown>[]): RawBuilder<unknown> {
  return sql`(select id from ${sql.table(table)} where ${and(where)} order by started_at desc, id desc limit ${CANDIDATES})`;
}

/** Matching errors and custom events a search looks at, at most (the newest). */
const SIGNAL_MATCHES = 10_000;

/**
 * `signal_matches`: the newest errors and custom events whose text matches (at most
 * SIGNAL_MATCHES), once for the sessions they belong to and the issues they are occurrences of.
 * Bounded by the plan's time range: a session's events come after its start, and within 31 days
 * of it (the longest session the duration filters take).
 */
function signalMatches(plan: SearchPlan, fullText: FullText): RawBuilder<unknown> {
  const where = [
    sql`project_id = ${plan.projectId}`,
    searchedSignals,
    matching(signalDocument, signalText, fullText),
  ];
  if (plan.from !== undefined) where.push(sql`t >= ${plan.from}`);
  if (plan.to !== undefined) where.push(sql`t < ${plan.to}::timestamptz + interval '31 days'`);
  return sql`signal_matches as (
    select project_id, session_id, seq, event_index, t, kind, name, message from session_signals
    where ${and(where)} order by t desc limit ${SIGNAL_MATCHES}
  )`;
}

// ---------------------------------------------------------------------------------------------
// Sessions

/** The plan's conditions on a row of `sessions` (bare column names: `from sessions`). */
function sessionConditions(plan: SearchPlan): RawBuilder<unknown>[] {
  const { filters } = plan;
  const where: RawBuilder<unknown>[] = [sql`project_id = ${plan.projectId}`, sql`started_at <= ${plan.at}`];
  if (plan.from !== undefined) where.push(sql`started_at >= ${plan.from}`);
  if (plan.to !== undefined) where.push(sql`started_at < ${plan.to}`);
  if (filters.browser !== undefined) where.push(sql`lower(browser_name) = ${filters.browser.toLowerCase()}`);
  if (filters.os !== undefined) where.push(sql`lower(os_name) = ${filters.os.toLowerCase()}`);
  if (filters.device !== undefined) where.push(sql`device = ${filters.device}`);
  if (filters.release !== undefined) where.push(sql`release = ${filters.release}`);
  if (filters.environment !== undefined) where.push(sql`environment = ${filters.environment}`);
  if (filters.user !== undefined)
    where.push(sql`(user_id = ${filters.user} or user_email = ${filters.user})`);
  if (filters.hasErrors !== undefined)
    where.push(filters.hasErrors ? sql`error_count > 0` : sql`error_count = 0`);
  if (filters.urlContains !== undefined) where.push(sql`url ilike ${containsPattern(filters.urlContains)}`);
  if (filters.minDurationSec !== undefined)
    where.push(sql`duration_ms >= ${Math.ceil(filters.minDurationSec * 1000)}`);
  if (filters.maxDurationSec !== undefined)
    where.push(sql`duration_ms <= ${Math.floor(filters.maxDurationSec * 1000)}`);
  if (filters.severity !== undefined)
    where.push(sql`level in (${sql.join(severitiesAtLeast(filters.severity))})`);
  return where;
}

function sessionHits(plan: SearchPlan, need: number): RawBuilder<unknown> {
  const where = sessionConditions(plan);
  const text = plan.text;
  if (text === undefined)
    return sql`select id, started_at as t, 0::float8 as score, null::text as matched, null::timestamptz as matched_at
      from sessions where ${and(where)} order by started_at desc, id desc limit ${need}`;
  const pattern = containsPattern(text.raw);
  const fullText = text.fullText;
  const sources = [candidates('sessions', [...where, sql`${sessionSearchText} ilike ${pattern}`])];
  // Each candidate read by its key (a nested loop, whatever the estimates).
  const byId = sql`cross join lateral (select * from sessions where project_id = ${plan.projectId} and id = k.id offset 0) s`;
  if (fullText === undefined)
    return sql`select s.id, s.started_at as t, ${sql.lit(SUBSTRING)}::float8 as score, null::text as matched,
        null::timestamptz as matched_at
      from ${sources[0]} k ${byId}
      order by score desc, t desc, id desc limit ${need}`;
  const query = tsQuery(fullText);
  sources.push(
    candidates('sessions', [...where, matching(sessionDocument, sessionSearchText, fullText)]),
    candidates('sessions', [...where, sql`id = any(array(select session_id from signal_matches))`]),
  );
  // The best of the session's errors and custom events (its first 200: a session that tracks
  // thousands of custom events costs no more than that).
  return sql`select s.id, s.started_at as t,
      coalesce(best.score, 0) + ${matchScore(sql`d.document`, fullText, DESCRIBES)}
        + ${substringScore(sessionSearchText, pattern)} as score,
      best.text as matched, best.t as matched_at
    from (${sql.join(sources, sql` union `)}) k
    ${byId}
    cross join lateral (select ${sessionDocument} as document offset 0) d
    left join lateral (
      select ${matchScore(sql`g.document`, fullText, HAPPENED)} as score,
        g.name || coalesce(': ' || g.message, '') as text, g.t
      from (
        select name, message, t, ${signalDocument} as document from session_signals
        where project_id = s.project_id and session_id = s.id and ${searchedSignals}
        order by seq, event_index limit 200
      ) g
      where g.document @@ ${query}
      order by score desc, g.t limit 1
    ) best on true
    order by score desc, t desc, id desc limit ${need}`;
}

// ---------------------------------------------------------------------------------------------
// Calls

/** The session of the call (`from calls`) satisfies `condition` (on bare session columns). */
const callSession = (condition: RawBuilder<unknown>) =>
  sql`exists (select 1 from sessions where sessions.project_id = calls.project_id and sessions.id = calls.session_id and ${condition})`;

/** The plan's conditions on a row of `calls` (bare column names: `from calls`). */
function callConditions(plan: SearchPlan): RawBuilder<unknown>[] {
  const { filters } = plan;
  const where: RawBuilder<unknown>[] = [sql`project_id = ${plan.projectId}`, sql`started_at <= ${plan.at}`];
  if (plan.from !== undefined) where.push(sql`started_at >= ${plan.from}`);
  if (plan.to !== undefined) where.push(sql`started_at < ${plan.to}`);
  if (filters.browser !== undefined) where.push(sql`lower(browser_name) = ${filters.browser.toLowerCase()}`);
  if (filters.os !== undefined) where.push(sql`lower(os_name) = ${filters.os.toLowerCase()}`);
  if (filters.device !== undefined) where.push(sql`device = ${filters.device}`);
  if (filters.release !== undefined) where.push(sql`release = ${filters.release}`);
  if (filters.environment !== undefined) where.push(sql`environment = ${filters.environment}`);
  if (filters.user !== undefined)
    where.push(sql`(end_user_id = ${filters.user} or ${callSession(sql`user_email = ${filters.user}`)})`);
  if (filters.urlContains !== undefined)
    where.push(callSession(sql`url ilike ${containsPattern(filters.urlContains)}`));
  if (filters.minDurationSec !== undefined)
    where.push(sql`duration_ms >= ${Math.ceil(filters.minDurationSec * 1000)}`);
  if (filters.maxDurationSec !== undefined)
    where.push(sql`duration_ms <= ${Math.floor(filters.maxDurationSec * 1000)}`);
  if (filters.relayed !== undefined) where.push(sql`relayed = ${filters.relayed}`);
  if (filters.failedToConnect !== undefined) where.push(sql`failed_to_connect = ${filters.failedToConnect}`);
  if (filters.minQuality !== undefined) where.push(sql`quality_score >= ${filters.minQuality}`);
  if (filters.maxQuality !== undefined) where.push(sql`quality_score <= ${filters.maxQuality}`);
  if (filters.severity !== undefined)
    where.push(sql`max_severity in (${sql.join(severitiesAtLeast(filters.severity))})`);
  return where;
}

function callHits(plan: SearchPlan, need: number): RawBuilder<unknown> {
  const where = callConditions(plan);
  const text = plan.text;
  if (text === undefined)
    return sql`select id, started_at as t, 0::float8 as score, null::text as matched, null::timestamptz as matched_at
      from calls where ${and(where)} order by started_at desc, id desc limit ${need}`;
  const pattern = containsPattern(text.raw);
  const fullText = text.fullText;
  const sessionsMatching = (condition: RawBuilder<unknown>) =>
    sql`session_id in (select id from sessions where project_id = ${plan.projectId} and ${condition})`;
  const sources = [
    candidates('calls', [...where, sessionsMatching(sql`${sessionSearchText} ilike ${pattern}`)]),
  ];
  const byId = sql`cross join lateral (select * from calls where project_id = ${plan.projectId} and id = k.id offset 0) c`;
  if (fullText === undefined)
    return sql`select c.id, c.started_at as t, ${sql.lit(SUBSTRING)}::float8 as score, null::text as matched,
        null::timestamptz as matched_at
      from ${sources[0]} k ${byId}
      order by score desc, t desc, id desc limit ${need}`;
  sources.push(
    candidates('calls', [...where, matching(callDocument, callText, fullText)]),
    candidates('calls', [...where, sessionsMatching(matching(sessionDocument, sessionSearchText, fullText))]),
  );
  return sql`select c.id, c.started_at as t,
      ${matchScore(sql`d.document`, fullText, HAPPENED)} + coalesce(sx.score, 0) as score,
      null::text as matched, null::timestamptz as matched_at
    from (${sql.join(sources, sql` union `)}) k
    ${byId}
    cross join lateral (select ${callDocument} as document offset 0) d
    left join lateral (
      select ${matchScore(sql`x.document`, fullText, DESCRIBES)} + ${substringScore(sessionSearchText, pattern)} as score
      from sessions cross join lateral (select ${sessionDocument} as document offset 0) x
      where sessions.project_id = c.project_id and sessions.id = c.session_id
    ) sx on true
    order by score desc, t desc, id desc limit ${need}`;
}

// ---------------------------------------------------------------------------------------------
// Issues

/** The plan's conditions on a row of `issue_clusters` (bare column names). */
function issueConditions(plan: SearchPlan): RawBuilder<unknown>[] {
  const { filters } = plan;
  const where: RawBuilder<unknown>[] = [
    sql`project_id = ${plan.projectId}`,
    sql`first_seen_at <= ${plan.at}`,
  ];
  if (plan.from !== undefined) where.push(sql`last_seen_at >= ${plan.from}`);
  if (plan.to !== undefined) where.push(sql`first_seen_at < ${plan.to}`);
  if (filters.status !== undefined) where.push(sql`status = ${filters.status}`);
  if (filters.kind !== undefined) where.push(sql`kind = ${filters.kind}`);
  if (filters.severity !== undefined)
    where.push(sql`severity in (${sql.join(severitiesAtLeast(filters.severity))})`);
  return where;
}

/** Ids of issue clusters matching `where`, most recently seen first, at most CANDIDATES. */
const issueCandidates = (where: readonly RawBuilder<unknown>[]) =>
  sql`(select id from issue_clusters where ${and(where)} order by last_seen_at desc, id desc limit ${CANDIDATES})`;

/**
 * The issues' part of the ranking statement: its `with` entries (the error messages that match,
 * from the newest CANDIDATES matching errors) and its hits.
 */
function issueHits(
  plan: SearchPlan,
  need: number,
): { with: RawBuilder<unknown>[]; hits: RawBuilder<unknown> } {
  const where = issueConditions(plan);
  const text = plan.text;
  if (text === undefined)
    return {
      with: [],
      hits: sql`select id, last_seen_at as t, 0::float8 as score, null::text as matched,
          null::timestamptz as matched_at
        from issue_clusters where ${and(where)} order by last_seen_at desc, id desc limit ${need}`,
    };
  const pattern = containsPattern(text.raw);
  const fullText = text.fullText;
  const sources = [issueCandidates([...where, sql`title ilike ${pattern}`])];
  const byId = sql`cross join lateral (select * from issue_clusters where project_id = ${plan.projectId} and id = k.id offset 0) i`;
  if (fullText === undefined)
    return {
      with: [],
      hits: sql`select i.id, i.last_seen_at as t, ${substringScore(sql`i.title`, pattern)} as score,
          null::text as matched, null::timestamptz as matched_at
        from ${sources[0]} k ${byId}
        order by score desc, t desc, id desc limit ${need}`,
    };
  // The newest matching errors, each with the cluster of its occurrence (`error:<seq>:<index>`,
  // looked up by key), and per cluster the best of them.
  const messages = sql`issue_messages as (
      select distinct on (cluster_id) cluster_id, score, text from (
        select o.cluster_id, ${matchScore(signalDocument, fullText, HAPPENED)} as score,
          g.name || coalesce(': ' || g.message, '') as text, g.t as signal_t
        from (select * from signal_matches where kind = 'error' order by t desc limit ${CANDIDATES}) g
        cross join lateral (
          select cluster_id from cluster_occurrences
          where project_id = g.project_id and session_id = g.session_id
            and occurrence_key = 'error:' || g.seq || ':' || g.event_index
        ) o
      ) matched
      order by cluster_id, score desc, signal_t desc
    )`;
  sources.push(
    issueCandidates([...where, matching(issueDocument, issueText, fullText)]),
    issueCandidates([...where, sql`id in (select cluster_id from issue_messages)`]),
  );
  return {
    with: [messages],
    hits: sql`select i.id, i.last_seen_at as t,
        ${matchScore(sql`d.document`, fullText, HAPPENED)} + coalesce(m.score, 0)
          + ${substringScore(sql`i.title`, pattern)} as score,
        m.text as matched, null::timestamptz as matched_at
      from (${sql.join(sources, sql` union `)}) k
      ${byId}
      cross join lateral (select ${issueDocument} as document offset 0) d
      left join issue_messages m on m.cluster_id = i.id
      order by score desc, t desc, id desc limit ${need}`,
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * One page of a search: the hits at `plan.offset` of the order (score, time, type, id), at most
 * `plan.limit`, and whether more follow. One statement.
 *
 * @example
 * ```ts
 * const { hits, more } = await findSearchHits(database, plan);
 * ```
 */
export async function findSearchHits(
  database: Kysely<Database>,
  plan: SearchPlan,
): Promise<{ hits: SearchHit[]; more: boolean }> {
  const need = plan.offset + plan.limit + 1;
  const entries: RawBuilder<unknown>[] = [];
  const fullText = plan.text?.fullText;
  if (fullText !== undefined && (plan.types.has('session') || plan.types.has('issue')))
    entries.push(signalMatches(plan, fullText));
  const branches: RawBuilder<unknown>[] = [];
  if (plan.types.has('session')) {
    entries.push(sql`session_hits as (${sessionHits(plan, need)})`);
    branches.push(sql`select 'session' as type, id, score, t, matched, matched_at from session_hits`);
  }
  if (plan.types.has('call')) {
    entries.push(sql`call_hits as (${callHits(plan, need)})`);
    branches.push(sql`select 'call' as type, id, score, t, matched, matched_at from call_hits`);
  }
  if (plan.types.has('issue')) {
    const issues = issueHits(plan, need);
    entries.push(...issues.with, sql`issue_hits as (${issues.hits})`);
    branches.push(sql`select 'issue' as type, id, score, t, matched, matched_at from issue_hits`);
  }
  if (branches.length === 0) return { hits: [], more: false };
  const result = await sql<SearchHit>`
    with ${sql.join(entries)}
    select type, id, score, t, matched, matched_at from (${sql.join(branches, sql` union all `)}) hits
    order by score desc, t desc, type, id desc
    limit ${plan.limit + 1} offset ${plan.offset}`.execute(database);
  const rows = result.rows.map((row) => ({ ...row, t: new Date(row.t), score: Number(row.score) }));
  return { hits: rows.slice(0, plan.limit), more: rows.length > plan.limit };
}

/** What a session result shows. */
export type SessionRow = Pick<
  Session,
  | 'id'
  | 'started_at'
  | 'duration_ms'
  | 'url'
  | 'user_id'
  | 'user_email'
  | 'user_name'
  | 'browser_name'
  | 'browser_version'
  | 'os_name'
  | 'device'
  | 'release'
  | 'environment'
  | 'error_count'
  | 'level'
>;

/** The project's sessions `ids` (any order). */
export async function findSessionRows(
  database: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
): Promise<SessionRow[]> {
  if (ids.length === 0) return [];
  return database
    .selectFrom('sessions')
    .select([
      'id',
      'started_at',
      'duration_ms',
      'url',
      'user_id',
      'user_email',
      'user_name',
      'browser_name',
      'browser_version',
      'os_name',
      'device',
      'release',
      'environment',
      'error_count',
      'level',
    ])
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .execute();
}

/** What a call result shows, with its session's URL and user. */
export type CallRow = Pick<
  Call,
  | 'id'
  | 'session_id'
  | 'started_at'
  | 'duration_ms'
  | 'state'
  | 'failed_to_connect'
  | 'failure_reason'
  | 'relayed'
  | 'network_type'
  | 'quality_score'
  | 'browser_name'
  | 'os_name'
  | 'device'
  | 'issue_kinds'
  | 'release'
  | 'environment'
  | 'end_user_id'
> & { session_url: string | null; session_user_email: string | null };

/** The project's calls `ids` (any order), without their series. */
export async function findCallRows(
  database: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
): Promise<CallRow[]> {
  if (ids.length === 0) return [];
  return database
    .selectFrom('calls')
    .leftJoin('sessions', (join) =>
      join
        .onRef('sessions.project_id', '=', 'calls.project_id')
        .onRef('sessions.id', '=', 'calls.session_id'),
    )
    .select([
      'calls.id',
      'calls.session_id',
      'calls.started_at',
      'calls.duration_ms',
      'calls.state',
      'calls.failed_to_connect',
      'calls.failure_reason',
      'calls.relayed',
      'calls.network_type',
      'calls.quality_score',
      'calls.browser_name',
      'calls.os_name',
      'calls.device',
      'calls.issue_kinds',
      'calls.release',
      'calls.environment',
      'calls.end_user_id',
      'sessions.url as session_url',
      'sessions.user_email as session_user_email',
    ])
    .where('calls.project_id', '=', projectId)
    .where('calls.id', 'in', ids)
    .execute();
}

/** The project's issue clusters `ids` (any order). */
export async function findIssueRows(
  database: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
): Promise<IssueCluster[]> {
  if (ids.length === 0) return [];
  return database
    .selectFrom('issue_clusters')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .execute();
}

/** How often an issue occurred: in all, and since a time (`count24h`). */
export interface IssueCounts {
  cluster_id: string;
  recent: number;
  occurrences: number;
}

/**
 * The occurrence counts of the project's clusters `ids`: two counts over each cluster's entries
 * of the `(project_id, cluster_id, seen_at)` index, nothing sorted (no cluster without any).
 */
export async function countIssueOccurrences(
  database: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
  since: Date,
): Promise<IssueCounts[]> {
  if (ids.length === 0) return [];
  return database
    .selectFrom('cluster_occurrences')
    .select(({ fn }) => [
      'cluster_id',
      sql<number>`count(*) filter (where seen_at > ${since})`.as('recent'),
      fn.countAll<number>().as('occurrences'),
    ])
    .where('project_id', '=', projectId)
    .where('cluster_id', 'in', ids)
    .groupBy('cluster_id')
    .execute();
}
