import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { AiDigest } from '../../platform/database/tables/reports.table.ts';

// What a digest reads and writes. Every read is scoped by the project and covers the period and
// the one before it (`[previousStart, start)`, of equal length) in one statement, each number
// counted with a `filter` on the period it belongs to.

type Executor = Kysely<Database> | Transaction<Database>;

/** A digest's period and the one before it: `[previousStart, start)` and `[start, end)`. */
export interface DigestRange {
  previousStart: Date;
  start: Date;
  end: Date;
}

/** A number of the period and of the one before. */
export interface Compared<Value = number> {
  value: Value;
  previous: Value;
}

/** Sessions started in each period, and those with an error. */
export async function periodSessions(
  database: Executor,
  projectId: string,
  range: DigestRange,
): Promise<{ sessions: Compared; sessionsWithErrors: Compared }> {
  const row = await database
    .selectFrom('sessions')
    .where('project_id', '=', projectId)
    .where('started_at', '>=', range.previousStart)
    .where('started_at', '<', range.end)
    .select([
      sql<number>`count(*) filter (where started_at >= ${range.start})::int`.as('sessions'),
      sql<number>`count(*) filter (where started_at < ${range.start})::int`.as('previousSessions'),
      sql<number>`count(*) filter (where started_at >= ${range.start} and error_count > 0)::int`.as('errors'),
      sql<number>`count(*) filter (where started_at < ${range.start} and error_count > 0)::int`.as(
        'previousErrors',
      ),
    ])
    .executeTakeFirstOrThrow();
  return {
    sessions: { value: row.sessions, previous: row.previousSessions },
    sessionsWithErrors: { value: row.errors, previous: row.previousErrors },
  };
}

/** Calls started in a period: how many, failed to connect, relayed, scored, median and mean score. */
export interface CallFacts {
  calls: number;
  failedToConnect: number;
  relayed: number;
  scored: number;
  medianQuality: number | null;
  averageQuality: number | null;
}

/**
 * The calls started in each period: counts of calls, of those that never connected
 * (`failed_to_connect`) and of those relayed through TURN (`relayed`), as `GET /v1/calls/overview`
 * counts them, and the median (`percentile_cont(0.5)`) and mean of their quality scores.
 */
export async function periodCalls(
  database: Executor,
  projectId: string,
  range: DigestRange,
): Promise<Compared<CallFacts>> {
  const facts = (current: boolean) => {
    const inPeriod = current ? sql`started_at >= ${range.start}` : sql`started_at < ${range.start}`;
    const prefix = current ? 'current' : 'previous';
    return [
      sql<number>`count(*) filter (where ${inPeriod})::int`.as(`${prefix}Calls`),
      sql<number>`count(*) filter (where ${inPeriod} and failed_to_connect)::int`.as(`${prefix}Failed`),
      sql<number>`count(*) filter (where ${inPeriod} and relayed)::int`.as(`${prefix}Relayed`),
      sql<number>`count(quality_score) filter (where ${inPeriod})::int`.as(`${prefix}Scored`),
      sql<
        number | null
      >`percentile_cont(0.5) within group (order by quality_score) filter (where ${inPeriod})::float8`.as(
        `${prefix}Median`,
      ),
      sql<number | null>`avg(quality_score) filter (where ${inPeriod})::float8`.as(`${prefix}Average`),
    ];
  };
  const row = (await database
    .selectFrom('calls')
    .where('project_id', '=', projectId)
    .where('started_at', '>=', range.previousStart)
    .where('started_at', '<', range.end)
    .select([...facts(true), ...facts(false)])
    .executeTakeFirstOrThrow()) as unknown as Record<string, number | null>;
  const of = (prefix: 'current' | 'previous'): CallFacts => ({
    calls: Number(row[`${prefix}Calls`]),
    failedToConnect: Number(row[`${prefix}Failed`]),
    relayed: Number(row[`${prefix}Relayed`]),
    scored: Number(row[`${prefix}Scored`]),
    medianQuality: row[`${prefix}Median`] ?? null,
    averageQuality: row[`${prefix}Average`] ?? null,
  });
  return { value: of('current'), previous: of('previous') };
}

/** The vitals a digest reports. */
export const DIGEST_VITALS = ['LCP', 'INP', 'CLS'] as const;
type DigestVital = (typeof DIGEST_VITALS)[number];

/** Page views of a period and, per vital, how many measured it and their p75. */
export interface PageViewFacts {
  pageViews: number;
  vitals: Record<DigestVital, { count: number; p75: number | null }>;
}

const VITAL_COLUMN: Readonly<Record<DigestVital, 'lcp' | 'inp' | 'cls'>> = {
  LCP: 'lcp',
  INP: 'inp',
  CLS: 'cls',
};

/**
 * The page views started in each period and the p75 of LCP, INP and CLS over those that measured
 * them (nearest rank, `percentile_disc(0.75)`, as `GET /v1/vitals`).
 */
export async function periodPageViews(
  database: Executor,
  projectId: string,
  range: DigestRange,
): Promise<Compared<PageViewFacts>> {
  const facts = (current: boolean) => {
    const inPeriod = current ? sql`started_at >= ${range.start}` : sql`started_at < ${range.start}`;
    const prefix = current ? 'current' : 'previous';
    return [
      sql<number>`count(*) filter (where ${inPeriod})::int`.as(`${prefix}Views`),
      ...DIGEST_VITALS.flatMap((name) => {
        const column = sql.ref(VITAL_COLUMN[name]);
        return [
          sql<number>`count(${column}) filter (where ${inPeriod})::int`.as(`${prefix}${name}Count`),
          sql<
            number | null
          >`(percentile_disc(0.75) within group (order by ${column}) filter (where ${inPeriod}))::float8`.as(
            `${prefix}${name}P75`,
          ),
        ];
      }),
    ];
  };
  const row = (await database
    .selectFrom('page_views')
    .where('project_id', '=', projectId)
    // The day column first, for the (project, day) index; the start times exactly.
    .where(sql<boolean>`day >= (${range.previousStart}::timestamptz at time zone 'UTC')::date`)
    .where(sql<boolean>`day <= (${range.end}::timestamptz at time zone 'UTC')::date`)
    .where('started_at', '>=', range.previousStart)
    .where('started_at', '<', range.end)
    .select([...facts(true), ...facts(false)])
    .executeTakeFirstOrThrow()) as unknown as Record<string, number | null>;
  const of = (prefix: 'current' | 'previous'): PageViewFacts => ({
    pageViews: Number(row[`${prefix}Views`]),
    vitals: Object.fromEntries(
      DIGEST_VITALS.map((name) => [
        name,
        { count: Number(row[`${prefix}${name}Count`]), p75: row[`${prefix}${name}P75`] ?? null },
      ]),
    ) as PageViewFacts['vitals'],
  });
  return { value: of('current'), previous: of('previous') };
}

/** An issue cluster as a digest lists it. */
interface DigestIssueRow {
  id: string;
  kind: string;
  title: string;
  severity: string;
  occurrences: number;
}

/**
 * The clusters first seen in `[start, end)` (`first_seen_at`, when the server first recorded
 * one), with their occurrences and sessions recorded in the period, most occurrences first (ties
 * by id), at most `limit`, and how many there are in all.
 */
export async function newIssues(
  database: Executor,
  projectId: string,
  range: DigestRange,
  limit: number,
): Promise<{ total: number; items: Array<DigestIssueRow & { sessions: number; firstSeenAt: Date }> }> {
  const rows = await database
    .selectFrom('issue_clusters')
    .leftJoin('cluster_occurrences', (join) =>
      join
        .onRef('cluster_occurrences.cluster_id', '=', 'issue_clusters.id')
        .on('cluster_occurrences.project_id', '=', projectId)
        .on('cluster_occurrences.seen_at', '>=', range.start)
        .on('cluster_occurrences.seen_at', '<', range.end),
    )
    .where('issue_clusters.project_id', '=', projectId)
    .where('issue_clusters.first_seen_at', '>=', range.start)
    .where('issue_clusters.first_seen_at', '<', range.end)
    .groupBy([
      'issue_clusters.id',
      'issue_clusters.kind',
      'issue_clusters.title',
      'issue_clusters.severity',
      'issue_clusters.first_seen_at',
    ])
    .select([
      'issue_clusters.id',
      'issue_clusters.kind',
      'issue_clusters.title',
      'issue_clusters.severity',
      'issue_clusters.first_seen_at as firstSeenAt',
      sql<number>`count(cluster_occurrences.cluster_id)::int`.as('occurrences'),
      sql<number>`count(distinct cluster_occurrences.session_id)::int`.as('sessions'),
      sql<number>`(count(*) over ())::int`.as('total'),
    ])
    .orderBy('occurrences', 'desc')
    .orderBy('issue_clusters.id')
    .limit(limit)
    .execute();
  return {
    total: rows[0]?.total ?? 0,
    items: rows.map(({ total: _total, ...row }) => ({ ...row, firstSeenAt: new Date(row.firstSeenAt) })),
  };
}

/**
 * The clusters first seen before `start` with more occurrences recorded in `[start, end)` than in
 * `[previousStart, start)`, the largest growth first (ties by id), at most `limit`.
 */
export async function growingIssues(
  database: Executor,
  projectId: string,
  range: DigestRange,
  limit: number,
): Promise<Array<DigestIssueRow & { previousOccurrences: number }>> {
  const counts = database
    .selectFrom('cluster_occurrences')
    .where('project_id', '=', projectId)
    .where('seen_at', '>=', range.previousStart)
    .where('seen_at', '<', range.end)
    .groupBy('cluster_id')
    .select([
      'cluster_id',
      sql<number>`count(*) filter (where seen_at >= ${range.start})::int`.as('occurrences'),
      sql<number>`count(*) filter (where seen_at < ${range.start})::int`.as('previousOccurrences'),
    ]);
  return database
    .selectFrom(counts.as('counts'))
    .innerJoin('issue_clusters', (join) =>
      join
        .onRef('issue_clusters.id', '=', 'counts.cluster_id')
        .on('issue_clusters.project_id', '=', projectId),
    )
    .where('issue_clusters.first_seen_at', '<', range.start)
    .whereRef('counts.occurrences', '>', 'counts.previousOccurrences')
    .select([
      'issue_clusters.id',
      'issue_clusters.kind',
      'issue_clusters.title',
      'issue_clusters.severity',
      'counts.occurrences',
      'counts.previousOccurrences',
    ])
    .orderBy(sql`counts.occurrences - counts."previousOccurrences"`, 'desc')
    .orderBy('issue_clusters.id')
    .limit(limit)
    .execute();
}

/** The release and vitals regressions that fired (were recorded) in `[start, end)`, oldest first. */
export async function firedRegressions(database: Executor, projectId: string, range: DigestRange) {
  return database
    .selectFrom('insight_alerts')
    .where('project_id', '=', projectId)
    .where('created_at', '>=', range.start)
    .where('created_at', '<', range.end)
    .select(['type', 'metric', 'environment', 'release', 'previous_release', 'route', 'period', 'created_at'])
    .orderBy('created_at')
    .orderBy('type')
    .orderBy('alert_key')
    .execute();
}

/** The anomalies of the hours in `[start, end)`, oldest first. */
export async function periodAnomalies(database: Executor, projectId: string, range: DigestRange) {
  return database
    .selectFrom('ai_anomalies')
    .where('project_id', '=', projectId)
    .where('hour', '>=', range.start)
    .where('hour', '<', range.end)
    .select(['metric', 'hour', 'value', 'score', 'details'])
    .orderBy('hour')
    .orderBy('metric')
    .execute();
}

/** A digest to store. */
export interface NewDigest {
  id: string;
  period: 'daily' | 'weekly';
  start: Date;
  end: Date;
  content: Record<string, unknown>;
}

/**
 * Stores a digest unless the project has one of the period and start already: resolves with the
 * stored row and whether this call stored it.
 */
export async function insertDigest(
  transaction: Executor,
  projectId: string,
  digest: NewDigest,
  now: Date,
): Promise<{ digest: AiDigest; created: boolean }> {
  const inserted = await transaction
    .insertInto('ai_digests')
    .values({
      project_id: projectId,
      id: digest.id,
      period: digest.period,
      period_start: digest.start,
      period_end: digest.end,
      content: JSON.stringify(digest.content),
      created_at: now,
    })
    .onConflict((conflict) => conflict.columns(['project_id', 'period', 'period_start']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted !== undefined) return { digest: inserted, created: true };
  const existing = await transaction
    .selectFrom('ai_digests')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('period', '=', digest.period)
    .where('period_start', '=', digest.start)
    .executeTakeFirstOrThrow();
  return { digest: existing, created: false };
}

/** Links a digest to the `ai.digest` event written with it. */
export async function setDigestEvent(
  transaction: Executor,
  projectId: string,
  id: string,
  eventId: string,
): Promise<void> {
  await transaction
    .updateTable('ai_digests')
    .set({ event_id: eventId })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .execute();
}

/**
 * A page of the project's digests, newest first (by id: digests are made after their period, in
 * its order), of one period when given, after the digest `before` (a cursor).
 */
export async function findDigestsPage(
  database: Executor,
  projectId: string,
  options: { period?: 'daily' | 'weekly' | undefined; before?: string | undefined; limit: number },
): Promise<AiDigest[]> {
  let query = database.selectFrom('ai_digests').selectAll().where('project_id', '=', projectId);
  if (options.period !== undefined) query = query.where('period', '=', options.period);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  return query
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .execute();
}
