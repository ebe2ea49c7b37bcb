import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';
import { apiGet, ingestErrorSession } from './issue-fixtures.ts';

// The issues pages on real data: a session with a browser error goes through the real ingest and
// the processing job, which clusters it; a member resolves the issue in the app, and a viewer
// can neither in the app nor through the API.

interface IssueView {
  id: string;
  title: string;
  kind: string;
  status: string;
  releases: string[];
}

let dashboard: Dashboard;
let sessionId: string;
let issue: IssueView;

beforeAll(async () => {
  dashboard = await startDashboard();
  sessionId = await ingestErrorSession(dashboard.test, { release: 'web@2025.11.3' });
  const issues = await apiGet<{ items: IssueView[] }>(dashboard.test, '/v1/issues?kind=error');
  // The fixture's page throws a TypeError and an unhandled Error: two issues.
  expect(issues.items).toHaveLength(2);
  const typeError = issues.items.find((item) => item.title.startsWith('TypeError'));
  if (typeError === undefined) throw new Error('no TypeError issue');
  issue = typeError;
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

/** A state-changing request from the browser context's session (cookie, CSRF token, project). */
async function patchFromBrowser(context: BrowserContext, path: string, data: unknown) {
  const me = await context.request.get('/v1/me');
  const { csrfToken } = (await me.json()) as { csrfToken: string };
  return context.request.patch(path, {
    data,
    headers: {
      'x-service-csrf': csrfToken,
      'x-service-project': dashboard.test.first.project.id,
    },
  });
}

describe('issues', () => {
  it('a member finds the issue, sees its affected session and release, and resolves it', {
    timeout: 60_000,
  }, async () => {
    const { project } = dashboard.test.first;
    const scope = `org=${project.organization_id}&project=${project.id}`;
    const { page, errors } = await dashboard.open(`/issues?${scope}`, { as: dashboard.people.member });
    page.setDefaultTimeout(10_000);
    await page.getByRole('heading', { name: 'Issues', level: 1 }).waitFor();
    const row = page.locator(`tr[data-issue-id="${issue.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('Browser error');
    expect(await page.getByRole('combobox', { name: 'Status' }).inputValue()).toBe('open');
    await expectAccessible(page);

    // The filters live in the URL: resolved issues are none yet; back to open ones.
    await page.getByRole('combobox', { name: 'Status' }).selectOption('resolved');
    await page.waitForURL(/[?&]status=resolved/);
    await page.getByText('No issues match these filters.').waitFor();
    await page.getByRole('combobox', { name: 'Kind' }).selectOption('error');
    await page.waitForURL(/[?&]kind=error/);
    await page.getByRole('combobox', { name: 'Status' }).selectOption('open');
    await row.waitFor();

    await page.getByRole('link', { name: issue.title }).click();
    await page.waitForURL(`/issues/${issue.id}?${scope}`);
    await page.getByRole('heading', { name: issue.title, level: 1 }).waitFor();
    const status = page.getByRole('status').first();
    expect(await status.textContent()).toContain('Open');
    // The affected session, linking to its page (with the organization and project kept).
    const sessionLink = page.getByRole('link', { name: sessionId, exact: true });
    await sessionLink.waitFor();
    expect(await sessionLink.getAttribute('href')).toBe(`/sessions/${sessionId}?${scope}`);
    const sessionRow = page.locator(`tr[data-session-id="${sessionId}"]`);
    expect(await sessionRow.textContent()).toContain('web@2025.11.3');
    expect(await page.getByRole('list', { name: 'Releases' }).textContent()).toContain('web@2025.11.3');
    await expectAccessible(page);
    await screenshot(page, 'issue');

    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.getByRole('button', { name: 'Reopen' }).waitFor();
    expect(await status.textContent()).toMatch(/^Resolved since .*, in release web@2025\.11\.3/);
    const resolved = await apiGet<IssueView & { resolvedRelease: string }>(
      dashboard.test,
      `/v1/issues/${issue.id}`,
    );
    expect(resolved).toMatchObject({ status: 'resolved', resolvedRelease: 'web@2025.11.3' });

    // The list shows it among resolved issues, no longer among open ones.
    await page.getByRole('link', { name: '← All issues' }).click();
    await page.getByRole('heading', { name: 'Issues', level: 1 }).waitFor();
    // The fixture's other error is still open; this one is not among open issues any more.
    await page.locator('tr[data-issue-id]').first().waitFor();
    await expect.poll(() => row.count()).toBe(0);
    await page.getByRole('combobox', { name: 'Status' }).selectOption('resolved');
    await row.waitFor();
    expect(await row.textContent()).toContain('resolved');

    // Reopen, then ignore: each one request, and what the API says after it.
    await page.getByRole('link', { name: issue.title }).click();
    await page.getByRole('button', { name: 'Reopen' }).click();
    await page.getByRole('button', { name: 'Ignore' }).click();
    await page.getByRole('button', { name: 'Reopen' }).waitFor();
    expect(await status.textContent()).toContain('Ignored');
    expect((await apiGet<IssueView>(dashboard.test, `/v1/issues/${issue.id}`)).status).toBe('ignored');
    await page.getByRole('button', { name: 'Reopen' }).click();
    await page.getByRole('button', { name: 'Resolve' }).waitFor();
    expect((await apiGet<IssueView>(dashboard.test, `/v1/issues/${issue.id}`)).status).toBe('open');

    // Several at once: both of the fixture's errors ignored, then reopened.
    await page.getByRole('link', { name: '← All issues' }).click();
    await row.waitFor();
    await page.getByRole('checkbox', { name: 'Select every issue of this page' }).check();
    expect(await page.getByText('2 selected').count()).toBe(1);
    await page.getByRole('button', { name: 'Ignore selected' }).click();
    await page.getByText('2 issues ignored.').waitFor();
    await page.getByText('No issues match these filters.').waitFor();
    const statuses = async () =>
      (await apiGet<{ items: IssueView[] }>(dashboard.test, '/v1/issues')).items.map((item) => item.status);
    expect(await statuses()).toEqual(['ignored', 'ignored']);
    await page.getByRole('combobox', { name: 'Status' }).selectOption('ignored');
    await page.getByRole('checkbox', { name: `Select “${issue.title}”` }).check();
    await page.getByRole('checkbox', { name: /^Select “Error: / }).check();
    await page.getByRole('button', { name: 'Reopen selected' }).click();
    await page.getByText('2 issues reopened.').waitFor();
    expect(await statuses()).toEqual(['open', 'open']);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a viewer reads the issue without the buttons, and the API refuses their change', {
    timeout: 60_000,
  }, async () => {
    const { page, context, errors } = await dashboard.open(`/issues/${issue.id}`, {
      as: dashboard.people.viewer,
    });
    await page.getByRole('heading', { name: issue.title, level: 1 }).waitFor();
    await page.getByRole('link', { name: sessionId, exact: true }).waitFor();
    await page.getByText('Viewers can read issues').waitFor();
    for (const name of ['Resolve', 'Ignore', 'Reopen'])
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await expectAccessible(page);
    // The list has no selection and no bulk actions for them either.
    await page.getByRole('link', { name: '← All issues' }).click();
    await page.locator(`tr[data-issue-id="${issue.id}"]`).waitFor();
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(await page.getByRole('toolbar').count()).toBe(0);

    const refused = await patchFromBrowser(context, `/v1/issues/${issue.id}`, { status: 'resolved' });
    expect(refused.status()).toBe(403);
    expect((await apiGet<IssueView>(dashboard.test, `/v1/issues/${issue.id}`)).status).toBe('open');
    // The same request from a member's browser is accepted (the refusal is the role's).
    const member = await dashboard.open('/issues', { as: dashboard.people.member });
    const accepted = await patchFromBrowser(member.context, `/v1/issues/${issue.id}`, { status: 'ignored' });
    expect(accepted.status()).toBe(200);
    expect((await apiGet<IssueView>(dashboard.test, `/v1/issues/${issue.id}`)).status).toBe('ignored');
    await member.context.close();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('an unknown issue says so', async () => {
    const { page, errors, context } = await dashboard.open('/issues/cl_01JD2S5V8Q8C4Y3K2W9T7N6M5H', {
      as: dashboard.people.member,
      allow: ['404 /v1/issues/cl_01JD2S5V8Q8C4Y3K2W9T7N6M5H'],
    });
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('No issue');
    expect(errors).toEqual([]);
    await context.close();
  });
});
