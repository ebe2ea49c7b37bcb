import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Breakpoint, ClickKind } from '../../platform/database/tables/insights.table.ts';
import { VITAL_THRESHOLDS, type VitalName } from './vitals.ts';

// The reads of the vitals and heatmaps endpoints over the facts tables (servers/api/README.md,
// Insights). Every query is scoped to one project and a time range, through the tables' indexes
// (page_views (project_id, day) and (project_id, route, day); click_facts (project_id, route,
// kind, day)); the day bounds come with the exact time bounds so the index does the range.

/** A time range, both ends given (the routes fill defaults). */
export interface TimeRange {
  from: Date;
  to: Date;
}

/** Filters of `GET /v1/vitals`. */
export interface VitalFilters {
  route?: string | undefined;
  device?: string | undefined;
  browser?: string | undefined;
  release?: string | undefined;
  environment?: string | undefined;
}

/** One vital's numbers over a set of page views, counted in SQL. */
interface VitalCounts {
  count: number;
  p75: number | null;
  good: number;
  poor: number;
}

export interface VitalsRow {
  pageViews: number;
  metrics: Record<VitalName, VitalCounts>;
}

const METRICS: ReadonlyArray<[VitalName, 'lcp' | 'inp' | 'cls' | 'fcp' | 'ttfb']> = [
  ['LCP', 'lcp'],
  ['INP', 'inp'],
  ['CLS', 'cls'],
  ['FCP', 'fcp'],
  ['TTFB', 'ttfb'],
];

const dayText = (time: Date) => time.toISOString().slice(0, 10);

/** The where clause of page views in a range with filters. */
function pageViewScope(
  projectId: string,
  range: TimeRange,
  filters: VitalFilters & { breakpoint?: Breakpoint | undefined },
) {
  const conditions: RawBuilder<unknown>[] = [
    sql`project_id = ${projectId}`,
    sql`day >= ${dayText(range.from)}::date`,
    sql`day <= ${dayText(range.to)}::date`,
    sql`started_at >= ${range.from}`,
    sql`started_at < ${range.to}`,
  ];
  if (filters.route !== undefined) conditions.push(sql`route = ${filters.route}`);
  if (filters.device !== undefined) conditions.push(sql`device = ${filters.device}`);
  if (filters.browser !== undefined) conditions.push(sql`browser_name = ${filters.browser}`);
  if (filters.release !== undefined) conditions.push(sql`release = ${filters.release}`);
  if (filters.environment !== undefined) conditions.push(sql`environment = ${filters.environment}`);
  if (filters.breakpoint !== undefined) conditions.push(sql`breakpoint = ${filters.breakpoint}`);
  return sql.join(conditions, sql` and `);
}

/** The select list of each vital's count, p75 (nearest rank: `percentile_disc`), good and poor counts. */
function vitalColumns() {
  return sql.join(
    METRICS.map(([name, column]) => {
      const [goodUpTo, poorAbove] = VITAL_THRESHOLDS[name];
      const ref = sql.ref(column);
      return sql`count(${ref}) as ${sql.ref(`${column}_n`)},
        percentile_disc(0.75) within group (order by ${ref}) as ${sql.ref(`${column}_p75`)},
        count(*) filter (where ${ref} <= ${sql.lit(goodUpTo)}) as ${sql.ref(`${column}_good`)},
        count(*) filter (where ${ref} > ${sql.lit(poorAbove)}) as ${sql.ref(`${column}_poor`)}`;
    }),
    sql`, `,
  );
}

function readVitals(row: Record<string, unknown>): VitalsRow {
  const metrics = {} as Record<VitalName, VitalCounts>;
  for (const [name, column] of METRICS) {
    const p75 = row[`${column}_p75`];
    metrics[name] = {
      count: Number(row[`${column}_n`]),
      p75: p75 === null || p75 === undefined ? null : Number(p75),
      good: Number(row[`${column}_good`]),
      poor: Number(row[`${column}_poor`]),
    };
  }
  return { pageViews: Number(row.page_views), metrics };
}

/**
 * The web vitals of a project's page views in a range: overall, per route (the `limit` routes
 * with most page views) and per UTC day, in three statements over the same page views, run at once.
 *
 * @example
 * ```ts
 * const { overall, routes, days } = await findVitals(database, projectId, range, { release: '1.2.0' }, 50);
 * ```
 */
export async function findVitals(
  database: Kysely<Database>,
  projectId: string,
  range: TimeRange,
  filters: VitalFilters,
  limit: number,
): Promise<{
  overall: VitalsRow;
  routes: Array<VitalsRow & { route: string }>;
  days: Array<VitalsRow & { day: string }>;
}> {
  const scope = pageViewScope(projectId, range, filters);
  // Three statements at once, on three of the pool's connections: each sorts every page view's
  // vitals for its percentiles, and together they take the time of the slowest instead of the sum.
  const [overall, routes, days] = await Promise.all([
    sql<Record<string, unknown>>`
      select count(*) as page_views, ${vitalColumns()} from page_views where ${scope}`.execute(database),
    sql<Record<string, unknown>>`
      select route, count(*) as page_views, ${vitalColumns()} from page_views where ${scope}
      group by route order by count(*) desc, route limit ${limit}`.execute(database),
    sql<Record<string, unknown>>`
      select to_char(day, 'YYYY-MM-DD') as day, count(*) as page_views, ${vitalColumns()} from page_views
      where ${scope} group by day order by day`.execute(database),
  ]);
  return {
    overall: readVitals(overall.rows[0] ?? { page_views: 0 }),
    routes: routes.rows.map((row) => ({ route: String(row.route), ...readVitals(row) })),
    days: days.rows.map((row) => ({ day: String(row.day), ...readVitals(row) })),
  };
}

/** One element of a click heatmap. */
export interface HeatmapElement {
  selector: string | null;
  count: number;
  /** Up to `pointsPerElement` of its clicks, the most recent first. */
  points: Array<{ pageX: number; pageY: number; elementX: number | null; elementY: number | null }>;
}

/**
 * The click facts of one kind on a route in a range (and a breakpoint), counted per selector:
 * the `limit` selectors with most, each with up to `pointsPerElement` recent positions.
 *
 * @example
 * ```ts
 * const elements = await findClickHeatmap(database, projectId, { route: '/pricing', kind: 'rage', range }, 100, 50);
 * ```
 */
export async function findClickHeatmap(
  database: Kysely<Database>,
  projectId: string,
  query: { route: string; kind: ClickKind; breakpoint?: Breakpoint | undefined; range: TimeRange },
  limit: number,
  pointsPerElement: number,
): Promise<{ total: number; elements: HeatmapElement[] }> {
  const { route, kind, breakpoint, range } = query;
  const scope = sql.join(
    [
      sql`project_id = ${projectId}`,
      sql`route = ${route}`,
      sql`kind = ${kind}`,
      sql`day >= ${dayText(range.from)}::date`,
      sql`day <= ${dayText(range.to)}::date`,
      sql`t >= ${range.from}`,
      sql`t < ${range.to}`,
      ...(breakpoint === undefined ? [] : [sql`breakpoint = ${breakpoint}`]),
    ],
    sql` and `,
  );
  // One pass over the route's click facts: each click ranked within its selector (most recent
  // first), then per selector the count and the first `pointsPerElement` positions. A subquery of
  // points per listed selector read every click of the route again, once per selector (~10x the
  // work over 100,000 sessions: the insights bench).
  const { rows } = await sql<{
    selector: string | null;
    count: string | number;
    total: string | number;
    points: Array<{ x: number; y: number; ex: number | null; ey: number | null }>;
  }>`
    with ranked as (
      select selector, page_x, page_y, element_x, element_y,
        row_number() over (partition by selector order by t desc) as rank
      from click_facts where ${scope}
    )
    select selector, count(*) as count, sum(count(*)) over () as total,
      coalesce(jsonb_agg(jsonb_build_object('x', page_x, 'y', page_y, 'ex', element_x, 'ey', element_y) order by rank)
        filter (where rank <= ${pointsPerElement}), '[]'::jsonb) as points
    from ranked
    group by selector
    order by count(*) desc, selector nulls last
    limit ${limit}`.execute(database);
  return {
    total: rows.length === 0 ? 0 : Number(rows[0]?.total),
    elements: rows.map((row) => ({
      selector: row.selector,
      count: Number(row.count),
      points: row.points.map((point) => ({
        pageX: point.x,
        pageY: point.y,
        elementX: point.ex,
        elementY: point.ey,
      })),
    })),
  };
}

/**
 * How deep the page views of a route got: the number of page views, and per `stepPx` step of
 * depth, how many of them reached it (their deepest viewport bottom at or below it).
 *
 * @example
 * ```ts
 * const { pageViews, reached } = await findScrollDepths(database, projectId, { route: '/blog/:id', range }, 100);
 * ```
 */
export async function findScrollDepths(
  database: Kysely<Database>,
  projectId: string,
  query: { route: string; breakpoint?: Breakpoint | undefined; range: TimeRange },
  stepPx: number,
): Promise<{
  pageViews: number;
  medianPageHeight: number | null;
  steps: Array<{ depth: number; reached: number }>;
}> {
  const scope = pageViewScope(projectId, query.range, { route: query.route, breakpoint: query.breakpoint });
  const { rows } = await sql<{ bucket: number | string | null; views: number | string }>`
    select floor(scroll_depth / ${stepPx}::float8) as bucket, count(*) as views
    from page_views where ${scope} group by 1 order by 1`.execute(database);
  const heights = await sql<{ median: number | string | null }>`
    select percentile_disc(0.5) within group (order by page_height) as median from page_views where ${scope}`.execute(
    database,
  );
  const pageViews = rows.reduce((sum, row) => sum + Number(row.views), 0);
  const buckets = rows
    .filter((row) => row.bucket !== null)
    .map((row) => [Number(row.bucket), Number(row.views)] as const);
  const deepest = buckets.at(-1)?.[0] ?? -1;
  const steps: Array<{ depth: number; reached: number }> = [];
  // A page view whose deepest point is in bucket b reached every depth up to b · step.
  let reached = buckets.reduce((sum, [, views]) => sum + views, 0);
  for (let bucket = 0, at = 0; bucket <= deepest; bucket++) {
    steps.push({ depth: bucket * stepPx, reached });
    while (at < buckets.length && (buckets[at] as readonly [number, number])[0] === bucket) {
      reached -= (buckets[at] as readonly [number, number])[1];
      at++;
    }
  }
  const median = heights.rows[0]?.median;
  return {
    pageViews,
    medianPageHeight: median === null || median === undefined ? null : Number(median),
    steps,
  };
}

/** The most recent page view of a route in a range (a session whose snapshot can be a heatmap's backdrop). */
export async function findBackdrop(
  database: Kysely<Database>,
  projectId: string,
  query: { route: string; breakpoint?: Breakpoint | undefined; range: TimeRange },
): Promise<{ sessionId: string; startedAt: Date; sessionStartedAt: Date } | undefined> {
  const scope = pageViewScope(projectId, query.range, { route: query.route, breakpoint: query.breakpoint });
  const { rows } = await sql<{ session_id: string; started_at: Date; session_started_at: Date }>`
    select view.session_id, view.started_at, session.started_at as session_started_at
    from (select session_id, started_at from page_views where ${scope}
          order by started_at desc limit 1) as view
    join sessions as session on session.project_id = ${projectId} and session.id = view.session_id`.execute(
    database,
  );
  const row = rows[0];
  return row === undefined
    ? undefined
    : {
        sessionId: row.session_id,
        startedAt: new Date(row.started_at),
        sessionStartedAt: new Date(row.session_started_at),
      };
}
