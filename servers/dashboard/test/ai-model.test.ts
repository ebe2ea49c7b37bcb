import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCheckout, stackOf, THROW_LINE } from '../../api/src/modules/sourcemaps/sourcemaps.fixture.ts';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../api/test/openai-stand-in.ts';
import { type AnalysisSessions, apiJson, ingestAnalysisSessions } from './ai-fixtures.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';
import { ingestSynthetic, type Json, withOneError } from './recorded-page.ts';

// Issue 24's pages with a model: the server configured with the OpenAI stand-in (a real HTTP
// server speaking OpenAI's Chat Completions format, servers/api/test/openai-stand-in.ts; a hosted
// model cannot run here). An admin turns AI on in the app; then the model's prose appears, marked
// with its model's name, its citations of evidence seek the replay (or open it), a thumbs-up is
// stored, a question in words becomes the model's structured search, and the tokens are counted.

const MODEL = 'stand-in-model';

/** What the stand-in writes: two citations the transcript has (the failed join, the TypeError) and one it has not. */
const PROSE =
  'The join request failed with HTTP 503 [0.13], then the call page read srcObject of the stream it never got [0.14]. Nothing else went wrong [9.99].\n\nHandle the failed join before attaching the remote track.';

/** What the stand-in answers a request for a fix: a unified diff in a fenced block, then why. */
const DIFF = `--- a/src/checkout.ts
+++ b/src/checkout.ts
@@ -5,4 +5,4 @@
 function validate(cart: Cart): number {
-  if (cart.items === undefined) {
-    throw new TypeError('cart has no items');
-  }
+  if (cart.items === undefined) return 0;
   return cart.items.length;
`;
const FIX = `\`\`\`diff\n${DIFF}\`\`\`\n\nAn empty cart counts 0 items instead of throwing.`;

let standIn: OpenAiStandIn;
let dashboard: Dashboard;
let sessions: AnalysisSessions;
let scope: string;

beforeAll(async () => {
  standIn = await startOpenAiStandIn();
  standIn.answer((request) => {
    if (Array.isArray(request.body?.tools) && request.body.tools.length > 0)
      return {
        toolCalls: [{ name: 'search', arguments: { q: 'srcObject', types: ['session'] } }],
        usage: { prompt: 300, completion: 20 },
      };
    if (request.raw.includes('unified diff')) return { text: FIX, usage: { prompt: 900, completion: 120 } };
    return { text: PROSE, usage: { prompt: 1200, completion: 80 } };
  });
  dashboard = await startDashboard({
    environment: { SVC_AI_BASE_URL: standIn.baseUrl, SVC_AI_MODEL: MODEL },
  });
  const open = dashboard.open;
  dashboard.open = async (path, options) => {
    const opened = await open(path, options);
    opened.page.setDefaultTimeout(10_000);
    return opened;
  };
  sessions = await ingestAnalysisSessions(dashboard);
  const { project } = dashboard.test.first;
  scope = `org=${project.organization_id}&project=${project.id}`;
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
  await standIn?.close();
});

async function currentOffset(page: Page): Promise<number> {
  return Number(await page.getByLabel('Current time').getAttribute('data-offset-ms'));
}

describe('with a model', () => {
  it('an admin turns AI on; the session’s explanation has the model’s prose, its citations seek, and a thumbs-up is stored', async () => {
    const admin = await dashboard.open(`/settings/ai?${scope}`, { as: dashboard.people.admin });
    expect(await admin.page.getByTestId('ai-model').textContent()).toContain(
      `${MODEL}, configured by the server's operator. It does not answer for this organization until AI is turned on below.`,
    );
    await admin.page.getByLabel("Let the model answer for this organization's projects").check();
    await admin.page.getByLabel('Monthly token cap').fill('100000');
    await admin.page.getByRole('button', { name: 'Save AI settings' }).click();
    await admin.page.getByRole('status').filter({ hasText: 'Saved: AI is on' }).waitFor();
    expect(admin.errors).toEqual([]);
    await admin.context.close();

    const { page, context, errors } = await dashboard.open(`/sessions/${sessions.sessionId}?${scope}`, {
      as: dashboard.people.member,
    });
    const analysis = page.getByRole('region', { name: 'Analysis' });
    await analysis.getByRole('button', { name: 'Explain this session' }).click();
    const summary = analysis.getByRole('region', { name: "The model's summary" });
    await summary.getByText(`Written by the model ${MODEL}`).waitFor();
    expect(await summary.locator('.ai-prose').textContent()).toBe(PROSE.replace('\n\n', ''));
    await analysis.getByRole('region', { name: "The model's explanation" }).waitFor();
    // The problems are there as without a model.
    await expect
      .poll(() => analysis.getByRole('list', { name: 'Problems' }).locator(':scope > li').count())
      .toBe(3);
    expect(await analysis.locator('.ai-reason').count()).toBe(0);
    // The ids the transcript has are buttons that seek; a made-up one stays text.
    const cited = summary.getByRole('button', { name: /, evidence / });
    await expect.poll(() => cited.allTextContents()).toEqual(['0.13', '0.14']);
    await summary.getByRole('button', { name: 'Play from 0:04, evidence 0.14' }).click();
    await expect.poll(() => currentOffset(page)).toBe(4200);
    await summary.getByRole('button', { name: 'Play from 0:04, evidence 0.13' }).click();
    await expect.poll(() => currentOffset(page)).toBe(4000);
    await expectAccessible(page, { exclude: '.player-screen' });
    await analysis.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'session-explain');

    await summary.getByRole('button', { name: 'Useful', exact: true }).click();
    await summary.getByRole('status').filter({ hasText: 'Thanks: your rating was saved.' }).waitFor();
    expect(
      await summary.getByRole('button', { name: 'Useful', exact: true }).getAttribute('aria-pressed'),
    ).toBe('true');
    const feedback = await dashboard.test.database.database
      .selectFrom('ai_feedback')
      .select(['feature', 'subject_id', 'rating', 'model', 'created_by'])
      .execute();
    expect(feedback).toEqual([
      {
        feature: 'summary',
        subject_id: sessions.sessionId,
        rating: 'up',
        model: MODEL,
        created_by: `user:${dashboard.people.member.id}`,
      },
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('the issue’s explanation has the model’s prose, its citations open the latest replay there; a viewer cannot rate it', async () => {
    const issues = await apiJson<{ items: { id: string; title: string }[] }>(
      dashboard,
      '/v1/issues?kind=error',
    );
    const issue = issues.items.find((item) => item.title.startsWith('TypeError'));
    if (issue === undefined) throw new Error('no TypeError issue');
    const { page, context, errors } = await dashboard.open(`/issues/${issue.id}?${scope}`, {
      as: dashboard.people.viewer,
    });
    const panel = page.getByRole('region', { name: 'Explanation', exact: true });
    await panel.getByRole('button', { name: 'Explain this issue' }).click();
    const note = panel.getByRole('region', { name: "The model's explanation" });
    await note.getByText(`Written by the model ${MODEL}`).waitFor();
    const link = note.getByRole('link', { name: 'Replay from 0:04, evidence 0.14' });
    await expect
      .poll(() => link.getAttribute('href'))
      .toBe(`/sessions/${sessions.sessionId}?t=4200&${scope}`);
    // Rating takes ai:write, which viewers lack.
    expect(await note.getByRole('button', { name: 'Useful', exact: true }).count()).toBe(0);
    await expectAccessible(page);
    await panel.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'issue-explain');
    await link.click();
    await page.waitForURL(`/sessions/${sessions.sessionId}?t=4200&${scope}`);
    await expect.poll(() => currentOffset(page)).toBe(4200);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a question in words becomes the model’s search, and the settings count the tokens', async () => {
    const { page, context, errors } = await dashboard.open(
      `/search?q=${encodeURIComponent('sessions that hit srcObject')}&ask=1&${scope}`,
      { as: dashboard.people.member },
    );
    await page.getByText(`The model ${MODEL} turned your question into this search.`).waitFor();
    expect(await page.locator('.search-interpreted strong').textContent()).toBe('“srcObject” · sessions');
    const results = page.getByRole('list', { name: 'Results' }).locator(':scope > li');
    await expect.poll(() => results.count()).toBe(3);
    expect(await results.locator('.search-type').allTextContents()).toEqual([
      'Session',
      'Session',
      'Session',
    ]);
    await expectAccessible(page);

    // Summary, session explanation, issue explanation (1,280 tokens each) and the search (320).
    await page.goto(`/settings/ai?${scope}`);
    await expect
      .poll(() => page.getByTestId('ai-usage').textContent())
      .toContain('4,160 tokens in 4 requests');
    expect(await page.getByTestId('ai-usage').textContent()).toContain('of a cap of 100,000: 95,840 left');
    const features = page.getByRole('table', { name: 'Use of the model this month by feature' });
    expect(await features.locator('tbody th').allTextContents()).toEqual([
      'Explanations of sessions, calls and issues',
      'Questions in words, in search',
      'Session summaries',
    ]);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('drafts a fix of an error mapped by an uploaded source map: where it goes and the model’s diff, never applied', async () => {
    // A minified esbuild bundle and its map, uploaded; its error's stack (V8's) in a session.
    const bundle = await buildCheckout({ name: 'main.js' });
    const form = new FormData();
    form.append('release', 'shop@1.4.0');
    form.append('urlPrefix', '~/static/js/');
    form.append('file', new Blob([bundle.code]), 'main.js');
    form.append('file', new Blob([bundle.map]), 'main.js.map');
    const uploaded = await fetch(`${dashboard.base}/v1/sourcemaps`, {
      method: 'POST',
      headers: dashboard.test.first.headers,
      body: form,
    });
    expect(uploaded.status, await uploaded.text()).toBe(201);
    const require = createRequire(import.meta.url);
    const fixture = JSON.parse(
      await readFile(require.resolve('@svc/protocol/fixtures/valid/Chunk/recording-seq-0.json'), 'utf8'),
    ) as Json;
    const stack = stackOf(bundle, 'https://shop.example.com/static/js/main.js');
    const events = withOneError(fixture.events, stack);
    await ingestSynthetic(
      dashboard,
      { ...fixture, meta: { ...fixture.meta, release: 'shop@1.4.0' } },
      events,
    );
    await dashboard.test.processingWorker.runUntilIdle();
    const issues = await apiJson<{ items: { id: string; title: string }[] }>(
      dashboard,
      '/v1/issues?kind=error',
    );
    const issue = issues.items.find((item) => item.title === 'TypeError: cart has no items');
    if (issue === undefined) throw new Error('no issue for the bundle’s error');

    const { page, context, errors } = await dashboard.open(`/issues/${issue.id}?${scope}`, {
      as: dashboard.people.member,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.base });
    const draft = page.getByRole('region', { name: 'Draft a fix' });
    await draft.getByRole('button', { name: 'Draft a fix' }).click();
    await draft.getByText(`src/checkout.ts:${THROW_LINE}`).waitFor();
    const source = draft.getByRole('table', { name: `Source of src/checkout.ts around line ${THROW_LINE}` });
    expect(await source.locator('tr[aria-current="true"] td').textContent()).toBe(
      "    throw new TypeError('cart has no items');",
    );
    const code = draft.locator('.code-block code');
    expect(await code.textContent()).toBe(DIFF);
    expect(await code.locator('.diff-added').allTextContents()).toEqual([
      '+  if (cart.items === undefined) return 0;\n',
    ]);
    expect(await code.locator('.diff-removed').count()).toBe(3);
    // The model's words, without the diff it already shows; rated like any model's answer.
    const note = draft.getByRole('region', { name: "The model's note on the fix" });
    expect(await note.locator('.ai-prose').textContent()).toBe(
      'An empty cart counts 0 items instead of throwing.',
    );
    await draft.getByRole('button', { name: 'Copy the diff' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(DIFF);
    await note.getByRole('button', { name: 'Not useful' }).click();
    await note.getByRole('status').filter({ hasText: 'Thanks' }).waitFor();
    const rating = await dashboard.test.database.database
      .selectFrom('ai_feedback')
      .select(['feature', 'subject_id', 'rating'])
      .where('feature', '=', 'draft_pr')
      .executeTakeFirst();
    expect(rating).toEqual({ feature: 'draft_pr', subject_id: issue.id, rating: 'down' });
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });
});
