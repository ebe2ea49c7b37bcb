import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { addVitalValue, mergeVitalHistograms, type VitalHistogram } from './vital-histogram.ts';
import { VITAL_NAMES, type VitalName } from './vitals.ts';

// Daily rollups of page views (servers/api/README.md, Insights: Rollups; migration
// 2026-12-09-page-view-rollups). A read takes each whole UTC day of its range from the day's
// rollups unless the day is marked out of date, and the rest (marked days, the partial days at
// the range's ends) from `page_views`; both come out as the same groups. The rollup worker
// rebuilds the marked days before today (today changes all day: reads take it from
// `page_views`, which holds one day of facts).

type Executor = Kysely<Database> | Transaction<Database>;

/** The page view column of each vital. */
const VITAL_COLUMNS: Readonly<Record<VitalName, 'lcp' | 'inp' | 'cls' | 'fcp' | 'ttfb'>> = {
  LCP: 'lcp',
  INP: 'inp',
  CLS: 'cls',
  FCP: 'fcp',
  TTFB: 'ttfb',
};

const DAY_MS = 24 * 3600 * 1000;
/** Rebuilt per batch of the worker. */
const REBUILD_BATCH = 20;
/** Rows per insert statement of a rebuild. */
const INSERT_ROWS = 500;
/** How often the worker looks for days to rebuild. */
const REBUILD_POLL_MS = 60_000;

/** One group of page views: a day, its dimensions, its counts and a histogram per vital. */
export interface PageViewGroup {
  day: string;
  route: string;
  device: string | null;
  browser: string | null;
  release: string | null;
  environment: string | null;
  pageViews: number;
  rageClicks: number;
  deadClicks: number;
  vitals: Record<VitalName, VitalHistogram>;
}

/** Which page views a read counts; every condition is ANDed. */
export interface PageViewFilter {
  /** Started at or after. */
  from?: Date | undefined;
  /** Started before. */
  to?: Date | undefined;
  route?: string | undefined;
  device?: string | undefined;
  browser?: string | undefined;
  /** Only these releases. */
  releases?: readonly string[] | undefined;
  /** A string: that environment; `null`: page views without one; absent: any. */
  environment?: string | null | undefined;
}

const dayText = (time: number) => new Date(time).toISOString().slice(0, 10);

/** A page view row as the groups are built from it. */
interface PageViewRow {
  day: string;
  route: string;
  device: string | null;
  browser_name: string | null;
  release: string | null;
  environment: string | null;
  rage_clicks: number;
  dead_clicks: number;
  lcp: number | null;
  inp: number | null;
  cls: number | null;
  fcp: number | null;
  ttfb: number | null;
}

function emptyVitals(): Record<VitalName, VitalHistogram> {
  return { LCP: {}, INP: {}, CLS: {}, FCP: {}, TTFB: {} };
}

/** Page views grouped by day, route, device, browser, release and environment. */
function groupPageViews(rows: readonly PageViewRow[]): PageViewGroup[] {
  const groups = new Map<string, PageViewGroup>();
  for (const row of rows) {
    const key = JSON.stringify([
      row.day,
      row.route,
      row.device,
      row.browser_name,
      row.release,
      row.environment,
    ]);
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        day: row.day,
        route: row.route,
        device: row.device,
        browser: row.browser_name,
        release: row.release,
        environment: row.environment,
        pageViews: 0,
        rageClicks: 0,
        deadClicks: 0,
        vitals: emptyVitals(),
      };
      groups.set(key, group);
    }
    group.pageViews += 1;
    group.rageClicks += row.rage_clicks;
    group.deadClicks += row.dead_clicks;
    for (const name of VITAL_NAMES) {
      const value = row[VITAL_COLUMNS[name]];
      if (value !== null) addVitalValue(group.vitals[name], name, value);
    }
  }
  return [...groups.values()];
}

/** The filter's conditions on a table with the page view dimensions (`page_views`, its rollups). */
function dimensionConditions(filter: PageViewFilter) {
  const conditions = [];
  if (filter.route !== undefined) conditions.push(sql`route = ${filter.route}`);
  if (filter.device !== undefined) conditions.push(sql`device = ${filter.device}`);
  if (filter.browser !== undefined) conditions.push(sql`browser_name = ${filter.browser}`);
  if (filter.releases !== undefined) conditions.push(sql`release = any(${[...filter.releases]}::text[])`);
  if (filter.environment === null) conditions.push(sql`environment is null`);
  else if (filter.environment !== undefined) conditions.push(sql`environment = ${filter.environment}`);
  return conditions;
}

const PAGE_VIEW_COLUMNS = sql`to_char(day, 'YYYY-MM-DD') as day, route, device, browser_name, release,
  environment, rage_clicks, dead_clicks, lcp, inp, cls, fcp, ttfb`;

/**
 * The groups of a project's page views that match a filter: whole days from their rollups, the
 * rest from `page_views`. A group is a day and a set of dimensions; callers merge groups into
 * what they show (a route, a day, a release, everything).
 *
 * @example
 * ```ts
 * const groups = await readPageViewGroups(database, projectId, { from, to, releases: ['1.2.0'] });
 * const pageViews = groups.reduce((sum, group) => sum + group.pageViews, 0);
 * ```
 */
export async function readPageViewGroups(
  database: Executor,
  projectId: string,
  filter: PageViewFilter,
): Promise<PageViewGroup[]> {
  if (filter.releases?.length === 0) return [];
  // The whole days of the range: from the first midnight at or after `from` to the last day
  // that ends at or before `to`.
  const firstWhole =
    filter.from === undefined ? undefined : dayText(Math.ceil(filter.from.getTime() / DAY_MS) * DAY_MS);
  const lastWhole =
    filter.to === undefined ? undefined : dayText(Math.floor(filter.to.getTime() / DAY_MS) * DAY_MS - DAY_MS);
  const wholeDays = [sql`project_id = ${projectId}`];
  if (firstWhole !== undefined) wholeDays.push(sql`day >= ${firstWhole}::date`);
  if (lastWhole !== undefined) wholeDays.push(sql`day <= ${lastWhole}::date`);
  const noWholeDays = firstWhole !== undefined && lastWhole !== undefined && firstWhole > lastWhole;

  const marked = noWholeDays
    ? []
    : (
        await sql<{ day: string }>`
          select to_char(day, 'YYYY-MM-DD') as day from page_view_dirty_days
          where ${sql.join(wholeDays, sql` and `)}`.execute(database)
      ).rows.map((row) => row.day);

  const dimensions = dimensionConditions(filter);
  const rawConditions = [sql`project_id = ${projectId}`, ...dimensions];
  if (filter.from !== undefined) {
    rawConditions.push(
      sql`day >= ${dayText(filter.from.getTime())}::date`,
      sql`started_at >= ${filter.from}`,
    );
  }
  if (filter.to !== undefined) {
    rawConditions.push(sql`day <= ${dayText(filter.to.getTime())}::date`, sql`started_at < ${filter.to}`);
  }
  if (!noWholeDays) {
    // Outside the whole days, or on a marked one.
    const outside = [sql`day = any(${marked}::date[])`];
    if (firstWhole !== undefined) outside.push(sql`day < ${firstWhole}::date`);
    if (lastWhole !== undefined) outside.push(sql`day > ${lastWhole}::date`);
    rawConditions.push(sql`(${sql.join(outside, sql` or `)})`);
  }

  const [rolled, raw] = await Promise.all([
    noWholeDays
      ? Promise.resolve([])
      : sql<RollupRow>`
          select to_char(day, 'YYYY-MM-DD') as day, route, device, browser_name, release, environment,
            page_views, rage_clicks, dead_clicks, lcp, inp, cls, fcp, ttfb
          from page_view_rollups
          where ${sql.join([...wholeDays, sql`day <> all(${marked}::date[])`, ...dimensions], sql` and `)}`
          .execute(database)
          .then((result) => result.rows),
    sql<PageViewRow>`select ${PAGE_VIEW_COLUMNS} from page_views where ${sql.join(rawConditions, sql` and `)}`
      .execute(database)
      .then((result) => groupPageViews(result.rows)),
  ]);
  return [...rolled.map(fromRollupRow), ...raw];
}

/** A row of `page_view_rollups` as read. */
interface RollupRow {
  day: string;
  route: string;
  device: string | null;
  browser_name: string | null;
  release: string | null;
  environment: string | null;
  page_views: number;
  rage_clicks: number;
  dead_clicks: number;
  lcp: VitalHistogram | null;
  inp: VitalHistogram | null;
  cls: VitalHistogram | null;
  fcp: VitalHistogram | null;
  ttfb: VitalHistogram | null;
}

function fromRollupRow(row: RollupRow): PageViewGroup {
  const vitals = emptyVitals();
  for (const name of VITAL_NAMES) vitals[name] = row[VITAL_COLUMNS[name]] ?? {};
  return {
    day: row.day,
    route: row.route,
    device: row.device,
    browser: row.browser_name,
    release: row.release,
    environment: row.environment,
    pageViews: row.page_views,
    rageClicks: row.rage_clicks,
    deadClicks: row.dead_clicks,
    vitals,
  };
}

/** Groups merged: their counts added and their histograms merged. */
export interface MergedGroups {
  pageViews: number;
  rageClicks: number;
  deadClicks: number;
  vitals: Record<VitalName, VitalHistogram>;
}

/**
 * Merges groups by a key (a route, a day, a release, or one key for all).
 *
 * @example
 * ```ts
 * const byRoute = mergeGroups(groups, (group) => group.route);
 * ```
 */
export function mergeGroups<Key>(
  groups: readonly PageViewGroup[],
  keyOf: (group: PageViewGroup) => Key,
): Map<Key, MergedGroups> {
  const merged = new Map<Key, MergedGroups>();
  for (const group of groups) {
    const key = keyOf(group);
    let into = merged.get(key);
    if (into === undefined) {
      into = { pageViews: 0, rageClicks: 0, deadClicks: 0, vitals: emptyVitals() };
      merged.set(key, into);
    }
    into.pageViews += group.pageViews;
    into.rageClicks += group.rageClicks;
    into.deadClicks += group.deadClicks;
    for (const name of VITAL_NAMES) mergeVitalHistograms(into.vitals[name], group.vitals[name]);
  }
  return merged;
}

/** The histogram as stored: null without values. */
const storedHistogram = (histogram: VitalHistogram) =>
  Object.keys(histogram).length === 0 ? null : JSON.stringify(histogram);

/**
 * Rebuilds one marked day of a project, if no writer of that day's page views is in a
 * transaction (else it stays marked for the next batch) and no other worker rebuilt it first.
 * Resolves with whether it rebuilt the day.
 *
 * @example
 * ```ts
 * await rebuildRollupDay(database, projectId, '2026-11-24');
 * ```
 */
export async function rebuildRollupDay(
  database: Kysely<Database>,
  projectId: string,
  day: string,
): Promise<boolean> {
  return database.transaction().execute(async (transaction) => {
    // The lock the triggers on page_views take shared (migration 2026-12-09-page-view-rollups).
    const lock = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(hashtext(${projectId}), ${day}::date - date '2000-01-01') as locked`.execute(
      transaction,
    );
    if (lock.rows[0]?.locked !== true) return false;
    const unmarked = await transaction
      .deleteFrom('page_view_dirty_days')
      .where('project_id', '=', projectId)
      .where(sql<boolean>`day = ${day}::date`)
      .executeTakeFirst();
    if (unmarked.numDeletedRows === 0n) return false;
    const rows = await sql<PageViewRow>`
      select ${PAGE_VIEW_COLUMNS} from page_views where project_id = ${projectId} and day = ${day}::date`.execute(
      transaction,
    );
    await transaction
      .deleteFrom('page_view_rollups')
      .where('project_id', '=', projectId)
      .where(sql<boolean>`day = ${day}::date`)
      .execute();
    const groups = groupPageViews(rows.rows);
    for (let start = 0; start < groups.length; start += INSERT_ROWS) {
      await transaction
        .insertInto('page_view_rollups')
        .values(
          groups.slice(start, start + INSERT_ROWS).map((group) => ({
            project_id: projectId,
            day: group.day,
            route: group.route,
            device: group.device,
            browser_name: group.browser,
            release: group.release,
            environment: group.environment,
            page_views: group.pageViews,
            rage_clicks: group.rageClicks,
            dead_clicks: group.deadClicks,
            lcp: storedHistogram(group.vitals.LCP),
            inp: storedHistogram(group.vitals.INP),
            cls: storedHistogram(group.vitals.CLS),
            fcp: storedHistogram(group.vitals.FCP),
            ttfb: storedHistogram(group.vitals.TTFB),
          })),
        )
        .execute();
    }
    return true;
  });
}

/**
 * Rebuilds up to `limit` marked days before `now`'s UTC day, the oldest first, of every project.
 * Resolves with how many it rebuilt and whether marked days before today remain.
 *
 * @example
 * ```ts
 * while ((await rebuildRollups(database, new Date())).more);
 * ```
 */
export async function rebuildRollups(
  database: Kysely<Database>,
  now: Date,
  limit = REBUILD_BATCH,
): Promise<{ rebuilt: number; more: boolean }> {
  const due = await sql<{ project_id: string; day: string }>`
    select project_id, to_char(day, 'YYYY-MM-DD') as day from page_view_dirty_days
    where day < ${dayText(now.getTime())}::date order by day, project_id limit ${limit + 1}`.execute(
    database,
  );
  let rebuilt = 0;
  for (const { project_id: projectId, day } of due.rows.slice(0, limit)) {
    if (await rebuildRollupDay(database, projectId, day)) rebuilt += 1;
  }
  return { rebuilt, more: due.rows.length > limit };
}

/**
 * The rollup worker: every minute, rebuilds the marked days before today (a batch of 20 days
 * at a time, back to back while more are marked). Any number of processes may run it.
 *
 * @example
 * ```ts
 * const worker = createRollupWorker({ database, log });
 * worker.start();
 * ```
 */
export function createRollupWorker(
  dependencies: { database: Kysely<Database>; log: FastifyBaseLogger },
  options: { pollMs?: number } = {},
): PollingLoop {
  return createPollingLoop(
    async () => {
      const { rebuilt, more } = await rebuildRollups(dependencies.database, new Date());
      return { ran: rebuilt, more: more && rebuilt > 0 };
    },
    {
      pollMs: options.pollMs ?? REBUILD_POLL_MS,
      onError: (error) => dependencies.log.error({ err: error }, 'could not rebuild page view rollups'),
    },
  );
}
