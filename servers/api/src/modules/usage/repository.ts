import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { USAGE_METRICS, type UsageMetric } from './metrics.ts';

/** Amounts by metric. */
export type UsageTotals = Record<UsageMetric, number>;

/** An organization's usage over days, in all, per project and per day. */
export interface UsageReport {
  totals: UsageTotals;
  byProject: Array<{ projectId: string; name: string | null } & UsageTotals>;
  days: Array<{ day: string } & UsageTotals>;
}

const zero = (): UsageTotals => Object.fromEntries(USAGE_METRICS.map((metric) => [metric, 0])) as UsageTotals;

const totalsOf = (row: Record<string, unknown>): UsageTotals =>
  Object.fromEntries(USAGE_METRICS.map((metric) => [metric, Number(row[metric] ?? 0)])) as UsageTotals;

/**
 * What an organization used from `from` to `to` (UTC days, both included): in all, per project
 * (largest sessions first, with the project's name when it still exists) and per day (every day
 * of the range, zeros included), optionally for one project only.
 *
 * @example
 * ```ts
 * const report = await usageReport(database, 'org_1', { from: '2026-11-01', to: '2026-11-30' });
 * report.totals.sessions;
 * ```
 */
export async function usageReport(
  database: Kysely<Database>,
  organizationId: string,
  range: { from: string; to: string; projectId?: string | undefined },
): Promise<UsageReport> {
  const sums = USAGE_METRICS.map((metric) =>
    sql<number>`sum(${sql.ref(`usage_daily.${metric}`)})::bigint`.as(metric),
  );
  let query = database
    .selectFrom('usage_daily')
    .where('usage_daily.organization_id', '=', organizationId)
    .where('usage_daily.day', '>=', sql<Date>`${range.from}::date`)
    .where('usage_daily.day', '<=', sql<Date>`${range.to}::date`);
  if (range.projectId !== undefined) query = query.where('usage_daily.project_id', '=', range.projectId);
  const [perProject, perDay] = await Promise.all([
    query
      .leftJoin('projects', 'projects.id', 'usage_daily.project_id')
      .select(['usage_daily.project_id', sql<string | null>`max(projects.name)`.as('name'), ...sums])
      .groupBy('usage_daily.project_id')
      .execute(),
    query
      .select([sql<string>`to_char(usage_daily.day, 'YYYY-MM-DD')`.as('day'), ...sums])
      .groupBy('usage_daily.day')
      .execute(),
  ]);
  const totals = zero();
  const byProject = perProject
    .map((row) => ({ projectId: row.project_id, name: row.name, ...totalsOf(row) }))
    .sort(
      (a, b) =>
        b.sessions - a.sessions ||
        b.ingested_bytes - a.ingested_bytes ||
        (a.projectId < b.projectId ? -1 : 1),
    );
  for (const project of byProject) for (const metric of USAGE_METRICS) totals[metric] += project[metric];
  const found = new Map(perDay.map((row) => [row.day, totalsOf(row)]));
  const days: UsageReport['days'] = [];
  for (
    let day = new Date(`${range.from}T00:00:00Z`);
    day <= new Date(`${range.to}T00:00:00Z`);
    day = new Date(day.getTime() + 86_400_000)
  ) {
    const key = day.toISOString().slice(0, 10);
    days.push({ day: key, ...(found.get(key) ?? zero()) });
  }
  return { totals, byProject, days };
}
