import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { sessionSearchText } from '../../platform/database/session-search.ts';
import type { Call } from '../../platform/database/tables/calls.table.ts';
import type { IssueCluster } from '../../platform/database/tables/issues.table.ts';
import type { Session } from '../../platform/database/tables/sessions.table.ts';
import { containsPattern, severitiesAtLeast } from '../sessions/index.ts';
import {
  callDocument,
  issueDocument,
  searchedSignals,
  sessionDocument,
  signalDocument,
} from './documents.ts';
import type { FreeText, FullText } from './free-text.ts';
import type { SearchFilters, SearchType } from './query.ts';

// The search's statements. One ranks: per type, the candidates each kind of match finds through
// its index (the newest CANDIDATES of each), scored and cut to the page's reach, then the three
// lists merged into one order and the page taken from it. Then one statement per type reads the
// page's rows for their summaries. Every statement is scoped by the project id and bounded.

/** Matches of each kind (full text, substring, errors and custom events) a type ranks at most. */
const CANDIDATES = 500;

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
  return sql`(${words} || (websearch_to_tsquery('simple', ${fullText.prefix.rest}) && to_tsquery('simple', ${fullText.prefix.last})))`;
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

const and = (conditions: readonly RawBuilder<unknown>[]) => sql.join(conditions, sql` and `);

/** Ids of `table`'s rows matching `where`, newest first, at most CANDIDATES. */
function candidates(table: 'sessions' | 'calls', where: readonly RawBuilder<unknown>[]): RawBuilder<unknown> {
  return sql`(select id from ${sql.table(table)} where ${and(where)} order by started_at desc, id desc limit ${CANDIDATES})`;
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
  if (fullText === undefined)
    return sql`select s.id, s.started_at as t, ${sql.lit(SUBSTRING)}::float8 as score, null::text as matched,
        null::timestamptz as matched_at
      from ${sources[0]} k join sessions s on s.project_id = ${plan.projectId} and s.id = k.id
      order by score desc, t desc, id desc limit ${need}`;
  const query = tsQuery(fullText);
  sources.push(
    candidates('sessions', [...where, sql`${sessionDocument} @@ ${query}`]),
    candidates('sessions', [
      ...where,
      sql`id in (select session_id from session_signals where project_id = ${plan.projectId} and ${searchedSignals}
        and ${signalDocument} @@ ${query})`,
    ]),
  );
  // The best of the session's errors and custom events (its first 200: a session that tracks
  // thousands of custom events costs no more than that).
  return sql`select s.id, s.started_at as t,
      coalesce(best.score, 0) + ${matchScore(sql`d.document`, fullText, DESCRIBES)}
        + (case when ${sessionSearchText} ilike ${pattern} then ${sql.lit(SUBSTRING)} else 0 end)::float8 as score,
      best.text as matched, best.t as matched_at
    from (${sql.join(sources, sql` union `)}) k
    join sessions s on s.project_id = ${plan.projectId} and s.id = k.id
    cross join lateral (select ${sessionDocument} as document) d
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
  const substring = sql`(case when ${sessionSearchText} ilike ${pattern} then ${sql.lit(SUBSTRING)} else 0 end)::float8`;
  if (fullText === undefined)
    return sql`select c.id, c.started_at as t, ${sql.lit(SUBSTRING)}::float8 as score, null::text as matched,
        null::timestamptz as matched_at
      from ${sources[0]} k join calls c on c.project_id = ${plan.projectId} and c.id = k.id
      order by score desc, t desc, id desc limit ${need}`;
  const query = tsQuery(fullText);
  sources.push(
    candidates('calls', [...where, sql`${callDocument} @@ ${query}`]),
    candidates('calls', [...where, sessionsMatching(sql`${sessionDocument} @@ ${query}`)]),
  );
  return sql`select c.id, c.started_at as t,
      ${matchScore(sql`d.document`, fullText, HAPPENED)} + coalesce(sx.score, 0) as score,
      null::text as matched, null::timestamptz as matched_at
    from (${sql.join(sources, sql` union `)}) k
    join calls c on c.project_id = ${plan.projectId} and c.id = k.id
    cross join lateral (select ${callDocument} as document) d
    left join lateral (
      select ${matchScore(sql`x.document`, fullText, DESCRIBES)} + ${substring} as score
      from sessions cross join lateral (select ${sessionDocument} as document) x
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
  const substring = sql`(case when i.title ilike ${pattern} then ${sql.lit(SUBSTRING)} else 0 end)::float8`;
  if (fullText === undefined)
    return {
      with: [],
      hits: sql`select i.id, i.last_seen_at as t, ${substring} as score, null::text as matched,
          null::timestamptz as matched_at
        from ${sources[0]} k join issue_clusters i on i.project_id = ${plan.projectId} and i.id = k.id
        order by score desc, t desc, id desc limit ${need}`,
    };
  const query = tsQuery(fullText);
  // An error occurrence `error:<seq>:<index>` is that signal of its session.
  const messages = sql`issue_messages as (
      select distinct on (cluster_id) cluster_id, score, text from (
        select o.cluster_id, ${matchScore(signalDocument, fullText, HAPPENED)} as score,
          g.name || coalesce(': ' || g.message, '') as text, g.t as signal_t
        from session_signals g
        join cluster_occurrences o on o.project_id = g.project_id and o.session_id = g.session_id
          and o.occurrence_key = 'error:' || g.seq || ':' || g.event_index
        where g.project_id = ${plan.projectId} and g.${searchedSignals} and g.kind = 'error'
          and ${signalDocument} @@ ${query}
        order by g.t desc limit ${CANDIDATES}
      ) matching
      order by cluster_id, score desc, signal_t desc
    )`;
  sources.push(
    issueCandidates([...where, sql`${issueDocument} @@ ${query}`]),
    issueCandidates([...where, sql`id in (select cluster_id from issue_messages)`]),
  );
  return {
    with: [messages],
    hits: sql`select i.id, i.last_seen_at as t,
        ${matchScore(sql`d.document`, fullText, HAPPENED)} + coalesce(m.score, 0) + ${substring} as score,
        m.text as matched, null::timestamptz as matched_at
      from (${sql.join(sources, sql` union `)}) k
      join issue_clusters i on i.project_id = ${plan.projectId} and i.id = k.id
      cross join lateral (select ${issueDocument} as document) d
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
