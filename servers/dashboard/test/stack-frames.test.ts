import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BuiltBundle,
  buildCheckout,
  CALL_LINE,
  THROW_LINE,
} from '../../api/src/modules/sourcemaps/sourcemaps.fixture.ts';
import { newSessionId, postChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';
import { apiGet } from './issue-fixtures.ts';
import { withOneError } from './recorded-page.ts';

// Symbolicated errors in the app, end to end: a minified esbuild bundle and its source map are
// uploaded through the API; Chromium runs the bundle on a shop page and the error it throws is
// sent with its real stack in a session (the protocol fixture's recording); the processing job
// maps the stack. The issue page and the session page show the original frames and the source
// line that threw; an error of a script without a map shows its stack as printed.

const RELEASE = 'shop@1.4.0';
const ORIGIN = 'https://shop.example.com';

// biome-ignore lint/suspicious/noExplicitAny: JSON of the fixture
type Json = any;

interface Frame {
  mapped: boolean;
  function?: string;
  file?: string;
  line?: number;
}

interface IssueView {
  id: string;
  title: string;
  latestError?: { sessionId: string; stack?: string; frames?: Frame[] };
}

let dashboard: Dashboard;
let bundle: BuiltBundle;

/** The stack Chromium prints when the shop page's checkout, loaded from `scriptPath`, throws. */
async function browserStack(scriptPath: string): Promise<string> {
  const context = await dashboard.browser.newContext();
  await context.route(`${ORIGIN}/**`, (route) => {
    const { pathname } = new URL(route.request().url());
    if (pathname === scriptPath) return route.fulfill({ contentType: 'text/javascript', body: bundle.code });
    return route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><title>Shop</title><script src="${scriptPath}"></script>
<script>
  window.addEventListener('error', (event) => { window.caught = event.error.stack; });
  setTimeout(function pay() { app.checkout({}); }, 0);
</script>`,
    });
  });
  const page = await context.newPage();
  await page.goto(`${ORIGIN}/checkout`);
  const stack = await page.waitForFunction(() => (window as unknown as { caught?: string }).caught);
  const text = (await stack.jsonValue()) as string;
  await context.close();
  return text;
}

/** A session of the fixture's recording whose error is the given one; ingested and processed. */
async function erroredSession(stack: string): Promise<string> {
  const sessionId = newSessionId();
  const fixture = JSON.parse((await validChunkFixture('recording-seq-0')).toString('utf8')) as Json;
  const events = withOneError(fixture.events, stack);
  const chunk = { ...fixture, sessionId, meta: { ...fixture.meta, release: RELEASE }, events };
  const answer = await postChunk(
    dashboard.test.app,
    dashboard.test.first.projectKey,
    Buffer.from(JSON.stringify(chunk)),
  );
  expect(answer.statusCode, answer.body).toBe(200);
  await dashboard.test.processingWorker.runUntilIdle();
  return sessionId;
}

let mappedSession: string;
let mappedIssue: IssueView;
let unmappedIssue: IssueView;
let unmappedStack: string;

beforeAll(async () => {
  dashboard = await startDashboard();
  bundle = await buildCheckout({ name: 'main.js', debugId: true });
  const form = new FormData();
  form.append('release', RELEASE);
  form.append('urlPrefix', '~/static/js/');
  form.append('file', new Blob([bundle.code]), 'main.js');
  form.append('file', new Blob([bundle.map]), 'main.js.map');
  const uploaded = await fetch(`${dashboard.base}/v1/sourcemaps`, {
    method: 'POST',
    headers: dashboard.test.first.headers,
    body: form,
  });
  expect(uploaded.status, await uploaded.text()).toBe(201);

  mappedSession = await erroredSession(await browserStack('/static/js/main.js'));
  // The same bundle served where no map was uploaded: its stack stays as printed.
  unmappedStack = await browserStack('/legacy/checkout.js');
  await erroredSession(unmappedStack);

  const { items } = await apiGet<{ items: IssueView[] }>(dashboard.test, '/v1/issues?kind=error');
  expect(items).toHaveLength(2);
  const details = await Promise.all(
    items.map((item) => apiGet<IssueView>(dashboard.test, `/v1/issues/${item.id}`)),
  );
  const mapped = details.find((detail) => detail.latestError?.frames !== undefined);
  const unmapped = details.find((detail) => detail.latestError?.frames === undefined);
  if (mapped === undefined || unmapped === undefined)
    throw new Error('expected one mapped and one unmapped issue');
  mappedIssue = mapped;
  unmappedIssue = unmapped;
  // The API's side of it: Chromium's real stack, mapped to the original source.
  expect(mapped.latestError?.frames?.slice(0, 2)).toMatchObject([
    { mapped: true, file: 'src/checkout.ts', line: THROW_LINE, function: 'validate' },
    { mapped: true, file: 'src/checkout.ts', line: CALL_LINE, function: 'checkout' },
  ]);
  expect(unmapped.latestError?.stack).toBe(unmappedStack);
}, 180_000);

afterAll(async () => {
  await dashboard?.close();
});

describe('symbolicated stacks', () => {
  it('the issue page shows the original frames, the top one open on the line that threw', {
    timeout: 60_000,
  }, async () => {
    const { project } = dashboard.test.first;
    const scope = `org=${project.organization_id}&project=${project.id}`;
    const { page, errors, context } = await dashboard.open(`/issues/${mappedIssue.id}?${scope}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(10_000);
    await page.getByRole('heading', { name: 'Latest error', level: 2 }).waitFor();
    const frames = page.getByRole('list', { name: 'Frames of the latest error' });
    const items = frames.getByRole('listitem');
    const top = items.nth(0);
    const topText = await top.textContent();
    expect(topText).toContain(`validate at src/checkout.ts:${THROW_LINE}:`);
    expect(topText).toContain('from the source map');
    expect(topText).toMatch(/minified: .*https:\/\/shop\.example\.com\/static\/js\/main\.js:1:\d+/);

    // The top frame is open on its source: numbered lines, the throwing one marked in words too.
    const source = page.getByRole('table', { name: `Source of src/checkout.ts around line ${THROW_LINE}` });
    expect(await source.isVisible()).toBe(true);
    const current = source.locator('tr[aria-current="true"]');
    expect(await current.getByRole('rowheader').textContent()).toBe(`→ ${THROW_LINE} (the error’s line)`);
    expect(await current.getByRole('cell').textContent()).toContain(
      "throw new TypeError('cart has no items');",
    );
    expect(await current.locator('mark').isVisible()).toBe(true);
    expect(await source.getByRole('rowheader').first().textContent()).toBe(String(THROW_LINE - 5));

    // The caller's frame is closed until opened.
    const caller = items.nth(1);
    expect(await caller.textContent()).toContain(`checkout at src/checkout.ts:${CALL_LINE}:`);
    const callerSource = page.getByRole('table', {
      name: `Source of src/checkout.ts around line ${CALL_LINE}`,
    });
    expect(await callerSource.isVisible()).toBe(false);
    await caller.locator('summary').click();
    await callerSource.waitFor();
    expect(await callerSource.locator('tr[aria-current="true"] td').textContent()).toContain(
      'const count = validate(cart);',
    );

    // The inline script's frame (no map for the page) as printed.
    const inline = items.filter({ hasText: 'pay at https://shop.example.com/checkout:' });
    expect(await inline.count()).toBe(1);
    expect(await inline.textContent()).not.toContain('from the source map');

    expect(await page.getByRole('link', { name: `session ${mappedSession}` }).getAttribute('href')).toBe(
      `/sessions/${mappedSession}?${scope}`,
    );
    await expectAccessible(page);
    await screenshot(page, 'issue-stack');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('an error without a map shows its stack as printed', { timeout: 60_000 }, async () => {
    const { page, errors, context } = await dashboard.open(`/issues/${unmappedIssue.id}`, {
      as: dashboard.people.viewer,
    });
    await page.getByRole('heading', { name: 'Latest error', level: 2 }).waitFor();
    await page.getByText('The stack as the browser printed it').waitFor();
    expect(await page.locator('pre.raw-stack').textContent()).toBe(unmappedStack);
    expect(await page.getByRole('list', { name: 'Frames of the latest error' }).count()).toBe(0);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("the session page's error entry opens on the same frames", { timeout: 60_000 }, async () => {
    const { page, errors, context } = await dashboard.open(`/sessions/${mappedSession}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(15_000);
    const row = page.locator('.event-row', { hasText: 'TypeError: cart has no items' });
    await row.waitFor();
    const stack = page.locator('details.event-stack');
    await stack.waitFor();
    expect(await stack.getAttribute('open')).toBeNull();
    const summary = stack.locator(':scope > summary');
    expect(await summary.textContent()).toBe('Stack, original frames from the source map');
    const frames = page.getByRole('list', { name: 'Frames of TypeError: cart has no items' });
    expect(await frames.isVisible()).toBe(false);
    await summary.click();
    await frames.waitFor();
    expect(await frames.getByRole('listitem').first().textContent()).toContain(
      `validate at src/checkout.ts:${THROW_LINE}:`,
    );
    const source = page.getByRole('table', { name: `Source of src/checkout.ts around line ${THROW_LINE}` });
    await source.waitFor();
    expect(await source.locator('tr[aria-current="true"] td').textContent()).toContain(
      "throw new TypeError('cart has no items');",
    );
    await expectAccessible(page, { exclude: '.player-screen' });
    await screenshot(page, 'session-stack');
    expect(errors).toEqual([]);
    await context.close();
  });
});
