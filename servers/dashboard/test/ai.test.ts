import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reproduction, Transcript } from '../src/ai/types.ts';
import { type AnalysisSessions, apiJson, ingestAnalysisSessions } from './ai-fixtures.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';

// Issue 24's pages without a model (the default of a self-hosted install): the session page's
// explanation, transcript and reproduction, the issue page's explanation and draft, search, and
// the organization's AI settings, on sessions ingested and processed by the real server. Every
// answer says, in small text, that no model took part.

let dashboard: Dashboard;
let sessions: AnalysisSessions;
let scope: string;
let typeErrorIssue: { id: string; title: string };

beforeAll(async () => {
  dashboard = await startDashboard();
  const open = dashboard.open;
  dashboard.open = async (path, options) => {
    const opened = await open(path, options);
    opened.page.setDefaultTimeout(10_000);
    return opened;
  };
  sessions = await ingestAnalysisSessions(dashboard);
  const { project } = dashboard.test.first;
  scope = `org=${project.organization_id}&project=${project.id}`;
  const issues = await apiJson<{ items: { id: string; title: string }[] }>(
    dashboard,
    '/v1/issues?kind=error',
  );
  const found = issues.items.find((issue) => issue.title.startsWith('TypeError'));
  if (found === undefined) throw new Error('no TypeError issue');
  typeErrorIssue = found;
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

const NO_MODEL = /^No model is configured/;

/** The player's current time, in ms from the session's start. */
async function currentOffset(page: Page): Promise<number> {
  return Number(await page.getByLabel('Current time').getAttribute('data-offset-ms'));
}

/** axe-core on a page with the player, the replayed recording (the customer's page) left out. */
function expectPlayerAccessible(page: Page): Promise<void> {
  return expectAccessible(page, { exclude: '.player-screen' });
}

describe('the session page', () => {
  it('explains the session, lists its transcript and writes its reproduction', async () => {
    const { page, context, errors } = await dashboard.open(`/sessions/${sessions.sessionId}?${scope}`, {
      as: dashboard.people.member,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.base });
    const analysis = page.getByRole('region', { name: 'Analysis' });
    await analysis.getByRole('button', { name: 'Explain this session' }).click();

    // The summary, the problems most severe first, each with its evidence and causes.
    await analysis.getByText(/^A 9\.1 s session in Chrome on macOS/).waitFor();
    const problems = analysis.getByRole('list', { name: 'Problems' }).locator(':scope > li');
    await expect.poll(() => problems.count()).toBe(3);
    expect(await problems.locator('h4').allTextContents()).toEqual([
      "TypeError: Cannot read properties of undefined (reading 'srcObject')",
      'Error: Reconnect failed',
      'POST https://app.example.com/api/calls/42/join failed with HTTP 503',
    ]);
    const typeError = problems.first();
    expect(await typeError.locator('.ai-severity').textContent()).toBe('High');
    expect(await typeError.locator('.ai-evidence').textContent()).toContain('classnull_access');
    // The surest cause is open; the next one opens on a click.
    const causes = typeError.getByRole('list', { name: /^Likely causes of TypeError/ });
    await causes
      .getByText('The request to https://app.example.com/api/calls/42/join failed (HTTP 503)')
      .waitFor();
    const guard = causes.getByText('Guard the access (optional chaining)');
    expect(await guard.isVisible()).toBe(false);
    await causes.getByText('Code read a property of data that was not there').click();
    await guard.waitFor();
    // No model: said once, in small text.
    const notes = analysis.locator('.ai-reason');
    expect(await notes.count()).toBe(1);
    expect(await notes.textContent()).toMatch(NO_MODEL);
    expect(await analysis.getByRole('region', { name: /^The model's/ }).count()).toBe(0);
    await expectPlayerAccessible(page);

    // A problem's time seeks the replay there, as the network panel's rows do; so does the
    // summary's citation of its most severe problem ([0.14]).
    await typeError.getByRole('button', { name: /^Play from 0:04: TypeError/ }).click();
    await expect.poll(() => currentOffset(page)).toBe(4200);
    await problems
      .nth(2)
      .getByRole('button', { name: /^Play from 0:04: POST/ })
      .click();
    await expect.poll(() => currentOffset(page)).toBe(4000);
    await analysis
      .locator('.ai-summary')
      .getByRole('button', { name: 'Play from 0:04, evidence 0.14' })
      .click();
    await expect.poll(() => currentOffset(page)).toBe(4200);

    // The transcript: every entry of the API's, each seeking the replay.
    const transcript = await apiJson<Transcript>(dashboard, `/v1/sessions/${sessions.sessionId}/transcript`);
    await analysis.getByRole('tab', { name: 'Transcript' }).click();
    const entries = analysis.getByRole('list', { name: 'Transcript' }).locator(':scope > li');
    await expect.poll(() => entries.count()).toBe(transcript.entries.length);
    const request = entries.filter({
      hasText: 'Request POST /api/calls/42/join failed: HTTP 503 after 120 ms',
    });
    expect(await request.getAttribute('data-offset')).toBe('4000');
    await entries.filter({ hasText: 'Clicked button "Leave"' }).getByRole('button').click();
    await expect.poll(() => currentOffset(page)).toBe(9050);
    await expectPlayerAccessible(page);

    // The tabs by keyboard: → from Transcript opens Reproduce.
    await analysis.getByRole('tab', { name: 'Transcript' }).focus();
    await page.keyboard.press('ArrowRight');
    const reproduce = analysis.getByRole('tab', { name: 'Reproduce' });
    expect(await reproduce.getAttribute('aria-selected')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Reproduce');
    const reproduction = await apiJson<Reproduction>(
      dashboard,
      `/v1/sessions/${sessions.sessionId}/repro`,
      'POST',
    );
    const script = analysis.locator('.code-block code');
    await script.waitFor();
    expect(await script.textContent()).toBe(reproduction.script);
    expect(reproduction.script).toContain(`test("reproduces session ${sessions.sessionId}"`);
    expect(await analysis.getByRole('list', { name: 'Steps to reproduce' }).textContent()).toContain(
      'Click button "Leave" (#leave)',
    );
    await analysis.getByRole('button', { name: 'Copy the script' }).click();
    await analysis.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(reproduction.script);
    await expectPlayerAccessible(page);

    // Back to Explain: kept, not asked again.
    await analysis.getByRole('tab', { name: 'Explain' }).click();
    expect(await problems.count()).toBe(3);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the issue page', () => {
  it('explains where the issue concentrates and why, and says why no fix is drafted', async () => {
    const { page, context, errors } = await dashboard.open(`/issues/${typeErrorIssue.id}?${scope}`, {
      as: dashboard.people.member,
    });
    const panel = page.getByRole('region', { name: 'Explanation', exact: true });
    await panel.getByRole('button', { name: 'Explain this issue' }).click();
    // All three occurrences are in web@2.0.0, which has 40% of the sessions of those minutes.
    const concentration = panel.getByRole('table', { name: 'Where the issue concentrates' });
    const row = concentration.getByRole('row', { name: /Release web@2\.0\.0/ });
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).map((cell) => cell.trim())).toEqual([
      'web@2.0.0',
      '3',
      '100%',
      '40%',
      '2.5×',
    ]);
    expect(await panel.locator('.ai-summary').textContent()).toContain('3 occurrences in 3 sessions');
    // Read on the latest occurrence: its error's class.
    await panel
      .getByRole('list', { name: 'Likely causes of the issue' })
      .getByText('Guard the access (optional chaining)')
      .waitFor();
    expect(await panel.locator('.ai-evidence').textContent()).toContain('classnull_access');
    const examples = panel.getByRole('list', { name: 'Example sessions' }).getByRole('link');
    expect(await examples.count()).toBe(3);
    expect(await examples.first().getAttribute('href')).toBe(`/sessions/${sessions.sessionId}?${scope}`);
    expect(await panel.locator('.ai-reason').textContent()).toMatch(NO_MODEL);
    await expectAccessible(page);

    // No source map was uploaded: the draft names the error and says why there is no patch.
    const draft = page.getByRole('region', { name: 'Draft a fix' });
    await draft.getByRole('button', { name: 'Draft a fix' }).click();
    await draft.getByText(/^No frame of the latest error was mapped to its source/).waitFor();
    expect(await draft.textContent()).toContain(
      `TypeError: Cannot read properties of undefined (reading 'srcObject') in session ${sessions.sessionId}`,
    );
    expect(await draft.locator('.code-block').count()).toBe(0);
    await expectAccessible(page);

    // The example session opens its page.
    await examples.first().click();
    await page.waitForURL(`/sessions/${sessions.sessionId}?${scope}`);
    await page.getByRole('region', { name: 'Analysis' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('search', () => {
  it('finds the session by a word of its error from the header, pages with Load more, and opens it', async () => {
    const { page, context, errors } = await dashboard.open(`/sessions?${scope}`, {
      as: dashboard.people.member,
    });
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    const box = page.getByRole('searchbox', { name: 'Search sessions, calls and issues' });
    await box.fill('srcObject');
    await box.press('Enter');
    await page.waitForURL(`/search?q=srcObject&${scope}`);
    const results = page.getByRole('list', { name: 'Results' }).locator(':scope > li');
    // The TypeError issue and the three sessions that threw it; the issue's title ranks first.
    await expect.poll(() => results.count()).toBe(4);
    expect(await results.first().locator('.search-type').textContent()).toBe('Issue');
    expect(await page.getByRole('status').filter({ hasText: 'results' }).textContent()).toBe('4 results.');
    const result = page.getByRole('link', { name: sessions.url, exact: true });
    expect(await result.getAttribute('href')).toBe(`/sessions/${sessions.sessionId}?t=4200&${scope}`);
    const item = page.locator(`li[data-result-id="${sessions.sessionId}"]`);
    expect(await item.locator('.search-snippet').textContent()).toBe(
      "TypeError: Cannot read properties of undefined (reading 'srcObject')",
    );
    expect(await item.locator('.search-facts').textContent()).toContain('2 errors');
    await expectAccessible(page);
    await screenshot(page, 'search');

    // Two a page: "Load more results" follows nextCursor until the last page.
    await page.goto(`/search?q=srcObject&limit=2&${scope}`);
    await expect.poll(() => results.count()).toBe(2);
    await page.getByRole('button', { name: 'Load more results' }).click();
    await expect.poll(() => results.count()).toBe(4);
    expect(await page.getByRole('button', { name: 'Load more results' }).count()).toBe(0);

    // Asked in words without a model: its words are searched, and the page says why; the next
    // page is the query that ran.
    await page.getByLabel(/^Ask in words/).check();
    await page.getByRole('combobox', { name: 'Show' }).selectOption('session');
    await page.getByRole('button', { name: 'Search', exact: true }).last().click();
    await page.waitForURL(/[?&]ask=1/);
    await page
      .locator('.search-interpreted')
      .getByText(/No model is configured/)
      .waitFor();
    expect(await page.locator('.search-interpreted strong').textContent()).toBe('“srcObject” · sessions');
    await expect.poll(() => results.count()).toBe(2);
    await page.getByRole('button', { name: 'Load more results' }).click();
    await expect.poll(() => results.count()).toBe(3);
    await expectAccessible(page);

    await page.getByRole('link', { name: sessions.url, exact: true }).click();
    await page.waitForURL(`/sessions/${sessions.sessionId}?t=4200&${scope}`);
    await expect.poll(() => currentOffset(page)).toBe(4200);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('organization settings: AI', () => {
  it('an admin turns AI on and sets a cap; members and viewers read them', async () => {
    const organizationId = dashboard.test.first.project.organization_id;
    const { page, context, errors } = await dashboard.open(`/settings/ai?${scope}`, {
      as: dashboard.people.admin,
    });
    await page.getByTestId('ai-model').getByText('No model is configured').waitFor();
    const enabled = page.getByLabel("Let the model answer for this organization's projects");
    expect(await enabled.isChecked()).toBe(false);
    expect(await page.getByTestId('ai-usage').textContent()).toContain('0 tokens');
    expect(await page.getByTestId('mcp-url').textContent()).toBe(`${dashboard.base}/mcp`);
    expect(await page.getByRole('link', { name: 'API tokens' }).last().getAttribute('href')).toBe(
      `/settings/tokens?${scope}`,
    );
    await expectAccessible(page);

    await enabled.check();
    await page.getByLabel('Monthly token cap').fill('50000');
    await page.getByLabel('Chat', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save AI settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: AI is on' }).waitFor();
    const stored = await (await context.request.get(`/v1/orgs/${organizationId}/ai/settings`)).json();
    expect(stored).toMatchObject({
      enabled: true,
      monthlyTokenCap: 50000,
      features: ['summary', 'explain', 'search', 'draft_pr'],
    });
    await page.reload();
    await expect.poll(() => page.getByTestId('ai-usage').textContent()).toContain('of a cap of 50,000');
    expect(await page.getByLabel('Monthly token cap').inputValue()).toBe('50000');
    expect(errors).toEqual([]);
    await context.close();

    for (const person of [dashboard.people.member, dashboard.people.viewer]) {
      const reader = await dashboard.open(`/settings/ai?${scope}`, { as: person });
      const checkbox = reader.page.getByLabel("Let the model answer for this organization's projects");
      await checkbox.waitFor();
      expect(await checkbox.isChecked()).toBe(true);
      expect(await checkbox.isDisabled()).toBe(true);
      expect(await reader.page.getByLabel('Monthly token cap').inputValue()).toBe('50000');
      expect(await reader.page.getByLabel('Chat', { exact: true }).isChecked()).toBe(false);
      await reader.page.getByRole('note').filter({ hasText: person.role }).waitFor();
      expect(await reader.page.getByRole('button', { name: 'Save AI settings' }).count()).toBe(0);
      await expectAccessible(reader.page);
      expect(reader.errors).toEqual([]);
      await reader.context.close();
    }
  });
});
