import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type Json } from '../../../test/http.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { rebuildRollupDay, rebuildRollups } from './rollups.ts';
import { DAY_MS, seedPageViews, seedSessions } from './seed.fixture.ts';

// The daily rollups of page views (rollups.ts): a read gives the same answer from rollups as from
// page_views, a changed day is read from page_views until it is rebuilt, and a rebuild never
// misses a page view a writer has not committed yet.

/** 2026-11-10T00:00:00Z: three whole days of page views from here. */
const DAY0 = Date.UTC(2026, 10, 10);
const ROUTES = ['/', '/pricing', '/docs/:slug'];
const VIEWS_PER_DAY = 240;

/** Deterministic, spread values: each page view's vitals from its index. */
function pageView(index: number) {
  return {
    route: ROUTES[index % 3] as string,
    device: index % 4 === 0 ? 'mobile' : 'desktop',
    browser_name: index % 5 === 0 ? 'Safari' : 'Chrome',
    lcp: index % 5 === 0 ? null : 600 + ((index * 7919) % 5200),
    inp: 40 + ((index * 104_729) % 700),
    cls: ((index * 31) % 40) / 100,
    fcp: 300 + ((index * 1543) % 3400),
    ttfb: 100 + ((index * 613) % 2000),
    rage_clicks: index % 17 === 0 ? 1 : 0,
    dead_clicks: index % 11 === 0 ? 2 : 0,
  };
}

async function seedDay(
  test: TestApp,
  projectId: string,
  day: number,
  release: string,
  environment: string | null,
) {
  await seedPageViews(test.database.database, projectId, VIEWS_PER_DAY, {
    start: DAY0 + day * DAY_MS + 3_600_000,
    stepMs: 60_000,
    release,
    environment,
    view: (index) => pageView(day * VIEWS_PER_DAY + index),
  });
  await seedSessions(test.database.database, projectId, 3, {
    start: DAY0 + day * DAY_MS + 3_600_000,
    release,
    environment,
  });
}

const dirtyDays = async (test: TestApp, projectId: string) =>
  (
    await sql<{ day: string }>`
      select to_char(day, 'YYYY-MM-DD') as day from page_view_dirty_days
      where project_id = ${projectId} order by day`.execute(test.database.database)
  ).rows.map((row) => row.day);

describe.each(ENGINES)('page view rollups on %s', (engine) => {
  let test: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    test = await createTestApp(engine);
    project = await test.createProject('rollups');
    await seedDay(test, project.project.id, 0, '1.0', 'production');
    await seedDay(test, project.project.id, 1, '1.0', null);
    await seedDay(test, project.project.id, 2, '1.1', 'production');
  });
  afterAll(async () => {
    await test?.close();
  });

  const { get } = apiClient(
    () => test,
    () => project,
  );
  const whole = `from=${DAY0}&to=${DAY0 + 3 * DAY_MS}`;
  const reads = [
    `/v1/vitals?${whole}`,
    `/v1/vitals?${whole}&device=mobile`,
    `/v1/vitals?${whole}&browser=Safari&route=/pricing`,
    `/v1/vitals?${whole}&release=1.0&environment=production`,
    // Partial days at both ends.
    `/v1/vitals?from=${DAY0 + 5 * 3_600_000}&to=${DAY0 + 2 * DAY_MS + 4 * 3_600_000}`,
    `/v1/dashboard/overview?from=${DAY0 + DAY_MS}&to=${DAY0 + 3 * DAY_MS}`,
    '/v1/releases',
  ];
  const readAll = () => Promise.all(reads.map((path) => get(path)));

  it('answers the same from the rollups as from page_views, within 1 % of the exact p75', async () => {
    expect(await dirtyDays(test, project.project.id)).toEqual(['2026-11-10', '2026-11-11', '2026-11-12']);
    const before = await readAll();
    const overall = before[0].overall;
    expect(overall.pageViews).toBe(3 * VIEWS_PER_DAY);
    const exact = await sql<{ lcp: number; inp: number; n: number }>`
      select percentile_disc(0.75) within group (order by lcp) as lcp,
        percentile_disc(0.75) within group (order by inp) as inp, count(lcp)::int as n
      from page_views where project_id = ${project.project.id}`.execute(test.database.database);
    const row = exact.rows[0] as { lcp: number; inp: number; n: number };
    expect(overall.metrics.LCP.count).toBe(row.n);
    expect(Math.abs(overall.metrics.LCP.p75 - row.lcp)).toBeLessThanOrEqual(row.lcp * 0.01);
    expect(Math.abs(overall.metrics.INP.p75 - row.inp)).toBeLessThanOrEqual(row.inp * 0.01);
    const indices = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => pageView(from + i));
    const current = indices(VIEWS_PER_DAY, 3 * VIEWS_PER_DAY);
    expect(before[5].pageViews).toMatchObject({ value: 2 * VIEWS_PER_DAY, previous: VIEWS_PER_DAY });
    expect(before[5].rageClicks.value).toBe(current.reduce((sum, view) => sum + view.rage_clicks, 0));
    expect(before[5].deadClicks.previous).toBe(
      indices(0, VIEWS_PER_DAY).reduce((sum, view) => sum + view.dead_clicks, 0),
    );

    expect(await rebuildRollups(test.database.database, new Date())).toEqual({ rebuilt: 3, more: false });
    expect(await dirtyDays(test, project.project.id)).toEqual([]);
    const rollups = await sql<{ n: number; views: number }>`
      select count(*)::int as n, sum(page_views)::int as views from page_view_rollups
      where project_id = ${project.project.id}`.execute(test.database.database);
    // Three days of 3 routes × 2 devices × 2 browsers at most: far fewer rows than page views.
    expect(rollups.rows[0]).toEqual({ n: expect.any(Number), views: 3 * VIEWS_PER_DAY });
    expect(rollups.rows[0]?.n).toBeLessThanOrEqual(3 * 3 * 2 * 2);
    expect(await readAll()).toEqual(before);
  });

  it('reads a changed day from page_views until it is rebuilt, then from its rollups again', async () => {
    const path = `/v1/vitals?${whole}`;
    const before: Json = await get(path);
    // A late page view on the second day, with a poor LCP.
    await seedPageViews(test.database.database, project.project.id, 1, {
      start: DAY0 + DAY_MS + 80_000_000,
      release: '1.0',
      view: () => ({ route: '/late', lcp: 9_000, view_index: 1_000 }),
    });
    expect(await dirtyDays(test, project.project.id)).toEqual(['2026-11-11']);
    const changed: Json = await get(path);
    expect(changed.overall.pageViews).toBe(before.overall.pageViews + 1);
    expect(changed.overall.metrics.LCP.count).toBe(before.overall.metrics.LCP.count + 1);
    expect(changed.routes.find((route: Json) => route.route === '/late').metrics.LCP).toMatchObject({
      count: 1,
      p75: 9_000,
      rating: 'poor',
    });
    expect(await rebuildRollups(test.database.database, new Date())).toEqual({ rebuilt: 1, more: false });
    expect(await get(path)).toEqual(changed);

    // Deleting marks the day too.
    await test.database.database.deleteFrom('page_views').where('route', '=', '/late').execute();
    expect(await dirtyDays(test, project.project.id)).toEqual(['2026-11-11']);
    expect(await get(path)).toEqual(before);
    await rebuildRollups(test.database.database, new Date());
    expect(await get(path)).toEqual(before);
  });

  it('leaves today to page_views: the worker rebuilds only the days before it', async () => {
    const now = Date.now();
    await seedPageViews(test.database.database, project.project.id, 2, {
      start: now - 60_000,
      view: (index) => ({ route: '/today', lcp: 1_000 + index, view_index: 2_000 + index }),
    });
    const today = new Date(now).toISOString().slice(0, 10);
    expect(await dirtyDays(test, project.project.id)).toEqual([today]);
    expect(await rebuildRollups(test.database.database, new Date(now))).toEqual({ rebuilt: 0, more: false });
    expect(await dirtyDays(test, project.project.id)).toEqual([today]);
    const vitals: Json = await get(`/v1/vitals?from=${now - DAY_MS}&to=${now + 1000}&route=/today`);
    expect(vitals.overall.metrics.LCP).toMatchObject({ count: 2, p75: 1_001 });
  });
});

describe('page view rollups on postgres, with a writer in a transaction', () => {
  let test: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    test = await createTestApp('postgres');
    project = await test.createProject('rollup-writer');
    await seedDay(test, project.project.id, 0, '1.0', null);
    await rebuildRollups(test.database.database, new Date());
  });
  afterAll(async () => {
    await test?.close();
  });

  it('skips a day whose page views a transaction is writing, and rebuilds it once committed', async () => {
    const database = test.database.database;
    const skipped = await database.transaction().execute(async (transaction) => {
      await seedPageViews(transaction, project.project.id, 1, {
        start: DAY0 + 7_200_000,
        view: () => ({ route: '/held', lcp: 7_000, view_index: 500 }),
      });
      // Another connection: the writer's uncommitted page view holds the day.
      return rebuildRollupDay(database, project.project.id, '2026-11-10');
    });
    expect(skipped).toBe(false);
    expect(await dirtyDays(test, project.project.id)).toEqual(['2026-11-10']);
    expect(await rebuildRollupDay(database, project.project.id, '2026-11-10')).toBe(true);
    const held = await sql<{ views: number }>`
      select page_views as views from page_view_rollups where project_id = ${project.project.id} and route = '/held'`.execute(
      database,
    );
    expect(held.rows).toEqual([{ views: 1 }]);
    // Already rebuilt: nothing to do.
    expect(await rebuildRollupDay(database, project.project.id, '2026-11-10')).toBe(false);
  });
});
