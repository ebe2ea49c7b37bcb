import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { dayOf, USAGE_METRICS, type UsageDeltas, type UsageMetric } from './metrics.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** `set m = usage_daily.m + excluded.m` for each metric. */
const addExcluded = (metrics: readonly UsageMetric[]) =>
  sql.join(
    metrics.map(
      (metric) => sql`${sql.id(metric)} = usage_daily.${sql.id(metric)} + excluded.${sql.id(metric)}`,
    ),
  );

/**
 * The statement that adds `source`'s rows to the day's usage: `source` selects `project_id` and
 * the `metrics` in that order (one row per project); the organization comes from `projects`.
 * For a data-modifying CTE of a statement that does the work (ingest's batch), so the count
 * commits with the work or not at all. Rows are written in project order, so concurrent batches
 * lock them in the same order.
 *
 * @example
 * ```ts
 * sql`with totals as (select project_id, count(*) as chunks from fresh group by project_id)
 *     ${meterStatement(sql`select project_id, chunks from totals`, ['chunks'])}`;
 * ```
 */
export function meterStatement(
  source: RawBuilder<unknown>,
  metrics: readonly UsageMetric[],
): RawBuilder<unknown> {
  const columns = sql.join(metrics.map((metric) => sql.id(metric)));
  const selected = sql.join(metrics.map((metric) => sql`source.${sql.id(metric)}`));
  return sql`
    insert into usage_daily (project_id, day, organization_id, ${columns})
    select source.project_id, (now() at time zone 'utc')::date, projects.organization_id, ${selected}
    from (${source}) as source (project_id, ${columns})
    join projects on projects.id = source.project_id
    order by source.project_id
    on conflict (project_id, day) do update set ${addExcluded(metrics)}`;
}

/**
 * Adds amounts to a project's usage of the day `at` falls on (UTC), in the caller's transaction
 * (the one doing the work): one upsert. Zero amounts are left out; nothing at all writes nothing.
 *
 * @example
 * ```ts
 * await meter(transaction, project.id, { spans: 120, log_records: 4 });
 * ```
 */
export async function meter(
  executor: Executor,
  projectId: string,
  deltas: UsageDeltas,
  at: Date = new Date(),
): Promise<void> {
  const metrics = USAGE_METRICS.filter((metric) => (deltas[metric] ?? 0) !== 0);
  if (metrics.length === 0) return;
  const values = sql.join(metrics.map((metric) => sql`${Math.round(deltas[metric] ?? 0)}::bigint`));
  const columns = sql.join(metrics.map((metric) => sql.id(metric)));
  await sql`
    insert into usage_daily (project_id, day, organization_id, ${columns})
    select projects.id, ${dayOf(at)}::date, projects.organization_id, ${values}
    from projects where projects.id = ${projectId}
    on conflict (project_id, day) do update set ${addExcluded(metrics)}`.execute(executor);
}
