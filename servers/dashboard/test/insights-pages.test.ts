import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRegressions } from '../../api/src/modules/insights/regressions.ts';
import { DAY_MS, seedSessions } from '../../api/src/modules/insights/seed.fixture.ts';
import { type Dashboard, expectAccessible, type OpenPage, screenshot, startDashboard } from './harness.ts';
import { type Json, recordSession, serveRecordedPage } from './recorded-page.ts';
import { type ShopApp, serveShop, shop, type Visit } from './shop-app.ts';

// The insights pages on real sessions: three shoppers in headless Chromium with the browser SDK
// (test/shop-app.ts: two pay, one on a phone leaves at the cart) and a page that throws an error
// (test/recorded-page.ts, release 3.1.0), through the real ingest, the processing job (the issue)
// and the facts job (page views, clicks, scroll, vitals). Each page is read in Chromium, checked
// against the API's numbers and with axe-core.

const TIMEOUT = 120_000;

let dashboard: Dashboard;
let app: ShopApp;
let scope: string;
const visits: Array<Visit & { width: number }> = [];
let errorSessionId: string;

async function apiGet(path: string): Promise<Json> {
  const answer = await dashboard.test.app.inject({ url: path, headers: dashboard.test.first.headers });
  expect(answer.statusCode, `${path}: ${answer.body}`).toBe(200);
  return answer.json();
}

const pageViews = () => dashboard.test.database.database.selectFrom('page_views').selectAll().execute();

beforeAll(async () => {
  dashboard = await startDashboard();
  const { project } = dashboard.test.first;
  scope = `org=${project.organization_id}&project=${project.id}`;
  const page = await serveRecordedPage(dashboard);
  try {
    errorSessionId = (await recordSession(dashboard.browser, page)).sessionId;
  } finally {
    await page.close();
  }
  app = await serveShop(dashboard, dashboard.test.first.projectKey);
  for (const options of [{ width: 1280 }, { width: 390, abandon: true }, { width: 1280 }]) {
    visits.push({ ...(await shop(dashboard.browser, app, options)), width: options.width });
  }
  // The pages' last chunks leave as they unload: process until every page view is there.
  const deadline = Date.now() + 30_000;
  for (;;) {
    await dashboard.test.processingWorker.runUntilIdle();
    await dashboard.test.factsWorker.runUntilIdle();
    const buys = await dashboard.test.database.database
      .selectFrom('click_facts')
      .select('session_id')
      .where('selector', '=', 'main > button#buy.btn.primary')
      .where('kind', '=', 'click')
      .execute();
    if (((await pageViews()).length >= 9 && buys.length >= 3) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}, 4 * TIMEOUT);

afterAll(async () => {
  await app?.close();
  await dashboard?.close();
});

/** Opens `path` (with the organization and project) as `role`, failing on slow waits. */
async function open(path: string, role: 'member' | 'viewer' = 'member'): Promise<OpenPage> {
  const separator = path.includes('?') ? '&' : '?';
  const opened = await dashboard.open(`${path}${separator}${scope}`, { as: dashboard.people[role] });
  opened.page.setDefaultTimeout(15_000);
  return opened;
}

describe('insights pages', () => {
  it('the overview shows each number with its change, the vitals, calls and the top issues', {
    timeout: TIMEOUT,
  }, async () => {
    const views = await pageViews();
    expect(views).toHaveLength(9);
    const dead = views.reduce((sum, view) => sum + view.dead_clicks, 0);
    const { page, errors } = await open('/overview');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const stat = (id: string) => page.locator(`[data-stat="${id}"] .stat-value`);
    await expect.poll(() => stat('sessions').textContent()).toBe('4');
    expect(await stat('page-views').textContent()).toBe('9');
    expect(await stat('rage-clicks').textContent()).toBe('3');
    expect(await stat('dead-clicks').textContent()).toBe(String(dead));
    // One session of four had an error; nothing in the week before.
    expect(await stat('error-rate').textContent()).toBe('25 %');
    expect(await page.locator('[data-stat="sessions"] .change').textContent()).toBe('+4');
    // No session in the week before: no error rate to compare with.
    expect(await page.locator('[data-stat="error-rate"] .change').textContent()).toBe('no data before');
    expect(await stat('calls').textContent()).toBe('0');
    // Every page load on localhost is fast: FCP and TTFB good.
    for (const metric of ['FCP', 'TTFB'])
      expect(
        await page.locator(`tr[data-vital="${metric}"] [data-rating]`).first().getAttribute('data-rating'),
      ).toBe('good');
    // The range lives in the URL.
    await page.getByLabel('Time range').selectOption('24h');
    await page.waitForURL(/range=24h/);
    await expect.poll(() => stat('sessions').textContent()).toBe('4');

    const overview = await apiGet('/v1/dashboard/overview');
    const top = overview.topIssues[0];
    expect(top.title).toContain('Replay test failure');
    const link = page.locator(`tr[data-issue-id="${top.id}"] a`);
    expect(await link.textContent()).toBe(top.title);
    await expectAccessible(page);
    await screenshot(page, 'overview');
    await link.click();
    await page.waitForURL(new RegExp(`/issues/${top.id}\\?`));
    await page.getByRole('heading', { name: top.title }).waitFor();
    expect(errors).toEqual([]);
  });

  it('web vitals per route with ratings, overall, by day, and filters in the URL', {
    timeout: TIMEOUT,
  }, async () => {
    const { page, errors } = await open('/vitals');
    const products = page.locator('tr[data-route="/products"]');
    await products.waitFor();
    expect(await products.locator('[data-column="page-views"]').textContent()).toBe('3');
    expect(await products.locator('[data-metric="LCP"] [data-rating]').getAttribute('data-rating')).toBe(
      'good',
    );
    const api = await apiGet(`/v1/vitals?from=${Date.now() - 3_600_000}`);
    const lcp = api.routes.find((row: Json) => row.route === '/products').metrics.LCP;
    expect(Number(await products.locator('[data-metric="LCP"] [data-p75]').getAttribute('data-p75'))).toBe(
      lcp.p75,
    );
    expect(await page.locator('[data-overall="FCP"] [data-rating]').getAttribute('data-rating')).toBe('good');
    const checkout = page.locator('tr[data-route="/checkout/:id"]');
    expect(await checkout.locator('[data-column="page-views"]').textContent()).toBe('2');
    expect(await checkout.locator('[data-metric="FCP"]').textContent()).toBe('No data');
    // The daily series: a uPlot canvas and its table (today).
    await page.locator('.daily-chart canvas').first().waitFor();
    expect(await page.locator('[data-table="vitals-series"] tbody tr').count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'vitals');

    // A filter applies at once and lives in the URL. Chromium's user agent is a desktop one, even
    // in a phone-sized window: no mobile page view.
    expect(await page.locator('tr[data-route="/"] [data-column="page-views"]').textContent()).toBe('1');
    await page.getByLabel('Device').selectOption('mobile');
    await page.waitForURL(/device=mobile/);
    await page.getByText('No page views in this range.').first().waitFor();
    await page.getByLabel('Device').selectOption('desktop');
    await expect.poll(() => products.locator('[data-column="page-views"]').textContent()).toBe('3');
    // The broken page's release is not the shop's.
    await page.getByLabel('Release').fill('4.2.0');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/release=4\.2\.0/);
    await expect.poll(() => page.locator('tr[data-route="/"]').count()).toBe(0);
    await page.reload();
    await expect.poll(() => products.locator('[data-column="page-views"]').textContent()).toBe('3');
    expect(await page.getByLabel('Device').inputValue()).toBe('desktop');
    expect(await page.getByLabel('Release').inputValue()).toBe('4.2.0');
    expect(errors).toEqual([]);
  });

  it('a click heatmap is drawn inside the elements of the replayed page; the scroll map shades depths', {
    timeout: TIMEOUT,
  }, async () => {
    const { page, errors } = await open('/heatmaps?route=/products&kind=click&breakpoint=desktop');
    await page.getByRole('heading', { name: 'Heatmaps', level: 1 }).waitFor();
    const item = (selector: string) => page.locator(`[data-list="elements"] li[data-selector="${selector}"]`);
    await item('main > button.ghost').waitFor();
    // Two desktop shoppers: 3 clicks each on the button that does nothing, 1 on "Add to cart".
    expect(await item('main > button.ghost').locator('[data-count]').getAttribute('data-count')).toBe('6');
    expect(
      await item('main > button#buy.btn.primary').locator('[data-count]').getAttribute('data-count'),
    ).toBe('2');
    // The backdrop is the latest desktop session, replayed in its iframe.
    const stage = page.locator('[data-backdrop-session]');
    expect(await stage.getAttribute('data-backdrop-session')).toBe(visits[2]?.sessionId);
    const frame = page.frameLocator('.heatmap-screen iframe');
    const buy = frame.locator('body > main > button#buy.btn.primary');
    await buy.waitFor({ state: 'attached' });
    const points = page.locator('.heatmap-point[data-selector="main > button#buy.btn.primary"]');
    // Once the replayed page is built, each point sits in the element its selector finds.
    await expect.poll(() => points.count()).toBe(2);
    await expect
      .poll(() => points.evaluateAll((spans) => spans.map((span) => span.dataset.anchor)))
      .toEqual(['element', 'element']);
    const button = await buy.boundingBox();
    const point = await points.first().boundingBox();
    if (button === null || point === null) throw new Error('no boxes');
    // Playwright clicked 50 px in of 200 and 10 px down of 40: a quarter in, inside the button.
    const x = point.x + point.width / 2;
    const y = point.y + point.height / 2;
    expect(x).toBeGreaterThan(button.x);
    expect(x).toBeLessThan(button.x + button.width);
    expect(y).toBeGreaterThan(button.y);
    expect(y).toBeLessThan(button.y + button.height);
    expect((x - button.x) / button.width).toBeCloseTo(0.25, 1);
    // The element's box and count are drawn over it too.
    const boxed = page.locator('.heatmap-box[data-box-selector="main > button.ghost"]');
    expect(await boxed.textContent()).toBe('6');
    const box = await boxed.boundingBox();
    const ghost = await frame.locator('body > main > button.ghost').boundingBox();
    expect(Math.abs((box?.x ?? 0) - (ghost?.x ?? 1))).toBeLessThan(2);
    expect(Math.abs((box?.y ?? 0) - (ghost?.y ?? 1))).toBeLessThan(2);
    await expectAccessible(page, { exclude: '.heatmap-screen' });
    await screenshot(page, 'heatmap');

    // Rage clicks on a phone: the other backdrop, the one burst.
    await page.getByLabel('Kind').selectOption('rageclick');
    await page.getByLabel('Screen width').selectOption('mobile');
    await page.waitForURL(/kind=rageclick.*breakpoint=mobile|breakpoint=mobile.*kind=rageclick/);
    await expect.poll(() => stage.getAttribute('data-backdrop-session')).toBe(visits[1]?.sessionId);
    expect(await item('main > button.ghost').locator('[data-count]').getAttribute('data-count')).toBe('1');

    // Scroll: every visit saw the whole page (it scrolled 1,500 px, then to the cart link at the
    // bottom), so all of them reached the 100 px step below the shortest page's height.
    const heights = await dashboard.test.database.database
      .selectFrom('page_views')
      .select('page_height')
      .where('route', '=', '/products')
      .execute();
    const everyone = Math.floor(Math.min(...heights.map((row) => row.page_height ?? 0)) / 100) * 100;
    expect(everyone).toBeGreaterThan(2_300);
    await page.getByLabel('Kind').selectOption('scroll');
    await page.getByLabel('Screen width').selectOption('');
    await page.locator('[data-reached-by="1"]').waitFor();
    expect(await page.locator('[data-reached-by="1"]').textContent()).toBe(
      `100 % of page views reached ${everyone} px`,
    );
    const line = page.locator('.scroll-line[data-mark="1"]');
    await line.waitFor();
    expect(await line.textContent()).toBe(`100 % reached ${everyone} px`);
    expect(await page.locator(`.scroll-band[data-depth="${everyone}"]`).getAttribute('data-share')).toBe('1');
    await expectAccessible(page, { exclude: '.heatmap-screen' });
    await screenshot(page, 'heatmap-scroll');
    expect(errors).toEqual([]);
  });

  it('a suggestion is saved in one click; its results show the drop-off, whose link opens the replay', {
    timeout: TIMEOUT,
  }, async () => {
    const { page, errors } = await open('/funnels');
    const suggestion = page.locator('li[data-suggestion="/products → /cart → /checkout/:id"]');
    await suggestion.waitFor();
    expect(await suggestion.textContent()).toContain('Walked by 2 sessions');
    await expectAccessible(page);
    await suggestion.getByRole('button', { name: 'Save this funnel' }).click();
    await page.waitForURL(/\/funnels\/fnl_/);
    const step = (n: number) => page.locator(`[data-list="funnel-steps"] li[data-step="${n}"]`);
    await step(3).locator('[data-count]').waitFor();
    expect(await step(1).locator('[data-count]').getAttribute('data-count')).toBe('3');
    expect(await step(2).locator('[data-count]').getAttribute('data-count')).toBe('3');
    expect(await step(3).locator('[data-count]').getAttribute('data-count')).toBe('2');
    expect(await step(3).locator('[data-conversion-previous]').textContent()).toBe(
      '66.7 % of the previous step',
    );
    expect(Number(await step(3).locator('[data-median]').getAttribute('data-median'))).toBeGreaterThan(1000);
    await expectAccessible(page);
    await screenshot(page, 'funnel');
    // The phone's shopper left at the cart: the drop-off links to their replay at that moment.
    await step(3).locator('summary').click();
    const link = step(3).getByRole('link', { name: `Replay ${visits[1]?.sessionId}` });
    const href = await link.getAttribute('href');
    expect(href).toMatch(new RegExp(`^/sessions/${visits[1]?.sessionId}\\?t=\\d+&org=`));
    await link.click();
    await page.waitForURL(new RegExp(`/sessions/${visits[1]?.sessionId}\\?t=`));
    const t = Number(new URL(page.url()).searchParams.get('t'));
    const time = page.getByRole('status', { name: 'Current time' }).or(page.getByLabel('Current time'));
    await expect
      .poll(async () => Number(await time.getAttribute('data-offset-ms')))
      .toBeGreaterThanOrEqual(t - 1);
    await page.frameLocator('.player-screen iframe').locator('body > main').waitFor({ state: 'attached' });
    expect(errors).toEqual([]);
  });

  it('the builder makes a funnel of a page view, a click and a custom event, and changes it', {
    timeout: TIMEOUT,
  }, async () => {
    const { page, errors } = await open('/funnels/new');
    await page.getByRole('heading', { name: 'New funnel' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Shop checkout');
    await page.getByLabel('Step 1 route').fill('/products');
    await page.getByLabel('Step 2 type').selectOption('click');
    await page.getByLabel('Step 2 selector').fill('main > button#buy.btn.primary');
    await page.getByRole('button', { name: 'Add a step' }).click();
    await page.getByLabel('Step 3 type').selectOption('event');
    await page.getByLabel('Step 3 event name').fill('purchase');
    await page.getByLabel('Step 3 properties').fill('plan=pro');
    await page.getByLabel('Within').fill('2');
    await page.getByLabel('Unit').selectOption('hours');
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Save funnel' }).click();
    await page.waitForURL(/\/funnels\/fnl_/);
    const id = new URL(page.url()).pathname.split('/').at(-1);
    expect(await apiGet(`/v1/funnels/${id}`)).toMatchObject({
      name: 'Shop checkout',
      steps: [
        { type: 'pageview', route: '/products' },
        { type: 'click', selector: 'main > button#buy.btn.primary' },
        { type: 'event', name: 'purchase', properties: { plan: 'pro' } },
      ],
      windowMs: 7_200_000,
      countBy: 'session',
    });
    const step = (n: number) => page.locator(`[data-list="funnel-steps"] li[data-step="${n}"] [data-count]`);
    await step(3).waitFor();
    expect([await step(1).textContent(), await step(2).textContent(), await step(3).textContent()]).toEqual([
      '3 sessions',
      '3 sessions',
      '2 sessions',
    ]);
    // Changed with PATCH: count by user (the shop's visitors have none: each session is one).
    await page.getByRole('button', { name: 'Edit funnel' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Shop checkout by user');
    await page.getByLabel('User').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Shop checkout by user', level: 1 }).waitFor();
    expect(await apiGet(`/v1/funnels/${id}`)).toMatchObject({
      name: 'Shop checkout by user',
      countBy: 'user',
    });
    await expect.poll(() => step(3).textContent()).toBe('2 users');
    expect(errors).toEqual([]);
  });

  it('a viewer reads funnels and suggestions without any button that writes', {
    timeout: TIMEOUT,
  }, async () => {
    const funnels = await apiGet('/v1/funnels');
    const { page, errors } = await open('/funnels', 'viewer');
    await page.locator('li[data-suggestion]').first().waitFor();
    await page.locator('[data-table="funnels"] tbody tr').first().waitFor();
    expect(await page.getByRole('link', { name: 'New funnel' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save this funnel' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Edit before saving' }).count()).toBe(0);
    await expectAccessible(page);
    await page.getByRole('link', { name: funnels.items[0].name }).click();
    await page.locator('[data-list="funnel-steps"]').waitFor();
    expect(await page.getByRole('button', { name: /Edit funnel|Delete funnel/ }).count()).toBe(0);
    await page.goto(`/funnels/new?${scope}`);
    await page.getByText('Viewers read funnels').waitFor();
    expect(await page.getByRole('button', { name: 'Save funnel' }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('releases list their sessions, users, error rate, new issues, calls and vitals', {
    timeout: TIMEOUT,
  }, async () => {
    const { page, errors } = await open('/releases');
    const shopRelease = page.locator('tr[data-release="4.2.0"]');
    await shopRelease.waitFor();
    expect(await shopRelease.locator('[data-column="sessions"]').textContent()).toBe('3');
    expect(await shopRelease.locator('[data-column="users"]').textContent()).toBe('0');
    expect(await shopRelease.locator('[data-column="error-rate"]').textContent()).toBe('0 % (0 of 3)');
    expect(await shopRelease.locator('[data-column="new-issues"]').textContent()).toBe('0');
    expect(await shopRelease.locator('[data-vital="FCP"] [data-rating]').getAttribute('data-rating')).toBe(
      'good',
    );
    const broken = page.locator('tr[data-release="3.1.0"]');
    expect(await broken.locator('[data-column="error-rate"]').textContent()).toBe('100 % (1 of 1)');
    const api = await apiGet('/v1/releases');
    const release = api.items.find((item: Json) => item.release === '3.1.0');
    expect(release.newIssues).toBeGreaterThan(0);
    expect(await broken.locator('[data-column="new-issues"]').textContent()).toBe(String(release.newIssues));
    // Newest first: the shop's release came after the broken page's.
    expect(
      await page.locator('tr[data-release]').evaluateAll((rows) => rows.map((row) => row.dataset.release)),
    ).toEqual(['4.2.0', '3.1.0']);
    expect(await page.locator('[data-regression]').count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'releases');
    // The sessions of a release open filtered.
    await shopRelease.locator('[data-column="sessions"] a').click();
    await page.waitForURL(/\/sessions\?release=4\.2\.0/);
    expect(errors).toEqual([]);
    expect(errorSessionId).toMatch(/^ses_/);
  });

  it('a release with a regression shows a badge naming the metric, and what it was compared with', {
    timeout: TIMEOUT,
  }, async () => {
    // In an environment of their own (so the shop's releases are not compared with them): 5 % of
    // 200 sessions with an error in 8.0.0, 20 % in 8.1.0, and 8.2.0 as 8.1.0 (no regression).
    const database = dashboard.test.database.database;
    const { project } = dashboard.test.first;
    const now = Date.now();
    for (const [release, start, withErrors] of [
      ['8.0.0', now - 10 * DAY_MS, 10],
      ['8.1.0', now - 4 * DAY_MS, 40],
      ['8.2.0', now - 2 * DAY_MS, 40],
    ] as const)
      await seedSessions(database, project.id, 200, { release, environment: 'canary', start, withErrors });
    const check = await checkRegressions(database, project, new Date(now));
    expect(check.fired).toEqual([
      { type: 'release.regression', key: JSON.stringify(['canary', '8.1.0', 'error_rate']) },
    ]);

    const { page, errors } = await open('/releases');
    const regressed = page.locator('tr[data-release="8.1.0"]');
    await regressed.waitFor();
    const badge = regressed.locator('th [data-regression="error_rate"]');
    expect(await badge.textContent()).toBe('Regression: error rate');
    expect(await regressed.locator('[data-column="error-rate"]').textContent()).toBe(
      '20 % (40 of 200) Regression: worse than 8.0.0 (5 % in canary)',
    );
    // The row's header names the regression to a screen reader, in words.
    expect(await page.getByRole('rowheader', { name: '8.1.0 Regression: error rate' }).count()).toBe(1);
    for (const release of ['8.2.0', '8.0.0', '4.2.0', '3.1.0'])
      expect(await page.locator(`tr[data-release="${release}"] [data-regression]`).count(), release).toBe(0);
    expect(await page.locator('[data-regression]').count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'releases-regression');
    expect(errors).toEqual([]);
  });
});
