import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, postChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { type Dashboard, expectAccessible, startDashboard } from './harness.ts';

// The session list: every filter of GET /v1/sessions in the form and in the URL (a reload or a
// copied link shows the same list), pages, and the link to each session.

let dashboard: Dashboard;
const ids = { chromeWithErrors: newSessionId(), firefoxMobile: newSessionId(), staging: newSessionId() };

/** The fixture chunk for `sessionId`, with `meta` changed and, if asked, its error events left out. */
async function chunk(
  sessionId: string,
  meta: Record<string, unknown>,
  withoutErrors = false,
): Promise<Buffer> {
  const fixture = JSON.parse((await validChunkFixture('recording-seq-0')).toString('utf8')) as {
    meta: Record<string, unknown>;
    events: Array<{ type: string }>;
  };
  return Buffer.from(
    JSON.stringify({
      ...fixture,
      sessionId,
      meta: { ...fixture.meta, ...meta },
      events: withoutErrors ? fixture.events.filter((event) => event.type !== 'error') : fixture.events,
    }),
  );
}

beforeAll(async () => {
  dashboard = await startDashboard();
  const { app, first } = dashboard.test;
  const bodies = [
    await chunk(ids.chromeWithErrors, {}),
    await chunk(
      ids.firefoxMobile,
      { browser: { name: 'Firefox', version: '133.0' }, device: 'mobile', release: 'web@2.0.0' },
      true,
    ),
    await chunk(ids.staging, { environment: 'staging', url: 'https://app.example.com/settings' }, true),
  ];
  for (const body of bodies) expect((await postChunk(app, first.projectKey, body)).statusCode).toBe(200);
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

describe('the session list', () => {
  it('filters by every field it offers, keeps the filters in the URL, and links each session', async () => {
    const { page, errors, context } = await dashboard.open('/sessions', { as: dashboard.people.viewer });
    const rows = page.locator('tr[data-session-id]');
    const shown = async () =>
      (await rows.evaluateAll((all) => all.map((row) => row.dataset.sessionId))).sort();
    await expect.poll(shown).toEqual(Object.values(ids).sort());
    await expectAccessible(page);

    await page.getByLabel('Errors').selectOption('true');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(shown).toEqual([ids.chromeWithErrors]);
    expect(new URL(page.url()).searchParams.get('hasErrors')).toBe('true');

    // A reload (or the link sent to a teammate) shows the same list with the form filled in.
    await page.reload();
    await expect.poll(shown).toEqual([ids.chromeWithErrors]);
    expect(await page.getByLabel('Errors').inputValue()).toBe('true');

    await page.getByRole('link', { name: 'Clear filters' }).click();
    await expect.poll(shown).toEqual(Object.values(ids).sort());

    await page.getByLabel('Browser').fill('firefox');
    await page.getByLabel('Device').selectOption('mobile');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(shown).toEqual([ids.firefoxMobile]);
    const url = new URL(page.url());
    expect([url.searchParams.get('browser'), url.searchParams.get('device')]).toEqual(['firefox', 'mobile']);

    await page.goto('/sessions?environment=staging');
    await expect.poll(shown).toEqual([ids.staging]);
    await page.goto('/sessions?release=web%402.0.0');
    await expect.poll(shown).toEqual([ids.firefoxMobile]);
    await page.goto('/sessions?urlContains=settings');
    await expect.poll(shown).toEqual([ids.staging]);
    await page.goto('/sessions?environment=nowhere');
    await page.getByText('No session matches these filters.').waitFor();

    // Each row links to its session page, keeping the organization and project.
    await page.goto(`/sessions?project=${dashboard.test.first.project.id}`);
    const link = page.locator(`tr[data-session-id="${ids.staging}"] a`);
    const href = new URL((await link.getAttribute('href')) ?? '', dashboard.base);
    expect(href.pathname).toBe(`/sessions/${ids.staging}`);
    expect(href.searchParams.get('project')).toBe(dashboard.test.first.project.id);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('pages through the list with the API’s cursor', async () => {
    const { page, errors, context } = await dashboard.open('/sessions', { as: dashboard.people.viewer });
    const rows = page.locator('tr[data-session-id]');
    await expect.poll(() => rows.count()).toBe(3);
    // The list's own pages hold 50; a cursor of a 2-row page shows what follows those 2.
    const first = (await (
      await context.request.get('/v1/sessions?limit=2', {
        headers: { 'x-service-project': dashboard.test.first.project.id },
      })
    ).json()) as { items: Array<{ id: string }>; nextCursor: string };
    await page.goto(`/sessions?cursor=${encodeURIComponent(first.nextCursor)}`);
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole('button', { name: 'First page' }).click();
    await expect.poll(() => rows.count()).toBe(3);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('tells a new project how to install the SDK, with its key', async () => {
    const other = await dashboard.test.createProject('Empty project');
    await dashboard.test.database.database
      .insertInto('organization_members')
      .values({
        organization_id: other.project.organization_id,
        user_id: dashboard.people.viewer.id,
        role: 'viewer',
      })
      .execute();
    const { page, errors, context } = await dashboard.open(
      `/sessions?org=${other.project.organization_id}&project=${other.project.id}`,
      { as: dashboard.people.viewer },
    );
    await page.getByText('No sessions yet').waitFor();
    expect(await page.locator('pre code').textContent()).toContain(`projectKey: '${other.projectKey}'`);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });
});
