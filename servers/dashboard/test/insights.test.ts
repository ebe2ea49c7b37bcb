import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../../api/test/test-database.ts';
import { type Dashboard, startDashboard } from './harness.ts';
import type { Json } from './recorded-page.ts';
import { type ShopApp, serveShop, shop, type Visit } from './shop-app.ts';

// The proof of insights, on both engines: real sessions from headless Chromium with the browser
// SDK on a small multi-page shop (clicks, a rage click, dead clicks, scrolling, a funnel walked to
// the end and one abandoned) give exactly the expected facts, heatmap counts, funnel results and
// vitals buckets.

const TIMEOUT = 120_000;

describe.each(ENGINES)('insights from real sessions on %s', (engine) => {
  let dashboard: Dashboard;
  let app: ShopApp;
  const visits: Array<Visit & { width: number }> = [];

  beforeAll(async () => {
    dashboard = await startDashboard({ engine });
    app = await serveShop(dashboard, dashboard.test.first.projectKey);
    for (const options of [{ width: 1280 }, { width: 390, abandon: true }, { width: 1280 }]) {
      visits.push({ ...(await shop(dashboard.browser, app, options)), width: options.width });
    }
    // The pages' last chunks leave as they unload: derive facts until every page view is there.
    const deadline = Date.now() + 30_000;
    for (;;) {
      await dashboard.test.factsWorker.runUntilIdle();
      if ((await views()).length >= 8 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }, 4 * TIMEOUT);

  afterAll(async () => {
    await app?.close();
    await dashboard?.close();
  });

  const views = () =>
    dashboard.test.database.database.selectFrom('page_views').selectAll().orderBy('started_at').execute();
  const clicks = () =>
    dashboard.test.database.database
      .selectFrom('click_facts')
      .selectAll()
      .orderBy('t')
      .orderBy('kind')
      .execute();
  const get = async (path: string): Promise<Json> => {
    const response = await dashboard.test.app.inject({ url: path, headers: dashboard.test.first.headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  it("derives each visit's page views, clicks, rage and dead clicks and scroll depth", async () => {
    const all = await views();
    const facts = await clicks();
    for (const visit of visits) {
      const own = all.filter((view) => view.session_id === visit.sessionId);
      const breakpoint = visit.width === 1280 ? 'desktop' : 'mobile';
      expect(own.map((view) => [view.view_index, view.route, view.breakpoint])).toEqual([
        [0, '/products', breakpoint],
        [1, '/cart', breakpoint],
        ...(visit.paid ? [[2, '/checkout/:id', breakpoint]] : []),
      ]);
      const [products, cart] = own;
      expect(products).toMatchObject({
        clicks: 5,
        rage_clicks: 1,
        dead_clicks: 3,
        viewport_width: visit.width,
      });
      // Scrolled 1,500 px, then to the bottom: the deepest point seen is the page's height.
      expect(products?.page_height).toBeGreaterThan(2_400);
      expect(products?.scroll_depth).toBe(products?.page_height);
      expect(cart).toMatchObject({ clicks: visit.paid ? 1 : 0, rage_clicks: 0, dead_clicks: 0 });
      // Time on page runs to the next page view.
      expect(products?.ended_at.getTime()).toBe(cart?.started_at.getTime());
      expect(products?.duration_ms).toBeGreaterThan(5_000);

      const own_clicks = facts.filter((fact) => fact.session_id === visit.sessionId);
      // By time, then kind: each dead click at its click's time, the rage click at its first.
      const ghost = (kinds: string[]) =>
        kinds.map((kind) => [kind, '/products', 'main > button.ghost', kind === 'rage' ? 3 : 1]);
      expect(own_clicks.map((fact) => [fact.kind, fact.route, fact.selector, fact.count])).toEqual([
        ['click', '/products', 'main > button#buy.btn.primary', 1],
        ...ghost(['click', 'dead', 'rage', 'click', 'dead', 'click', 'dead']),
        ['click', '/products', 'main > a#to-cart', 1],
        ...(visit.paid
          ? [
              ['click', '/cart', 'main > button#checkout', 1],
              ['click', '/checkout/:id', 'main > section#view > button#pay', 1],
            ]
          : []),
      ]);
      // Positions: Playwright clicked "Add to cart" 50 px from its left of 200 and 10 px down of 40.
      const buy = own_clicks.find((fact) => fact.selector === 'main > button#buy.btn.primary');
      // (Playwright's position is from the padding box; the fractions are of the border box.)
      expect(buy?.element_x).toBeCloseTo(0.25, 1);
      expect(buy?.element_y).toBeCloseTo(0.25, 1);
      const pay = own_clicks.find((fact) => fact.selector?.endsWith('button#pay'));
      if (visit.paid) expect(pay?.page_y).toBeGreaterThan(0);
      // Nothing masked entered a fact: no text, no query string.
      expect(JSON.stringify({ own, own_clicks })).not.toMatch(/Add to cart|Ada|ref=mail|\*\*\*/);
    }
  });

  it('gives the heatmaps of those clicks and scrolls, by breakpoint', async () => {
    const range = `from=${Date.now() - 3_600_000}&to=${Date.now() + 60_000}`;
    const all = await get(`/v1/heatmaps?${range}&route=/products&kind=click`);
    expect(all.total).toBe(15);
    expect(all.elements.map((element: Json) => [element.selector, element.count])).toEqual([
      ['main > button.ghost', 9],
      ['main > a#to-cart', 3],
      ['main > button#buy.btn.primary', 3],
    ]);
    const rage = await get(`/v1/heatmaps?${range}&route=/products&kind=rageclick&breakpoint=desktop`);
    expect(rage).toMatchObject({ total: 2, elements: [{ selector: 'main > button.ghost', count: 2 }] });
    expect(rage.backdrop.sessionId).toBe(visits[2]?.sessionId);
    const dead = await get(`/v1/heatmaps?${range}&route=/products&kind=deadclick&breakpoint=mobile`);
    expect(dead).toMatchObject({ total: 3, elements: [{ selector: 'main > button.ghost', count: 3 }] });
    expect(dead.backdrop.sessionId).toBe(visits[1]?.sessionId);
    const scroll = await get(`/v1/heatmaps?${range}&route=/products&kind=scroll`);
    expect(scroll.pageViews).toBe(3);
    // Every visit saw the whole page (about 2,600 px high, a little more on the phone).
    const heights = (await views())
      .filter((view) => view.route === '/products')
      .map((view) => view.page_height as number);
    const deepest = Math.max(...heights);
    expect(scroll.depths).toHaveLength(Math.floor(deepest / 100) + 1);
    for (const step of scroll.depths)
      expect(step).toEqual({
        depth: step.depth,
        reached: heights.filter((height) => height >= step.depth).length,
        share: heights.filter((height) => height >= step.depth).length / 3,
      });
    expect(scroll.depths[24]).toEqual({ depth: 2_400, reached: 3, share: 1 });
  });

  it("puts every page load's vitals in the good bucket, counted per route", async () => {
    const range = `from=${Date.now() - 3_600_000}&to=${Date.now() + 60_000}`;
    const vitals = await get(`/v1/vitals?${range}`);
    expect(vitals.overall.pageViews).toBe(8);
    // Six page loads on localhost: each reported FCP and TTFB, all good.
    for (const metric of ['FCP', 'TTFB']) {
      expect(vitals.overall.metrics[metric]).toMatchObject({ count: 6, rating: 'good', good: 1, poor: 0 });
    }
    const products = vitals.routes.find((row: Json) => row.route === '/products');
    // A click is the first input that settles LCP: every product page reported it.
    expect(products.metrics.LCP).toMatchObject({ count: 3, rating: 'good', good: 1 });
    const checkout = vitals.routes.find((row: Json) => row.route === '/checkout/:id');
    expect(checkout).toMatchObject({ pageViews: 2, metrics: { FCP: { count: 0 }, TTFB: { count: 0 } } });
  });

  it("counts the funnel walked to the end twice and abandoned once, with the drop-off's replay", async () => {
    const response = await dashboard.test.app.inject({
      method: 'POST',
      url: '/v1/funnels',
      headers: dashboard.test.first.headers,
      payload: {
        name: 'Purchase',
        steps: [
          { type: 'pageview', route: '/products' },
          { type: 'click', selector: 'main > a#to-cart' },
          { type: 'pageview', route: '/cart' },
          { type: 'event', name: 'purchase', properties: { plan: 'pro' } },
        ],
        windowMs: 600_000,
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const range = `from=${Date.now() - 3_600_000}&to=${Date.now() + 60_000}`;
    const results = await get(`/v1/funnels/${response.json().id}/results?${range}`);
    expect(results.steps.map((step: Json) => [step.count, step.droppedOffCount])).toEqual([
      [3, 0],
      [3, 0],
      [3, 0],
      [2, 1],
    ]);
    expect(results.steps[3].conversionFromFirst).toBeCloseTo(2 / 3);
    const [dropped] = results.steps[3].droppedOff;
    expect(dropped.sessionId).toBe(visits[1]?.sessionId);
    expect(dropped.links.replay).toMatch(new RegExp(`/sessions/${visits[1]?.sessionId}\\?t=\\d+$`));
    // The time from the cart to the purchase: a checkout click and a pay click, over a second each.
    expect(results.steps[3].medianTimeFromPreviousMs).toBeGreaterThan(2_000);
  });
});
