import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';

// What an anomaly scan reads and writes. The reads are one statement per family of metrics
// (sessions; calls; page views), each over the scanned hour and the same hour of the week in each
// of the weeks before it (`generate_series` of weeks joined to the table's time range, which the
// tables' (project, start) indexes serve), never a statement per hour.

type Executor = Kysely<Database> | Transaction<Database>;

/** One hour's facts: the scanned hour (`weeksAgo` 0) or the same hour `weeksAgo` weeks before. */
export interface HourFacts {
  weeksAgo: number;
  sessions: number;
  sessionsWithErrors: number;
  calls: number;
  failedToConnect: number;
  scoredCalls: number;
  /** The median `quality_score` of the scored calls (`percentile_cont(0.5)`); null when none. */
  medianQuality: number | null;
  pageViews: number;
  rageClicks: number;
}

/** The start of the hour `weeks.weeks_ago` weeks before `hour` (weeks of 168 hours: no time zone's days). */
const weekHour = (hour: Date) => sql`(${hour}::timestamptz - weeks.weeks_ago * interval '168 hours')`;

/**
 * The facts of `hour` (the start of a UTC hour) and of the same hour in each of the `weeks` weeks
 * before it, for the project, `weeksAgo` 0 first: sessions started in the hour and those with an
 * error (`error_count > 0`); calls started in it, those that never connected, the scored ones
 * and their median score; page views started in it and their rage clicks.
 *
 * @example
 * ```ts
 * const [now, ...before] = await hourFacts(database, projectId, new Date('2026-11-17T14:00:00Z'), 8);
 * ```
 */
export async function hourFacts(
  database: Executor,
  projectId: string,
  hour: Date,
  weeks: number,
): Promise<HourFacts[]> {
  const start = weekHour(hour);
  const end = sql`(${start} + interval '1 hour')`;
  const series = sql`generate_series(0, ${weeks}::int) as weeks(weeks_ago)`;
  const [sessions, calls, pageViews] = await Promise.all([
    sql<{ weeksAgo: number; sessions: number; sessionsWithErrors: number }>`
      select weeks.weeks_ago::int as "weeksAgo",
        count(sessions.id)::int as "sessions",
        count(sessions.id) filter (where sessions.error_count > 0)::int as "sessionsWithErrors"
      from ${series}
      left join sessions on sessions.project_id = ${projectId}
        and sessions.started_at >= ${start} and sessions.started_at < ${end}
      group by weeks.weeks_ago`.execute(database),
    sql<{
      weeksAgo: number;
      calls: number;
      failedToConnect: number;
      scoredCalls: number;
      medianQuality: number | null;
    }>`
      select weeks.weeks_ago::int as "weeksAgo",
        count(calls.id)::int as "calls",
        count(calls.id) filter (where calls.failed_to_connect)::int as "failedToConnect",
        count(calls.quality_score)::int as "scoredCalls",
        percentile_cont(0.5) within group (order by calls.quality_score)::float8 as "medianQuality"
      from ${series}
      left join calls on calls.project_id = ${projectId}
        and calls.started_at >= ${start} and calls.started_at < ${end}
      group by weeks.weeks_ago`.execute(database),
    sql<{ weeksAgo: number; pageViews: number; rageClicks: number }>`
      select weeks.weeks_ago::int as "weeksAgo",
        count(page_views.session_id)::int as "pageViews",
        coalesce(sum(page_views.rage_clicks), 0)::int as "rageClicks"
      from ${series}
      left join page_views on page_views.project_id = ${projectId}
        and page_views.day = (${start} at time zone 'UTC')::date
        and page_views.started_at >= ${start} and page_views.started_at < ${end}
      group by weeks.weeks_ago`.execute(database),
  ]);
  const byWeek = <Row extends { weeksAgo: number }>(rows: readonly Row[]) =>
    new Map(rows.map((row) => [row.weeksAgo, row]));
  const sessionRows = byWeek(sessions.rows);
  const callRows = byWeek(calls.rows);
  const viewRows = byWeek(pageViews.rows);
  return Array.from({ length: weeks + 1 }, (_, weeksAgo) => {
    const session = sessionRows.get(weeksAgo);
    const call = callRows.get(weeksAgo);
    const view = viewRows.get(weeksAgo);
    return {
      weeksAgo,
      sessions: session?.sessions ?? 0,
      sessionsWithErrors: session?.sessionsWithErrors ?? 0,
      calls: call?.calls ?? 0,
      failedToConnect: call?.failedToConnect ?? 0,
      scoredCalls: call?.scoredCalls ?? 0,
      medianQuality: call?.medianQuality ?? null,
      pageViews: view?.pageViews ?? 0,
      rageClicks: view?.rageClicks ?? 0,
    };
  });
}

/** An anomaly to record. */
export interface NewAnomaly {
  metric: string;
  hour: Date;
  value: number;
  score: number;
  details: Record<string, unknown>;
}

/**
 * Records an anomaly unless it was already (the project, metric and hour are its key): resolves
 * with whether this call recorded it. Of two scans at once, one records it, the other waits for
 * its commit and records nothing.
 */
export async function recordAnomaly(
  transaction: Executor,
  projectId: string,
  anomaly: NewAnomaly,
  now: Date,
): Promise<boolean> {
  const inserted = await transaction
    .insertInto('ai_anomalies')
    .values({
      project_id: projectId,
      metric: anomaly.metric,
      hour: anomaly.hour,
      value: anomaly.value,
      score: anomaly.score,
      details: JSON.stringify(anomaly.details),
      created_at: now,
    })
    .onConflict((conflict) => conflict.columns(['project_id', 'metric', 'hour']).doNothing())
    .returning('metric')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Links an anomaly to the notification event written with it. */
export async function setAnomalyEvent(
  transaction: Executor,
  projectId: string,
  anomaly: { metric: string; hour: Date },
  eventId: string,
): Promise<void> {
  await transaction
    .updateTable('ai_anomalies')
    .set({ event_id: eventId })
    .where('project_id', '=', projectId)
    .where('metric', '=', anomaly.metric)
    .where('hour', '=', anomaly.hour)
    .execute();
}
