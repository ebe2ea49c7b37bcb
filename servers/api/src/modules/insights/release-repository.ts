import { type ExpressionBuilder, type Kysely, type SelectQueryBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { VITAL_NAMES, type VitalName } from './vitals.ts';

// The read side of releases and the overview: sessions, calls, page views and issue occurrences
// aggregated per release, or over a time range. Every query is scoped by a project id first, so a
// caller only ever reaches the rows of the project it passes (the routes pass the request's
// project). Everything is computed in the database; what matches nothing is zero (or null).

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * A call's `quality_score` (0..100, `@svc/quality-score`) below this is a poor call: a mean opinion
 * score of about 3.0 on the 1..5 scale, (3 − 1) / (4.41 − 1) ≈ 59 on the score's scale, and the
 * score under which `webrtc_call_abandoned` judges a short call bad (`@svc/detectors`' `abandonScore`).
 */
export const POOR_CALL_SCORE = 60;

/** Most releases in one page of `GET /v1/releases`. */
export const MAX_RELEASES_LIMIT = 100;
export const DEFAULT_RELEASES_LIMIT = 20;

/** Which facts an aggregate counts: a time range (`[from, to)`), an environment, some releases. */
export interface FactScope {
  from?: Date | undefined;
  to?: Date | undefined;
  /** A string: that environment; `null`: facts without one; absent: every environment. */
  environment?: string | null | undefined;
  /** Only facts of these releases (absent: any release, or none). */
  releases?: readonly string[] | undefined;
}

/** Sessions, distinct users and sessions with an error. */
export interface SessionTotals {
  sessions: number;
  users: number;
  sessionsWithErrors: number;
}

/** Calls, scored calls, poor calls (score below {@link POOR_CALL_SCORE}) and the median score. */
export interface CallTotals {
  calls: number;
  scored: number;
  poor: number;
  /** The median `quality_score` (linear interpolation, PostgreSQL's `percentile_cont`); null unscored. */
  medianQuality: number | null;
}

/** Page views, rage clicks and dead clicks. */
export interface ClickTotals {
  pageViews: number;
  rageClicks: number;
  deadClicks: number;
}

/** Per vital, how many page views measured it and their p75 (nearest rank: `percentile_disc`). */
export type VitalPercentiles = Record<VitalName, { count: number; p75: number | null }>;

/** A release with when it was first and last seen and its sessions' totals. */
interface ReleaseSessions extends SessionTotals {
  release: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

/** Everything the releases list shows of one release. */
export interface ReleaseFacts extends ReleaseSessions {
  calls: CallTotals;
  vitals: VitalPercentiles;
  newIssues: number;
}

/** The page view column of each vital. */
const VITAL_COLUMNS: Readonly<Record<VitalName, 'lcp' | 'inp' | 'cls' | 'fcp' | 'ttfb'>> = {
  LCP: 'lcp',
  INP: 'inp',
  CLS: 'cls',
  FCP: 'fcp',
  TTFB: 'ttfb',
};

type ScopedTable = 'sessions' | 'calls' | 'page_views' | 'cluster_occurrences';

/** The column each scoped table's time range is on. */
const TIME_COLUMNS = {
  sessions: 'started_at',
  calls: 'started_at',
  page_views: 'started_at',
  cluster_occurrences: 't',
} as const;

/** The conditions of a scope on one of the fact tables (its project first). */
function scopeConditions<Table extends ScopedTable>(
  table: Table,
  where: ExpressionBuilder<Database, Table>,
  projectId: string,
  scope: FactScope,
) {
  // The tables share these column names; kysely cannot see that through a generic table.
  const eb = where as unknown as ExpressionBuilder<Database, 'sessions'>;
  const time = TIME_COLUMNS[table] as 'started_at';
  const conditions = [eb('project_id', '=', projectId)];
  if (scope.from !== undefined) conditions.push(eb(time, '>=', scope.from));
  if (scope.to !== undefined) conditions.push(eb(time, '<', scope.to));
  if (scope.environment === null) conditions.push(eb('environment', 'is', null));
  else if (scope.environment !== undefined) conditions.push(eb('environment', '=', scope.environment));
  if (scope.releases !== undefined) conditions.push(eb('release', 'in', [...scope.releases]));
  return eb.and(conditions);
}

/** `release` when grouping by it, else one group (null). */
function groupColumn(byRelease: boolean) {
  return byRelease ? sql<string | null>`release` : sql<string | null>`null::text`;
}

/** Rows by release (null: the one group of an ungrouped aggregate). */
function byKey<Row extends { release: string | null }>(rows: readonly Row[]): Map<string | null, Row> {
  return new Map(rows.map((row) => [row.release, row]));
}

/**
 * Sessions, distinct user ids and sessions with an error (`error_count > 0`) in the scope, per
 * release (`byRelease`) or in all (key `null`). A group without sessions is absent.
 *
 * @example
 * ```ts
 * const totals = await sessionTotals(database, projectId, { from, to }, false);
 * totals.get(null)?.sessions;
 * ```
 */
export async function sessionTotals(
  database: Executor,
  projectId: string,
  scope: FactScope,
  byRelease: boolean,
): Promise<Map<string | null, SessionTotals & { release: string | null }>> {
  if (scope.releases?.length === 0) return new Map();
  const rows = await database
    .selectFrom('sessions')
    .where((where) => scopeConditions('sessions', where, projectId, scope))
    .select([
      groupColumn(byRelease).as('release'),
      sql<number>`count(*)::int`.as('sessions'),
      sql<number>`count(distinct user_id)::int`.as('users'),
      sql<number>`count(*) filter (where error_count > 0)::int`.as('sessionsWithErrors'),
    ])
    .groupBy(sql`1`)
    .execute();
  return byKey(rows);
}

/**
 * Calls, scored calls, poor calls and the median quality score in the scope (on the calls' own
 * start time, release and environment), per release or in all (key `null`).
 *
 * @example
 * ```ts
 * (await callTotals(database, projectId, { releases: ['2.0.0'] }, true)).get('2.0.0')?.medianQuality;
 * ```
 */
export async function callTotals(
  database: Executor,
  projectId: string,
  scope: FactScope,
  byRelease: boolean,
): Promise<Map<string | null, CallTotals & { release: string | null }>> {
  if (scope.releases?.length === 0) return new Map();
  const rows = await database
    .selectFrom('calls')
    .where((where) => scopeConditions('calls', where, projectId, scope))
    .select([
      groupColumn(byRelease).as('release'),
      sql<number>`count(*)::int`.as('calls'),
      sql<number>`count(quality_score)::int`.as('scored'),
      sql<number>`count(*) filter (where quality_score < ${POOR_CALL_SCORE})::int`.as('poor'),
      sql<number | null>`percentile_cont(0.5) within group (order by quality_score)::float8`.as(
        'medianQuality',
      ),
    ])
    .groupBy(sql`1`)
    .execute();
  return byKey(rows);
}

/** The p75 and count of every vital, selected from `page_views`. */
function selectVitals<Selection>(query: SelectQueryBuilder<Database, 'page_views', Selection>) {
  return query.select(
    VITAL_NAMES.flatMap((name) => {
      const column = sql.ref(VITAL_COLUMNS[name]);
      return [
        sql<number>`count(${column})::int`.as(`${name}_count`),
        sql<number | null>`percentile_disc(0.75) within group (order by ${column})`.as(`${name}_p75`),
      ];
    }),
  );
}

/** The vitals' counts and p75s out of a row that {@link selectVitals} read. */
function vitalsOf(row: Record<string, unknown> | undefined): VitalPercentiles {
  return Object.fromEntries(
    VITAL_NAMES.map((name) => [
      name,
      {
        count: Number(row?.[`${name}_count`] ?? 0),
        p75: row?.[`${name}_p75`] === null || row === undefined ? null : Number(row[`${name}_p75`]),
      },
    ]),
  ) as VitalPercentiles;
}

/** Every vital unmeasured. */
export const NO_VITALS: VitalPercentiles = vitalsOf(undefined);

/**
 * The p75 of every vital over the scope's page views (null values left out; p75 is the
 * nearest-rank percentile, `percentile_disc(0.75)`, as `summarizeVital` computes it), per
 * release or in all (key `null`).
 *
 * @example
 * ```ts
 * (await vitalPercentiles(database, projectId, { from, to }, false)).get(null)?.LCP.p75;
 * ```
 */
export async function vitalPercentiles(
  database: Executor,
  projectId: string,
  scope: FactScope,
  byRelease: boolean,
): Promise<Map<string | null, VitalPercentiles>> {
  if (scope.releases?.length === 0) return new Map();
  const rows = await selectVitals(
    database
      .selectFrom('page_views')
      .where((where) => scopeConditions('page_views', where, projectId, scope))
      .select(groupColumn(byRelease).as('release')),
  )
    .groupBy(sql`1`)
    .execute();
  return new Map(
    rows.map((row) => [row.release, vitalsOf(row as unknown as Record<string, unknown>)] as const),
  );
}

/**
 * Page views with their rage and dead clicks (the sums of `page_views`' counts) over the scope.
 *
 * @example
 * ```ts
 * const { rageClicks } = await clickTotals(database, projectId, { from, to });
 * ```
 */
export async function clickTotals(
  database: Executor,
  projectId: string,
  scope: FactScope,
): Promise<ClickTotals> {
  const row = await database
    .selectFrom('page_views')
    .where((where) => scopeConditions('page_views', where, projectId, scope))
    .select([
      sql<number>`count(*)::int`.as('pageViews'),
      sql<number>`coalesce(sum(rage_clicks), 0)::int`.as('rageClicks'),
      sql<number>`coalesce(sum(dead_clicks), 0)::int`.as('deadClicks'),
    ])
    .executeTakeFirstOrThrow();
  return row;
}

/**
 * Per release, the issue clusters whose first occurrence (by the time it happened, then when it
 * was recorded) was in it: in the scope's environment when it names one, among every
 * occurrence otherwise.
 *
 * @example
 * ```ts
 * (await newIssueCounts(database, projectId, ['2.0.0'], undefined)).get('2.0.0'); // e.g. 3
 * ```
 */
async function newIssueCounts(
  database: Executor,
  projectId: string,
  releases: readonly string[],
  environment: string | null | undefined,
): Promise<Map<string, number>> {
  if (releases.length === 0) return new Map();
  const firsts = database
    .selectFrom('cluster_occurrences')
    .where((where) => scopeConditions('cluster_occurrences', where, projectId, { environment }))
    .distinctOn('cluster_id')
    .select(['cluster_id', 'release'])
    .orderBy('cluster_id')
    .orderBy('t')
    .orderBy('seen_at')
    .orderBy('session_id')
    .orderBy('occurrence_key');
  const rows = await database
    .selectFrom(firsts.as('first'))
    .where('first.release', 'in', [...releases])
    .select(['first.release', sql<number>`count(*)::int`.as('clusters')])
    .groupBy('first.release')
    .execute();
  return new Map(rows.map((row) => [row.release as string, row.clusters]));
}

/**
 * A page of the project's releases (the `release` of its sessions), first seen newest first
 * (ties by name), with their sessions' totals over their whole life: in the environment when
 * one is given; only releases first seen in `[from, to)`. `offset` releases are skipped.
 *
 * @example
 * ```ts
 * const { releases, more } = await findReleasesPage(database, projectId, { filters: {}, offset: 0, limit: 20 });
 * ```
 */
export async function findReleasesPage(
  database: Executor,
  projectId: string,
  options: {
    filters: { from?: Date | undefined; to?: Date | undefined; environment?: string | undefined };
    offset: number;
    limit: number;
  },
): Promise<{ releases: ReleaseFacts[]; more: boolean }> {
  const { from, to, environment } = options.filters;
  let query = database
    .selectFrom('sessions')
    .where((where) => scopeConditions('sessions', where, projectId, { environment }))
    .where('release', 'is not', null)
    .select([
      sql<string>`release`.as('release'),
      sql<Date>`min(started_at)`.as('firstSeenAt'),
      sql<Date>`max(greatest(started_at, last_event_at))`.as('lastSeenAt'),
      sql<number>`count(*)::int`.as('sessions'),
      sql<number>`count(distinct user_id)::int`.as('users'),
      sql<number>`count(*) filter (where error_count > 0)::int`.as('sessionsWithErrors'),
    ])
    .groupBy('release');
  if (from !== undefined) query = query.having(sql`min(started_at)`, '>=', from);
  if (to !== undefined) query = query.having(sql`min(started_at)`, '<', to);
  const rows = await query
    .orderBy(sql`min(started_at)`, 'desc')
    .orderBy('release', 'desc')
    .offset(options.offset)
    .limit(options.limit + 1)
    .execute();
  const page = rows.slice(0, options.limit);
  const names = page.map((row) => row.release);
  const scope: FactScope = { environment, releases: names };
  const [calls, vitals, newIssues] = await Promise.all([
    callTotals(database, projectId, scope, true),
    vitalPercentiles(database, projectId, scope, true),
    newIssueCounts(database, projectId, names, environment),
  ]);
  return {
    releases: page.map((row) => ({
      ...row,
      firstSeenAt: new Date(row.firstSeenAt),
      lastSeenAt: new Date(row.lastSeenAt),
      calls: calls.get(row.release) ?? { calls: 0, scored: 0, poor: 0, medianQuality: null },
      vitals: vitals.get(row.release) ?? NO_VITALS,
      newIssues: newIssues.get(row.release) ?? 0,
    })),
    more: rows.length > options.limit,
  };
}

/**
 * Every release of the project per environment (null: sessions without one), with when it was
 * first and last seen and its sessions' totals, first seen oldest first: what the regression
 * check compares, each release against the one before it in its environment.
 *
 * @example
 * ```ts
 * const releases = await releasesByEnvironment(database, projectId);
 * ```
 */
export async function releasesByEnvironment(
  database: Executor,
  projectId: string,
): Promise<Array<ReleaseSessions & { environment: string | null }>> {
  const rows = await database
    .selectFrom('sessions')
    .where('project_id', '=', projectId)
    .where('release', 'is not', null)
    .select([
      'environment',
      sql<string>`release`.as('release'),
      sql<Date>`min(started_at)`.as('firstSeenAt'),
      sql<Date>`max(greatest(started_at, last_event_at))`.as('lastSeenAt'),
      sql<number>`count(*)::int`.as('sessions'),
      sql<number>`count(distinct user_id)::int`.as('users'),
      sql<number>`count(*) filter (where error_count > 0)::int`.as('sessionsWithErrors'),
    ])
    .groupBy(['environment', 'release'])
    .orderBy('environment')
    .orderBy(sql`min(started_at)`)
    .orderBy('release')
    .execute();
  return rows.map((row) => ({
    ...row,
    firstSeenAt: new Date(row.firstSeenAt),
    lastSeenAt: new Date(row.lastSeenAt),
  }));
}

/**
 * Calls per environment and release: scored calls and poor calls (score below
 * {@link POOR_CALL_SCORE}), keyed `JSON.stringify([environment, release])`.
 *
 * @example
 * ```ts
 * (await callTotalsByEnvironment(database, projectId)).get(JSON.stringify(['production', '2.0.0']));
 * ```
 */
export async function callTotalsByEnvironment(
  database: Executor,
  projectId: string,
): Promise<Map<string, { scored: number; poor: number }>> {
  const rows = await database
    .selectFrom('calls')
    .where('project_id', '=', projectId)
    .where('release', 'is not', null)
    .select([
      'environment',
      'release',
      sql<number>`count(quality_score)::int`.as('scored'),
      sql<number>`count(*) filter (where quality_score < ${POOR_CALL_SCORE})::int`.as('poor'),
    ])
    .groupBy(['environment', 'release'])
    .execute();
  return new Map(
    rows.map((row) => [
      JSON.stringify([row.environment, row.release]),
      { scored: row.scored, poor: row.poor },
    ]),
  );
}

/**
 * Per route, the p75 and count of every vital over the page views started in `[from, middle)`
 * (`previous`) and `[middle, to)` (`current`).
 *
 * @example
 * ```ts
 * const routes = await routeVitalWindows(database, projectId, { from, middle, to });
 * ```
 */
export async function routeVitalWindows(
  database: Executor,
  projectId: string,
  windows: { from: Date; middle: Date; to: Date },
): Promise<Array<{ route: string; window: 'previous' | 'current'; vitals: VitalPercentiles }>> {
  const window = sql<
    'previous' | 'current'
  >`case when started_at >= ${windows.middle} then 'current' else 'previous' end`;
  const rows = await selectVitals(
    database
      .selectFrom('page_views')
      .where('project_id', '=', projectId)
      .where('started_at', '>=', windows.from)
      .where('started_at', '<', windows.to)
      .select(['route', window.as('window')]),
  )
    .groupBy(['route', sql`2`])
    .orderBy('route')
    .execute();
  return rows.map((row) => ({
    route: row.route,
    window: row.window,
    vitals: vitalsOf(row as unknown as Record<string, unknown>),
  }));
}

/** One of the top issues of a period, with its occurrences in the period and in the one before. */
export interface TopIssue {
  id: string;
  kind: string;
  title: string;
  severity: string;
  status: string;
  occurrences: number;
  previousOccurrences: number;
}

/**
 * The `limit` clusters with the most occurrences (by when they happened) in `[from, to)`, most
 * first (ties by id), each with its occurrences in `[previousFrom, from)` too.
 *
 * @example
 * ```ts
 * const top = await topIssues(database, projectId, { previousFrom, from, to }, 5);
 * ```
 */
export async function topIssues(
  database: Executor,
  projectId: string,
  range: { previousFrom: Date; from: Date; to: Date },
  limit: number,
): Promise<TopIssue[]> {
  const counts = database
    .selectFrom('cluster_occurrences')
    .where('project_id', '=', projectId)
    .where('t', '>=', range.previousFrom)
    .where('t', '<', range.to)
    .select([
      'cluster_id',
      sql<number>`count(*) filter (where t >= ${range.from})::int`.as('occurrences'),
      sql<number>`count(*) filter (where t < ${range.from})::int`.as('previousOccurrences'),
    ])
    .groupBy('cluster_id');
  return database
    .selectFrom(counts.as('counts'))
    .innerJoin('issue_clusters', (join) =>
      join
        .onRef('issue_clusters.id', '=', 'counts.cluster_id')
        .on('issue_clusters.project_id', '=', projectId),
    )
    .where('counts.occurrences', '>', 0)
    .select([
      'issue_clusters.id',
      'issue_clusters.kind',
      'issue_clusters.title',
      'issue_clusters.severity',
      'issue_clusters.status',
      'counts.occurrences',
      'counts.previousOccurrences',
    ])
    .orderBy('counts.occurrences', 'desc')
    .orderBy('issue_clusters.id')
    .limit(limit)
    .execute();
}
