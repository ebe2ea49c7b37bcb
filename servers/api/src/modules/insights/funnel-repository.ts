import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Funnel, FunnelStep } from '../../platform/database/tables/insights.table.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { createStepMatcher, type FunnelMatch } from './funnels.ts';

// The storage of `/v1/funnels`: saved funnels, the matches of their steps in the facts tables,
// and the route sequences sessions walked. Every query is scoped by a project id first; what
// matches nothing is `undefined` (or empty), and the routes decide on the 404.

type Executor = Kysely<Database> | Transaction<Database>;

/** A funnel as the routes write it. */
export interface FunnelValues {
  name: string;
  steps: FunnelStep[];
  windowMs: number;
  countBy: 'session' | 'user';
}

/** A time range: from (inclusive) to (exclusive). */
export interface TimeRange {
  from: Date;
  to: Date;
}

// Funnels --------------------------------------------------------------------------------------

/** A page of the project's funnels by id (oldest first), after the funnel `after`. */
export async function findFunnelsPage(
  database: Executor,
  projectId: string,
  options: { after?: string | undefined; limit: number },
): Promise<{ funnels: Funnel[]; next?: string }> {
  let query = database.selectFrom('funnels').selectAll().where('project_id', '=', projectId);
  if (options.after !== undefined) query = query.where('id', '>', options.after);
  const { page, more } = keysetPage(
    await query
      .orderBy('id')
      .limit(options.limit + 1)
      .execute(),
    options.limit,
  );
  return more === undefined ? { funnels: page } : { funnels: page, next: more.id };
}

/** The project's funnel `id`, or `undefined` (another project's too). */
export async function findFunnel(
  database: Executor,
  projectId: string,
  id: string,
): Promise<Funnel | undefined> {
  return database
    .selectFrom('funnels')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** How many funnels the project has. */
export async function countFunnels(database: Executor, projectId: string): Promise<number> {
  const { count } = await database
    .selectFrom('funnels')
    .select(({ fn }) => fn.countAll<number>().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Writes a new funnel, made by `createdBy` (a user's or an API token's id). */
export async function insertFunnel(
  database: Executor,
  projectId: string,
  id: string,
  values: FunnelValues & { createdBy: string | null },
): Promise<Funnel> {
  return (
    database
      .insertInto('funnels')
      .values({
        id,
        project_id: projectId,
        name: values.name,
        steps: JSON.stringify(values.steps),
        window_ms: values.windowMs,
        count_by: values.countBy,
        created_by: values.createdBy,
      })
      .returningAll()
      // An insert of one row returns that row, or fails.
      .executeTakeFirstOrThrow()
  );
}

/** Changes the project's funnel `id` (the fields given); `undefined` when there is no such funnel (any more). */
export async function updateFunnel(
  database: Executor,
  projectId: string,
  id: string,
  changes: Partial<FunnelValues>,
  now: Date,
): Promise<Funnel | undefined> {
  const { name, steps, windowMs, countBy } = changes;
  return database
    .updateTable('funnels')
    .set({
      ...(name === undefined ? {} : { name }),
      ...(steps === undefined ? {} : { steps: JSON.stringify(steps) }),
      ...(windowMs === undefined ? {} : { window_ms: windowMs }),
      ...(countBy === undefined ? {} : { count_by: countBy }),
      updated_at: now,
    })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the project's funnel `id`; `undefined` when there was none. */
export async function deleteFunnel(
  database: Executor,
  projectId: string,
  id: string,
): Promise<{ id: string } | undefined> {
  return database
    .deleteFrom('funnels')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
}

// Matches --------------------------------------------------------------------------------------

/** A fact that may match a step, as the union below reads it. */
interface FactRow {
  session_id: string;
  user_id?: string | null;
  /** Epoch milliseconds. */
  t: number;
  /** 0 page view, 1 click, 2 custom event: the order of facts at the same millisecond. */
  source: number;
  key: string;
  props: Record<string, unknown> | string | null;
  /** Its place among the session's facts of its source (view index, click ordinal, seq and index). */
  position: number;
}

/** The UTC day of a time, as the facts tables' `day` holds it. */
function dayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/**
 * A time as epoch milliseconds (`float8`): the driver reads it as a number, several times faster
 * than a `timestamptz` as a `Date` over the hundreds of thousands of rows of a large project.
 */
function epochMs(column: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(extract(epoch from ${column}) * 1000)::float8`;
}

/** The key of the unit a session's facts count for: its user's (`user:<id>`) or its own. */
function unitOf(row: FactRow, countBy: 'session' | 'user'): string {
  return countBy === 'user' && row.user_id != null ? `user:${row.user_id}` : `session:${row.session_id}`;
}

/**
 * The matches of a funnel's steps in the range, per unit (`session:<id>`, or `user:<id>` when
 * counting by user; a session without a user id is a unit of its own), each unit's in timeline
 * order: by time, then page views before clicks before custom events of the same millisecond,
 * then by session and place in the session. Read from `page_views` (route, start), `click_facts`
 * (kind `click`: selector, time) and `session_signals` (kind `custom`: name, `details.props`,
 * time), only of the steps' routes, selectors and names, every fact within the range.
 *
 * @example
 * ```ts
 * const units = await findFunnelMatches(database, projectId, funnel.steps, 'user', { from, to });
 * const results = countFunnel(units, funnel.steps.length, funnel.window_ms);
 * ```
 */
export async function findFunnelMatches(
  database: Executor,
  projectId: string,
  steps: readonly FunnelStep[],
  countBy: 'session' | 'user',
  range: TimeRange,
): Promise<Map<string, FunnelMatch[]>> {
  const routes = [...new Set(steps.flatMap((step) => (step.type === 'pageview' ? [step.route] : [])))];
  const selectors = [...new Set(steps.flatMap((step) => (step.type === 'click' ? [step.selector] : [])))];
  const names = [...new Set(steps.flatMap((step) => (step.type === 'event' ? [step.name] : [])))];
  const fromDay = dayOf(range.from);
  const toDay = dayOf(range.to);
  const list = (values: string[]) =>
    sql.join(
      values.map((value) => sql`${value}`),
      sql`, `,
    );
  const parts: RawBuilder<unknown>[] = [];
  if (routes.length > 0)
    parts.push(sql`
      select session_id, ${epochMs(sql.ref('started_at'))} as t, 0 as source, route as key,
        null::jsonb as props, view_index::float8 as position
      from page_views
      where project_id = ${projectId} and route in (${list(routes)})
        and day >= ${fromDay} and day <= ${toDay}
        and started_at >= ${range.from} and started_at < ${range.to}`);
  if (selectors.length > 0)
    parts.push(sql`
      select session_id, ${epochMs(sql.ref('t'))} as t, 1 as source, selector as key, null::jsonb as props,
        ordinal::float8 as position
      from click_facts
      where project_id = ${projectId} and kind = 'click' and selector in (${list(selectors)})
        and day >= ${fromDay} and day <= ${toDay}
        and t >= ${range.from} and t < ${range.to}`);
  if (names.length > 0)
    parts.push(sql`
      select session_id, ${epochMs(sql.ref('t'))} as t, 2 as source, name as key, details -> 'props' as props,
        seq::float8 * 100000 + event_index as position
      from session_signals
      where project_id = ${projectId} and kind = 'custom' and name in (${list(names)})
        and t >= ${range.from} and t < ${range.to}`);
  const units = new Map<string, Array<FunnelMatch & { source: number; position: number }>>();
  if (parts.length === 0) return units;
  const facts = sql.join(parts, sql` union all `);
  const query =
    countBy === 'user'
      ? sql<FactRow>`
          select facts.*, sessions.user_id from (${facts}) facts
          left join sessions on sessions.project_id = ${projectId} and sessions.id = facts.session_id`
      : facts;
  const { rows } = await (query as RawBuilder<FactRow>).execute(database);

  const match = createStepMatcher(steps);
  for (const row of rows) {
    const props = typeof row.props === 'string' ? (JSON.parse(row.props) as unknown) : row.props;
    const matched = match(
      row.source === 0
        ? { type: 'pageview', route: row.key }
        : row.source === 1
          ? { type: 'click', selector: row.key }
          : {
              type: 'event',
              name: row.key,
              properties:
                props !== null && typeof props === 'object' ? (props as Record<string, unknown>) : {},
            },
    );
    if (matched.length === 0) continue;
    const unit = unitOf(row, countBy);
    let matches = units.get(unit);
    if (matches === undefined) {
      matches = [];
      units.set(unit, matches);
    }
    matches.push({
      t: row.t,
      steps: matched,
      sessionId: row.session_id,
      source: row.source,
      position: row.position,
    });
  }
  for (const matches of units.values())
    matches.sort(
      (a, b) =>
        a.t - b.t ||
        a.source - b.source ||
        (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0) ||
        a.position - b.position,
    );
  return units;
}

/** When each of the project's sessions `ids` started (epoch ms), for links into their replays. */
export async function findSessionStarts(
  database: Executor,
  projectId: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await database
    .selectFrom('sessions')
    .select(['id', 'started_at'])
    .where('project_id', '=', projectId)
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, new Date(row.started_at).getTime()]));
}

// Suggestions ----------------------------------------------------------------------------------

/** A sequence of consecutive distinct routes, and how many sessions walked it. */
export interface RouteSequence {
  routes: string[];
  sessions: number;
}

/**
 * The route sequences (2 to 4 routes, all different) that most sessions walked in the range,
 * among the latest `sample` sessions that started in it: each session's page views of the range
 * in order, a view of the route it is already on (a reload) left out, every run of 2, 3 and 4
 * consecutive routes counted once per session. The `limit` most walked, most sessions first, then
 * longer first, then by the routes.
 *
 * @example
 * ```ts
 * await findRouteSequences(database, projectId, { from, to }, { sample: 10_000, limit: 50 });
 * // [{ routes: ['/', '/pricing'], sessions: 120 }, { routes: ['/', '/pricing', '/signup'], sessions: 40 }, ...]
 * ```
 */
export async function findRouteSequences(
  database: Executor,
  projectId: string,
  range: TimeRange,
  options: { sample: number; limit: number },
): Promise<RouteSequence[]> {
  const { rows } = await sql<{
    r1: string;
    r2: string;
    r3: string | null;
    r4: string | null;
    sessions: number;
  }>`
    with sampled as (
      select id from sessions
      where project_id = ${projectId} and started_at >= ${range.from} and started_at < ${range.to}
      order by started_at desc, id desc
      limit ${options.sample}
    ),
    views as (
      select page_views.session_id, page_views.view_index, page_views.route,
        lag(page_views.route) over (partition by page_views.session_id order by page_views.view_index) as previous
      from sampled
      join page_views on page_views.project_id = ${projectId} and page_views.session_id = sampled.id
      where page_views.started_at >= ${range.from} and page_views.started_at < ${range.to}
    ),
    walks as (
      select session_id, route as r1,
        lead(route, 1) over walk as r2, lead(route, 2) over walk as r3, lead(route, 3) over walk as r4
      from views
      where previous is null or previous <> route
      window walk as (partition by session_id order by view_index)
    ),
    walked as (
      select distinct session_id, r1, r2, null::text as r3, null::text as r4 from walks
      where r2 is not null and r1 <> r2
      union
      select session_id, r1, r2, r3, null from walks
      where r3 is not null and r1 <> r2 and r3 <> r1 and r3 <> r2
      union
      select session_id, r1, r2, r3, r4 from walks
      where r4 is not null and r1 <> r2 and r3 <> r1 and r3 <> r2 and r4 <> r1 and r4 <> r2 and r4 <> r3
    )
    select r1, r2, r3, r4, count(*)::int as sessions
    from walked
    group by r1, r2, r3, r4
    order by sessions desc, (r4 is not null) desc, (r3 is not null) desc,
      r1 collate "C", r2 collate "C", r3 collate "C", r4 collate "C"
    limit ${options.limit}`.execute(database);
  return rows.map((row) => ({
    routes: [row.r1, row.r2, row.r3, row.r4].filter((route): route is string => route !== null),
    sessions: row.sessions,
  }));
}
