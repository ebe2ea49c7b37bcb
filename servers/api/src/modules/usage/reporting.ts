import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import type { UsageRecord, UsageReport } from '../billing/index.ts';
import { dayOf, USAGE_METRICS, type UsageMetric } from './metrics.ts';

/** How often the reporter looks for ended days not reported yet. */
const REPORT_EVERY_MS = 60 * 60_000;
/** How many ended days back it reports (a day missed while no process ran is still sent). */
const DAYS_BACK = 3;
/** Stored bytes is a level, not an amount used in a day: it is never reported as usage. */
const REPORTABLE: ReadonlySet<UsageMetric> = new Set(
  USAGE_METRICS.filter((metric) => metric !== 'stored_bytes'),
);

export interface UsageReporterDependencies {
  database: Kysely<Database>;
  /** The billing provider's report (`billing.reportUsage`): counted once per `identifier`. */
  report: (organizationId: string, usage: UsageRecord) => Promise<UsageReport>;
  /** The metrics to report (those the operator gave a meter: `SVC_STRIPE_METER_EVENTS`). */
  metrics: readonly string[];
  log: FastifyBaseLogger;
  now?: () => Date;
}

/**
 * Sends each organization's usage of each ended UTC day to the billing provider, once: the day's
 * total of each configured metric, as one report whose identifier is
 * `<organization>:<metric>:<day>` (so the provider counts a resent report once), timed at the
 * day's last second. What was sent (or skipped: the organization has no customer) is recorded in
 * `usage_reports`, so any number of processes may run it. A report that fails is tried again at
 * the next run.
 *
 * @returns reports sent by this run
 * @example
 * ```ts
 * await reportEndedDays({ database, report: billing.reportUsage, metrics: ['sessions'], log });
 * ```
 */
export async function reportEndedDays(dependencies: UsageReporterDependencies): Promise<number> {
  const { database } = dependencies;
  const metrics = dependencies.metrics.filter((metric): metric is UsageMetric =>
    REPORTABLE.has(metric as UsageMetric),
  );
  if (metrics.length === 0) return 0;
  const today = dayOf((dependencies.now ?? (() => new Date()))());
  const since = dayOf(new Date(Date.parse(today) - DAYS_BACK * 86_400_000));
  const totals = await database
    .selectFrom('usage_daily')
    .select([
      'organization_id',
      sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'),
      ...metrics.map((metric) => sql<number>`sum(${sql.ref(metric)})::bigint`.as(metric)),
    ])
    .where('day', '>=', sql<Date>`${since}::date`)
    .where('day', '<', sql<Date>`${today}::date`)
    .groupBy(['organization_id', 'day'])
    .orderBy('day')
    .orderBy('organization_id')
    .execute();
  const done = new Set(
    (
      await database
        .selectFrom('usage_reports')
        .select(['organization_id', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'), 'metric'])
        .where('day', '>=', sql<Date>`${since}::date`)
        .execute()
    ).map((row) => `${row.organization_id}:${row.metric}:${row.day}`),
  );
  let sent = 0;
  for (const row of totals) {
    for (const metric of metrics) {
      const identifier = `${row.organization_id}:${metric}:${row.day}`;
      const quantity = Number((row as Record<string, unknown>)[metric] ?? 0);
      if (done.has(identifier) || quantity <= 0) continue;
      const outcome = await dependencies.report(row.organization_id, {
        metric,
        quantity,
        timestamp: new Date(`${row.day}T23:59:59.000Z`),
        identifier,
      });
      await database
        .insertInto('usage_reports')
        .values({
          organization_id: row.organization_id,
          day: row.day,
          metric,
          quantity,
          status: outcome.reported ? 'reported' : 'skipped',
          reason: outcome.reported ? null : outcome.reason,
        })
        .onConflict((conflict) => conflict.doNothing())
        .execute();
      if (outcome.reported) sent += 1;
    }
  }
  return sent;
}

/**
 * {@link reportEndedDays} every hour in the background (a day is reported in the first hour
 * after it ends). Errors are logged; the next run tries again.
 */
export function createUsageReporter(dependencies: UsageReporterDependencies): PollingLoop {
  return createPollingLoop(
    async () => {
      const sent = await reportEndedDays(dependencies);
      if (sent > 0)
        dependencies.log.info({ sent }, `reported ${sent} day(s) of usage to the billing provider`);
      return 0;
    },
    {
      pollMs: REPORT_EVERY_MS,
      onError: (error) =>
        dependencies.log.error({ err: error }, 'could not report usage to the billing provider'),
    },
  );
}
