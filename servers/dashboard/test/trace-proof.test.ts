import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Dashboard, expectAccessible, startDashboard } from './harness.ts';
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

// Issue 23's end-to-end proof: a page recorded by the real browser SDK in Chromium
// (`tracePropagationTargets` = the service's origin) calls a Node HTTP service traced by the real
// OpenTelemetry SDK (W3C trace context, OTLP protobuf spans and OTLP logs to the real server).
// Nothing carries `session.id`: the session's traces are found by the trace ids of its request
// events alone. Then `GET /v1/sessions/{id}/traces` answers the tree, and the dashboard shows the
// network row and its waterfall.

let dashboard: Dashboard;
let service: TracedService;
let shopPage: ShopPage;
let visit: ShopVisit;

beforeAll(async () => {
  dashboard = await startDashboard();
  service = await startTracedService(dashboard, { sessionIdFromHeader: false });
  shopPage = await serveShopPage(dashboard, service, { sendSessionId: false });
  visit = await visitShop(dashboard.browser, shopPage);
  await service.flush();
  await dashboard.test.processingWorker.runUntilIdle();
}, 180_000);

afterAll(async () => {
  await shopPage?.close();
  await service?.close();
  await dashboard?.close();
});

it('links the service trace to the session by the request trace id: the API tree and the waterfall', async () => {
  const headers = dashboard.test.first.headers;
  const events = await dashboard.test.app.inject({
    url: `/v1/sessions/${visit.sessionId}/events?types=request&limit=1000`,
    headers,
  });
  const cart = (events.json().items as Json[]).find(
    (item) => item.event.url === `${service.origin}/api/cart`,
  )?.event;
  expect(cart).toMatchObject({ initiator: 'fetch', method: 'GET', status: 200 });
  const traceId: string = cart.traceId;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  // The browser sent `traceparent: 00-<trace id>-<its span id>-01` to the service.
  const traceparent = service.received.find((call) => call.path === '/api/cart')?.traceparent ?? '';
  const [, sentTraceId, browserSpanId] = traceparent.split('-');
  expect(sentTraceId).toBe(traceId);

  // The service's spans were stored without a session id: only the trace id links them.
  const stored = await dashboard.test.database.database
    .selectFrom('spans')
    .select(['span_id', 'parent_span_id', 'name', 'session_id'])
    .where('project_id', '=', dashboard.test.first.project.id)
    .where('trace_id', '=', traceId)
    .orderBy('name')
    .execute();
  // By name: the query's span may start in the same instant as the request's.
  expect(stored.map((span) => [span.name, span.session_id])).toEqual([
    ['GET /api/cart', null],
    ['SELECT cart', null],
  ]);
  const [server, query] = stored;
  expect(server?.parent_span_id).toBe(browserSpanId);
  expect(query?.parent_span_id).toBe(server?.span_id);

  // The dashboard's network row of the request (the events route, no linking needed).
  const { page, errors } = await dashboard.open(`/sessions/${visit.sessionId}`, {
    as: dashboard.people.member,
  });
  await page.frameLocator('.player-screen iframe').locator('#cart').waitFor({ timeout: 20_000 });
  const row = page.locator('.network-table tbody tr', { hasText: `GET ${service.origin}/api/cart` });
  await row.waitFor();
  expect(await row.locator('.network-status').textContent()).toBe('200');

  // The session's traces: the server span is a root (its parent, the browser's span, is not
  // stored), its query nested under it, the service's log of the trace beside.
  const traces = await dashboard.test.app.inject({ url: `/v1/sessions/${visit.sessionId}/traces`, headers });
  expect(traces.statusCode).toBe(200);
  const tree = (traces.json().items as Json[]).find((item) => item.traceId === traceId);
  expect(tree, 'the trace of the session request event (linked by trace id)').toBeDefined();
  expect(tree).toMatchObject({ spanCount: 2, errorCount: 0 });
  expect(tree.roots).toHaveLength(1);
  expect(tree.roots[0]).toMatchObject({
    name: 'GET /api/cart',
    kind: 'server',
    service: SERVICE_NAME,
    parentSpanId: browserSpanId,
    attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 },
  });
  expect(tree.roots[0].attributes['session.id']).toBeUndefined();
  expect(tree.roots[0].children).toMatchObject([
    { name: 'SELECT cart', service: SERVICE_NAME, attributes: { 'db.system': 'postgresql' }, children: [] },
  ]);
  expect(tree.logs).toMatchObject([
    { body: 'cart read: 3 items', severityText: 'INFO', spanId: tree.roots[0].spanId, service: SERVICE_NAME },
  ]);

  // …and the dashboard draws it.
  await row.getByRole('button', { name: /^Trace of GET/ }).click();
  const grid = page.getByRole('treegrid', { name: `Spans of trace ${traceId}` });
  await grid.waitFor();
  expect(
    await grid
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((found) => [found.getAttribute('aria-level'), found.querySelector('td')?.textContent]),
      ),
  ).toEqual([
    ['1', '▾GET /api/cart'],
    ['2', 'SELECT cart'],
  ]);
  expect(await page.getByRole('table', { name: 'Logs' }).textContent()).toContain('cart read: 3 items');
  await expectAccessible(page, { exclude: '.player-screen' });
  expect(errors).toEqual([]);
  await page.context().close();
}, 60_000);
