import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { callOverview } from '../src/modules/calls/index.ts';
import { findFunnelMatches } from '../src/modules/insights/funnel-repository.ts';
import {
  findBackdrop,
  findClickHeatmap,
  findScrollDepths,
  findVitals,
} from '../src/modules/insights/insight-queries.ts';
import {
  callTotals,
  clickTotals,
  findReleasesPage,
  sessionTotals,
  topIssues,
  vitalPercentiles,
} from '../src/modules/insights/release-repository.ts';
import type { Database } from '../src/platform/database/schema.ts';
import type { FunnelStep } from '../src/platform/database/tables/insights.table.ts';

// EXPLAIN (ANALYZE, BUFFERS) of the statements the insight endpoints run: the repository
// functions the routes call, over a kysely instance that records each statement it runs, then
// each recorded statement explained with its parameters. For the insights bench
// (BENCH_INSIGHTS_EXPLAIN=1) and for looking at a plan by hand.

/** One statement a function ran, its time and its plan. */
export interface ExplainedStatement {
  endpoint: string;
  ms: number;
  sql: string;
  plan: string;
}

/**
 * Runs the insight reads over the project's facts and explains every statement over `minMs`.
 *
 * @example
 * ```ts
 * for (const statement of await explainInsightQueries(url, projectId, options)) console.log(statement.plan);
 * ```
 */
export async function explainInsightQueries(
  databaseUrl: string,
  projectId: string,
  options: { now: number; route: string; funnel: FunnelStep[]; minMs?: number },
): Promise<ExplainedStatement[]> {
  const recorded: Array<{ sql: string; parameters: readonly unknown[]; ms: number }> = [];
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const database = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query')
        recorded.push({
          sql: event.query.sql,
          parameters: event.query.parameters,
          ms: event.queryDurationMillis,
        });
    },
  });
  const day = 24 * 3600 * 1000;
  const month = { from: new Date(options.now - 30 * day), to: new Date(options.now) };
  const week = { from: new Date(options.now - 7 * day), to: new Date(options.now) };
  const previous = { from: new Date(options.now - 14 * day), to: week.from };
  const endpoints: Array<[string, () => Promise<unknown>]> = [
    ['GET /v1/vitals (30 days)', () => findVitals(database, projectId, month, {}, 50)],
    [
      'GET /v1/heatmaps click',
      async () => {
        await findClickHeatmap(
          database,
          projectId,
          { route: options.route, kind: 'click', range: month },
          100,
          50,
        );
        await findBackdrop(database, projectId, { route: options.route, range: month });
      },
    ],
    [
      'GET /v1/heatmaps scroll',
      () => findScrollDepths(database, projectId, { route: options.route, range: month }, 100),
    ],
    [
      'GET /v1/funnels/{id}/results (30 days)',
      () => findFunnelMatches(database, projectId, options.funnel, 'session', month),
    ],
    [
      'GET /v1/dashboard/overview (7 days)',
      async () => {
        for (const range of [week, previous]) {
          await sessionTotals(database, projectId, range, false);
          await clickTotals(database, projectId, range);
          await vitalPercentiles(database, projectId, range, false);
          await callTotals(database, projectId, range, false);
          await callOverview(database, projectId, range);
        }
        await topIssues(database, projectId, { previousFrom: previous.from, ...week }, 5);
      },
    ],
    ['GET /v1/releases', () => findReleasesPage(database, projectId, { filters: {}, offset: 0, limit: 20 })],
  ];
  const explained: ExplainedStatement[] = [];
  try {
    for (const [endpoint, run] of endpoints) {
      recorded.length = 0;
      await run();
      for (const statement of [...recorded]) {
        if (statement.ms < (options.minMs ?? 50)) continue;
        const { rows } = await sql<{ 'QUERY PLAN': string }>`explain (analyze, buffers) ${sql.raw(
          // kysely numbers parameters $1..$n: inline them as literals for EXPLAIN.
          statement.sql.replace(/\$(\d+)/g, (_, index: string) =>
            literal(statement.parameters[Number(index) - 1]),
          ),
        )}`.execute(database);
        explained.push({
          endpoint,
          ms: statement.ms,
          sql: statement.sql,
          plan: rows.map((row) => row['QUERY PLAN']).join('\n'),
        });
      }
    }
  } finally {
    await database.destroy();
  }
  return explained;
}

/** A parameter as an SQL literal. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
  if (Array.isArray(value)) return `array[${value.map(literal).join(', ')}]`;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `'${text.replaceAll("'", "''")}'`;
}
