import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatClock } from '../src/ui/format.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';
import type { Json } from './recorded-page.ts';
import {
  SERVICE_NAME,
  type ShopPage,
  type ShopVisit,
  serveShopPage,
  startTracedService,
  type TracedService,
  visitShop,
} from './traced-service.ts';

// The session page's network panel and trace waterfall, with a session recorded by the real
// browser SDK in Chromium calling a Node service traced by the real OpenTelemetry SDK. Here the
// service's server spans carry `session.id` (the page sends its session id), so the session's
// traces are found as the traces route finds them today; test/trace-proof.test.ts links them by
// the requests' trace ids alone.

let dashboard: Dashboard;
let service: TracedService;
let shopPage: ShopPage;
let visit: ShopVisit;
let startedAt: number;
/** The session's request events, by URL path. */
let requests: Record<string, Json>;

const TIMEOUT = 60_000;

beforeAll(async () => {
  dashboard = await startDashboard();
  service = await startTracedService(dashboard, { sessionIdFromHeader: true });
  shopPage = await serveShopPage(dashboard, service, { sendSessionId: true });
  visit = await visitShop(dashboard.browser, shopPage);
  await service.flush();
  await dashboard.test.processingWorker.runUntilIdle();
  const headers = dashboard.test.first.headers;
  const detail = await dashboard.test.app.inject({ url: `/v1/sessions/${visit.sessionId}`, headers });
  startedAt = Date.parse(detail.json().startedAt);
  const events = await dashboard.test.app.inject({
    url: `/v1/sessions/${visit.sessionId}/events?types=request&limit=1000`,
    headers,
  });
  requests = Object.fromEntries(
    (events.json().items as Json[]).map((item) => [new URL(item.event.url).pathname, item.event]),
  );
}, 180_000);

afterAll(async () => {
  await shopPage?.close();
  await service?.close();
  await dashboard?.close();
});

const replayed = (page: Page) => page.frameLocator('.player-screen iframe');

async function currentOffset(page: Page): Promise<number> {
  return Number(await page.getByLabel('Current time').getAttribute('data-offset-ms'));
}

/** The network table's rows as text: request, type, status, trace. */
async function networkRows(page: Page): Promise<string[][]> {
  return page
    .locator('.network-table tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        [...row.querySelectorAll('td')].map((cell) => (cell.textContent ?? '').replace(/\s+/g, ' ').trim()),
      ),
    );
}

async function openSession(page: Page) {
  await replayed(page).locator('#cart').waitFor({ timeout: 20_000 });
  await page.locator('.network-table tbody tr').first().waitFor();
}

it('records the three requests; the service continued the browser traces of the two it was a target for', () => {
  expect(Object.keys(requests).sort()).toEqual(['/api/cart', '/api/orders', '/logo.png']);
  expect(requests['/api/cart']).toMatchObject({ initiator: 'fetch', method: 'GET', status: 200 });
  expect(requests['/api/cart'].url).toBe(`${service.origin}/api/cart`);
  expect(requests['/api/orders']).toMatchObject({ initiator: 'xhr', method: 'POST', status: 500 });
  expect(requests['/logo.png']).toMatchObject({ status: 404 });
  expect(requests['/logo.png'].traceId).toBeUndefined();
  for (const path of ['/api/cart', '/api/orders']) {
    expect(requests[path].traceId).toMatch(/^[0-9a-f]{32}$/);
    const call = service.received.find((received) => received.path === path);
    expect(call?.traceparent?.split('-')[1]).toBe(requests[path].traceId);
  }
});

describe('the network panel', () => {
  it(
    'lists the requests with failures in words, filters them, and follows and seeks the replay',
    async () => {
      const { page, errors } = await dashboard.open(`/sessions/${visit.sessionId}`, {
        as: dashboard.people.member,
      });
      await openSession(page);
      const origin = new URL(shopPage.url).origin;
      expect((await networkRows(page)).map((cells) => cells.slice(1, 4).concat(cells[7] ?? ''))).toEqual([
        [
          `Play from ${clock(requests['/api/cart'])}: GET ${service.origin}/api/cart`,
          'Fetch',
          '200',
          `Trace of GET ${service.origin}/api/cart`,
        ],
        [
          `Play from ${clock(requests['/api/orders'])}: POST ${service.origin}/api/orders`,
          'XHR',
          'Failed: 500',
          `Trace of POST ${service.origin}/api/orders`,
        ],
        [`Play from ${clock(requests['/logo.png'])}: GET ${origin}/logo.png`, 'Fetch', 'Failed: 404', '–'],
      ]);
      const rows = page.locator('.network-table tbody tr');
      // Rows sit at the requests' start times.
      for (const [index, path] of ['/api/cart', '/api/orders', '/logo.png'].entries())
        expect(Number(await rows.nth(index).getAttribute('data-offset')), path).toBe(
          Math.round(requests[path].t - startedAt),
        );
      expect(Math.abs(requests['/api/cart'].t - visit.cartAt)).toBeLessThan(1000);

      // Filters: failed, XHR, fetch, all.
      const filter = (name: RegExp) => page.getByRole('radio', { name }).check();
      await filter(/^Failed/);
      expect((await networkRows(page)).map((cells) => cells[3])).toEqual(['Failed: 500', 'Failed: 404']);
      await filter(/^XHR/);
      expect((await networkRows(page)).map((cells) => cells[2])).toEqual(['XHR']);
      await filter(/^Fetch/);
      expect(await rows.count()).toBe(2);
      await filter(/^All/);
      expect(await rows.count()).toBe(3);

      // A row's request seeks the player there; the row at the player's time is marked.
      await page
        .getByRole('button', { name: new RegExp(`^Play from .*: POST ${service.origin}/api/orders$`) })
        .click();
      const orderOffset = Math.round(requests['/api/orders'].t - startedAt);
      await expect.poll(() => currentOffset(page)).toBe(orderOffset);
      const current = page.locator('.network-table tbody tr[aria-current="true"]');
      expect(await current.getAttribute('data-offset')).toBe(String(orderOffset));
      await page
        .getByRole('button', { name: new RegExp(`^Play from .*: GET ${service.origin}/api/cart$`) })
        .click();
      await expect
        .poll(() => current.getAttribute('data-offset'))
        .toBe(String(Math.round(requests['/api/cart'].t - startedAt)));
      // Playing on, the marked row follows playback to the last request.
      await page.getByLabel('Speed').selectOption('4');
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect
        .poll(() => current.getAttribute('data-offset'), { timeout: 20_000 })
        .toBe(String(Math.round(requests['/logo.png'].t - startedAt)));
      await expectAccessible(page, { exclude: '.player-screen' });
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );

  it(
    "opens a request's trace as a waterfall: spans nested, bars, errors in words, attributes, logs, keys",
    async () => {
      const traceId = requests['/api/orders'].traceId as string;
      const browserSpanId = service.received
        .find((received) => received.path === '/api/orders')
        ?.traceparent?.split('-')[2];
      const { page, errors } = await dashboard.open(`/sessions/${visit.sessionId}`, {
        as: dashboard.people.viewer,
      });
      await openSession(page);
      const button = page.getByRole('button', { name: `Trace of POST ${service.origin}/api/orders` });
      await button.click();
      expect(await button.getAttribute('aria-expanded')).toBe('true');
      const grid = page.getByRole('treegrid', { name: `Spans of trace ${traceId}` });
      await grid.waitFor();
      const rows = grid.locator('tbody tr');
      const rowFacts = () =>
        rows.evaluateAll((found) =>
          found.map((row) => ({
            level: row.getAttribute('aria-level'),
            expanded: row.getAttribute('aria-expanded'),
            cells: [...row.querySelectorAll('td')].slice(0, 4).map((cell) => cell.textContent?.trim()),
          })),
        );
      const facts = await rowFacts();
      expect(facts.map((row) => [row.level, row.expanded, ...row.cells.slice(0, 3)])).toEqual([
        ['1', 'true', '▾POST /api/orders', SERVICE_NAME, 'Error: order failed'],
        ['2', null, 'charge card', SERVICE_NAME, 'Error: card declined'],
      ]);
      // The bars: the server span spans the trace; the charge starts inside it and is shorter.
      const bar = (index: number) => rows.nth(index).locator('.waterfall-bar');
      expect(Number(await bar(0).getAttribute('data-start'))).toBe(0);
      expect(Number(await bar(0).getAttribute('data-width'))).toBe(1);
      const childStart = Number(await bar(1).getAttribute('data-start'));
      const childWidth = Number(await bar(1).getAttribute('data-width'));
      expect(childWidth).toBeGreaterThan(0);
      expect(childWidth).toBeLessThan(1);
      expect(childStart + childWidth).toBeLessThanOrEqual(1);
      const [rootBox, childBox] = [await bar(0).boundingBox(), await bar(1).boundingBox()];
      expect(childBox?.width).toBeLessThan(rootBox?.width ?? 0);
      expect(childBox?.x).toBeGreaterThanOrEqual(rootBox?.x ?? Number.POSITIVE_INFINITY);

      // The root is selected first: its attributes, and its parent is the browser's span.
      const details = page.getByRole('region', { name: 'Span POST /api/orders' });
      expect(await details.getByRole('row', { name: /http\.request\.method/ }).textContent()).toBe(
        'http.request.methodPOST',
      );
      expect(await details.textContent()).toContain(visit.sessionId);
      const traces = await dashboard.test.app.inject({
        url: `/v1/sessions/${visit.sessionId}/traces`,
        headers: dashboard.test.first.headers,
      });
      const tree = (traces.json().items as Json[]).find((item) => item.traceId === traceId);
      expect(tree.roots[0].parentSpanId).toBe(browserSpanId);

      // Keys: ↓ to the child, Enter selects it; ← to the parent, ← closes, → opens.
      await rows.nth(0).focus();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      const child = page.getByRole('region', { name: 'Span charge card' });
      expect(await child.getByRole('row', { name: /payment\.provider/ }).textContent()).toBe(
        'payment.providertest-bank',
      );
      expect(await rows.nth(1).getAttribute('aria-selected')).toBe('true');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.nth(0).getAttribute('aria-expanded')).toBe('false');
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => rows.count()).toBe(2);

      // The trace's log, under it, with its span's name.
      const logs = page.getByRole('table', { name: 'Logs' });
      expect(
        await logs
          .locator('tbody tr')
          .evaluateAll((found) =>
            found.map((row) => [...row.querySelectorAll('td')].slice(1).map((cell) => cell.textContent)),
          ),
      ).toEqual([['ERROR', SERVICE_NAME, 'POST /api/orders', 'order 42 rejected: card declined']]);

      await screenshot(page, 'network');
      await expectAccessible(page, { exclude: '.player-screen' });
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );
});

/** A request's start as the panel prints it. */
const clock = (event: Json) => formatClock(event.t - startedAt);
