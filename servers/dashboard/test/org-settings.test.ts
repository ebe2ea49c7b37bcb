import { readFile } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DsarIndex } from '../../api/src/modules/privacy/dsar-archive.ts';
import { createDsarWorker } from '../../api/src/modules/privacy/dsar-worker.ts';
import { runErasureStep } from '../../api/src/modules/privacy/index.ts';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { testStorage } from '../../api/test/seed.ts';
import { startStripeStandIn } from '../../api/test/stripe-stand-in.ts';
import type { TestProject } from '../../api/test/test-app.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';

// The organization's settings pages against the real server: usage shows what ingest metered,
// per project, and the caps an admin sets (a refused one by its field); billing says the
// deployment has no provider; an erasure asked through the form is listed, carried out by the
// privacy worker's steps and shows its receipt; a data export asked through the form is gathered
// by the access request job, listed with its counts and downloaded as a zip through its link; a
// member sees usage read-only and neither billing nor privacy.

let dashboard: Dashboard;
let organizationId: string;
let web: TestProject;
let mobile: TestProject;
const ada = { sessionId: newSessionId(), userId: 'u_ada_1815', email: 'ada@example.org' };
const bob = { sessionId: newSessionId(), userId: 'u_bob_1900', email: 'bob@example.org' };

/** The fixture's first chunk for a session of `user` (its meta and its `identify`), in a visit of its own. */
async function chunkOf(user: typeof ada): Promise<Buffer> {
  const bytes = await validChunkFixture('recording-seq-0');
  const fixture = JSON.parse(bytes.toString('utf8')) as {
    meta: Record<string, unknown>;
    events: Array<{ type: string; user?: unknown }>;
  };
  const identity = { id: user.userId, email: user.email };
  return rewriteChunk(bytes, {
    sessionId: user.sessionId,
    visitId: user.sessionId.replace('ses_', 'vis_'),
    meta: { ...fixture.meta, user: identity },
    events: fixture.events.map((event) => (event.type === 'identify' ? { ...event, user: identity } : event)),
  });
}

beforeAll(async () => {
  dashboard = await startDashboard();
  const open = dashboard.open;
  dashboard.open = async (path, options) => {
    const opened = await open(path, options);
    opened.page.setDefaultTimeout(10_000);
    return opened;
  };
  web = dashboard.test.first;
  organizationId = web.project.organization_id;
  mobile = await dashboard.test.createProject('Mobile', { organizationId });
  expect((await postChunk(dashboard.test.app, web.projectKey, await chunkOf(ada))).statusCode).toBe(200);
  expect((await postChunk(dashboard.test.app, mobile.projectKey, await chunkOf(bob))).statusCode).toBe(200);
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

/** What ingest acknowledged for a project: its chunks and their bytes as received. */
async function acknowledged(projectId: string) {
  const row = await dashboard.test.database.database
    .selectFrom('chunks')
    .where('project_id', '=', projectId)
    .select((select) => [
      select.fn.countAll<number>().as('chunks'),
      select.fn.sum<number>('received_bytes').as('bytes'),
    ])
    .executeTakeFirstOrThrow();
  return { chunks: Number(row.chunks), bytes: Number(row.bytes) };
}

/** As the page writes sizes: 1024-based, one decimal. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

const path = (page: string) => `/settings/${page}?project=${web.project.id}`;

describe('usage', () => {
  it('a member sees this month, the totals and each project’s part as ingested, the caps read-only, and no billing or privacy', async () => {
    const { page, errors } = await dashboard.open(path('usage'), { as: dashboard.people.member });
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const month = page.locator('.settings-usage-month');
    await expect.poll(() => month.locator('tr[data-metric="sessions"] td').first().textContent()).toBe('2');
    expect(await month.locator('tr[data-metric="sessions"] td').nth(1).textContent()).toBe('No cap');

    const [webChunks, mobileChunks] = [
      await acknowledged(web.project.id),
      await acknowledged(mobile.project.id),
    ];
    const totals = page.getByTestId('usage-totals');
    const total = (metric: string) => totals.locator(`tr[data-metric="${metric}"] td`).textContent();
    expect(await total('sessions')).toBe('2');
    expect(await total('chunks')).toBe(String(webChunks.chunks + mobileChunks.chunks));
    expect(await total('ingestedBytes')).toBe(size(webChunks.bytes + mobileChunks.bytes));
    const cell = (project: TestProject, metric: string) =>
      page.locator(`tr[data-project-id="${project.project.id}"] td[data-metric="${metric}"]`).textContent();
    expect([await cell(web, 'sessions'), await cell(mobile, 'sessions')]).toEqual(['1', '1']);
    expect([await cell(web, 'ingestedBytes'), await cell(mobile, 'ingestedBytes')]).toEqual([
      size(webChunks.bytes),
      size(mobileChunks.bytes),
    ]);
    expect(await page.getByRole('rowheader', { name: 'Mobile' }).count()).toBe(1);

    // Read-only: the note, a disabled form, no save.
    await page.getByRole('note').filter({ hasText: 'Your role' }).waitFor();
    expect(await page.getByLabel('Sessions a month').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save caps' }).count()).toBe(0);
    const navigation = page.getByRole('navigation', { name: 'Settings' });
    expect(await navigation.getByRole('link').allTextContents()).toEqual([
      'Project',
      'Members',
      'AI',
      'Usage',
      'Your profile',
    ]);
    await expectAccessible(page);

    // A range of days in the URL: a day without use shows zeros and no project.
    await page.getByLabel('From (UTC)').fill('2020-01-01');
    await page.getByLabel('To (UTC, included)').fill('2020-01-31');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('heading', { name: 'From 2020-01-01 to 2020-01-31' }).waitFor();
    expect(await total('sessions')).toBe('0');
    await page.getByText('Nothing was used in this range.').waitFor();
    expect(new URL(page.url()).searchParams.get('from')).toBe('2020-01-01');

    // The server refuses what the page does not offer, even with the browser's CSRF token.
    const me = (await (await page.context().request.get('/v1/me')).json()) as { csrfToken: string };
    const headers = { 'x-service-csrf': me.csrfToken };
    const forged = [
      await page.context().request.patch(`/v1/orgs/${organizationId}/billing/caps`, {
        headers,
        data: { sessions: 1 },
      }),
      await page.context().request.post(`/v1/orgs/${organizationId}/erasure`, {
        headers,
        data: { userId: ada.userId },
      }),
      await page.context().request.get(`/v1/orgs/${organizationId}/billing`),
    ];
    expect(forged.map((answer) => answer.status())).toEqual([403, 403, 403]);

    // Billing and privacy, opened by URL, say who they are for and ask the API nothing.
    await page.goto(path('billing'));
    await page
      .getByRole('note')
      .filter({ hasText: "Billing is for the organization's admins and owners" })
      .waitFor();
    await expectAccessible(page);
    await page.goto(path('privacy'));
    await page.getByRole('note').filter({ hasText: 'Privacy requests are for' }).waitFor();
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('an admin sets the organization’s caps and sees them apply; a refused value is shown by its field', async () => {
    const { page, errors } = await dashboard.open(path('usage'), {
      as: dashboard.people.admin,
      allow: [`400 /v1/orgs/${organizationId}/billing/caps`],
    });
    const navigation = page.getByRole('navigation', { name: 'Settings' });
    await navigation.getByRole('link', { name: 'Privacy' }).waitFor();
    expect(await navigation.getByRole('link', { name: 'Billing' }).count()).toBe(1);
    const sessionsCap = page.getByLabel('Sessions a month');
    await sessionsCap.fill('1000');
    await page.getByLabel('AI tokens a month').fill('50000');
    await page.getByRole('button', { name: 'Save caps' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const row = page.locator('.settings-usage-month tr[data-metric="sessions"] td');
    await expect.poll(() => row.nth(1).textContent()).toBe('1,000');
    expect(await row.nth(2).textContent()).toBe('0 %');
    const stored = await dashboard.test.database.database
      .selectFrom('usage_caps')
      .select(['sessions', 'stored_bytes', 'ai_tokens'])
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    expect(
      [stored.sessions, stored.stored_bytes, stored.ai_tokens].map((value) => value && Number(value)),
    ).toEqual([1000, null, 50000]);
    // A reload reads them back.
    await page.reload();
    expect(await page.getByLabel('Sessions a month').inputValue()).toBe('1000');
    expect(await page.getByLabel('Stored (GB)').inputValue()).toBe('');

    // Refused by the API: the reason under the field, the field marked, nothing changed.
    await page.getByLabel('Sessions a month').fill('-5');
    await page.getByRole('button', { name: 'Save caps' }).click();
    const problem = page.locator('[data-field-error="sessions"]');
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(/>=\s?0/);
    expect(await page.getByLabel('Sessions a month').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('AI tokens a month').getAttribute('aria-invalid')).toBeNull();
    await expectAccessible(page);

    // At the cap, recording pauses and the page says so; emptied, the cap is gone.
    await page.getByLabel('Sessions a month').fill('2');
    await page.getByRole('button', { name: 'Save caps' }).click();
    await page.getByTestId('recording-paused').waitFor();
    expect(await row.nth(2).textContent()).toBe('100 %');
    await expectAccessible(page);
    await screenshot(page, 'settings-usage');
    await page.getByLabel('Sessions a month').fill('');
    await page.getByLabel('AI tokens a month').fill('');
    await page.getByRole('button', { name: 'Save caps' }).click();
    await expect.poll(() => row.nth(1).textContent()).toBe('No cap');
    expect(await page.getByTestId('recording-paused').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});

describe('billing', () => {
  it('says billing is not configured on a deployment without a provider, with the plan and no invoices', async () => {
    const { page, errors } = await dashboard.open(path('billing'), { as: dashboard.people.owner });
    await page.getByTestId('billing-not-configured').waitFor();
    expect(await page.getByTestId('billing-not-configured').textContent()).toContain(
      'Billing is not configured on this deployment.',
    );
    expect(await page.getByTestId('billing-plan').textContent()).toMatch(/is on the \w+ plan/);
    expect(await page.getByTestId('billing-subscription').textContent()).toBe('No subscription.');
    await page.getByText('No invoices: billing is not configured on this deployment.').waitFor();
    // Nothing to buy or manage here.
    expect(await page.getByRole('button', { name: /Subscribe|Manage billing/ }).count()).toBe(0);
    expect(await page.locator('tr[data-plan]').count()).toBe(4);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('opens from the API’s links (/orgs/{orgId}/billing, /orgs/{orgId}/usage) on that organization', async () => {
    const { page, errors } = await dashboard.open(`/orgs/${organizationId}/billing?checkout=canceled`, {
      as: dashboard.people.owner,
    });
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'The checkout was canceled' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/settings/billing');
    expect(new URL(page.url()).searchParams.get('org')).toBe(organizationId);
    await page.goto(`/orgs/${organizationId}/usage`);
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/settings/usage');
    expect(errors).toEqual([]);
    await page.context().close();
  });
});

describe('billing with Stripe (a stand-in for its API)', () => {
  it('an owner subscribes to a purchasable plan and opens the portal, each at the URL answered; invoices are listed; an admin only reads', async () => {
    const stripe = await startStripeStandIn();
    stripe.prices.add('price_team_monthly');
    const selling = await startDashboard({
      environment: {
        SVC_STRIPE_SECRET_KEY: stripe.secretKey,
        SVC_STRIPE_WEBHOOK_SECRET: 'whsec_dashboard_test',
        SVC_STRIPE_PRICES: 'team:price_team_monthly',
        SVC_STRIPE_API_BASE: stripe.apiBase,
      },
    });
    try {
      const orgId = selling.test.first.project.organization_id;
      const { page, context, errors } = await selling.open(`/settings/billing`, { as: selling.people.owner });
      page.setDefaultTimeout(10_000);
      // Stripe's pages cannot load here: the browser is answered in their place.
      await context.route(/^https:\/\/(checkout|billing)\.stripe\.com\//, (route) =>
        route.fulfill({ contentType: 'text/html', body: '<title>Stripe</title>' }),
      );
      await page.getByTestId('billing-plan').waitFor();
      expect(await page.getByTestId('billing-not-configured').count()).toBe(0);
      // The invoices are their own request: wait for their answer, not only the plan's.
      await page.getByTestId('billing-invoices').waitFor();
      expect(await page.getByText('No invoices yet.').count()).toBe(1);
      // Team is the one plan with a price.
      expect(await page.getByRole('button', { name: /^Subscribe to/ }).allTextContents()).toEqual([
        'Subscribe to Team',
      ]);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Subscribe to Team' }).click();
      await page.waitForURL(/^https:\/\/checkout\.stripe\.com\/c\/pay\//);
      const checkout = stripe.received.find((request) => request.path === '/v1/checkout/sessions');
      expect(checkout?.form['line_items[0][price]']).toBe('price_team_monthly');

      // Stripe's webhook would record the subscription; here it is written as it would be.
      const customer = [...stripe.customers.keys()][0] ?? '';
      await selling.test.database.database
        .updateTable('billing_accounts')
        .set({ subscription_id: 'sub_dashboard', plan: 'team', status: 'active' })
        .where('organization_id', '=', orgId)
        .execute();
      stripe.invoices.push({
        id: 'in_dashboard_1',
        object: 'invoice',
        customer,
        number: 'SVC-0042',
        status: 'paid',
        amount_due: 1999,
        amount_paid: 1999,
        currency: 'usd',
        created: Math.floor(Date.now() / 1000),
        hosted_invoice_url: 'https://invoice.stripe.com/i/in_dashboard_1',
        invoice_pdf: 'https://pay.stripe.com/invoice/in_dashboard_1/pdf',
      });
      await page.goto(`${selling.base}/settings/billing`);
      await page.getByTestId('billing-subscription').filter({ hasText: 'active' }).waitFor();
      expect(await page.getByTestId('billing-plan').textContent()).toContain('Team');
      const invoice = page.getByRole('row', { name: /SVC-0042/ });
      expect(await invoice.textContent()).toContain('$19.99');
      expect(await invoice.getByRole('link', { name: 'PDF of invoice SVC-0042' }).getAttribute('href')).toBe(
        'https://pay.stripe.com/invoice/in_dashboard_1/pdf',
      );
      // Subscribed: the plan changes in the portal.
      expect(await page.getByRole('button', { name: /^Subscribe to/ }).count()).toBe(0);
      await expectAccessible(page);
      await screenshot(page, 'settings-billing');
      await page.getByRole('button', { name: 'Manage billing' }).click();
      await page.waitForURL(/^https:\/\/billing\.stripe\.com\/p\/session\//);
      expect(errors).toEqual([]);
      await context.close();

      // An admin reads the same page, with nothing to buy or manage.
      const admin = await selling.open('/settings/billing', { as: selling.people.admin });
      await admin.page.getByTestId('billing-subscription').filter({ hasText: 'active' }).waitFor();
      await admin.page.getByText('Owners change the plan, payment methods and subscription.').waitFor();
      expect(await admin.page.getByRole('button', { name: /Subscribe|Manage billing/ }).count()).toBe(0);
      expect(admin.errors).toEqual([]);
      await admin.context.close();
    } finally {
      await selling.close();
      await stripe.close();
    }
  }, 120_000);
});

describe('privacy', () => {
  it('an admin requests an erasure after confirming; the worker carries it out and the list shows its receipt', async () => {
    const { page, errors } = await dashboard.open(path('privacy'), {
      as: dashboard.people.admin,
      allow: [`400 /v1/orgs/${organizationId}/erasure`],
    });
    await page.getByRole('heading', { name: "Erase an end user's data" }).waitFor();
    await page.getByText('No erasure has been requested.').waitFor();
    await page.getByTestId('data-exports').waitFor();
    await expectAccessible(page);
    const form = page.getByRole('form', { name: 'Request an erasure' });

    // An address the API refuses: its reason under the field.
    await form.getByLabel('E-mail address').fill('not an address');
    await page.getByRole('button', { name: 'Request erasure' }).click();
    await page.getByRole('button', { name: 'Yes, erase' }).click();
    const problem = page.locator('[data-field-error="email"]');
    await problem.waitFor();
    expect(await problem.textContent()).toContain('must be an e-mail address');
    expect(await form.getByLabel('E-mail address').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);

    // Asked first; Cancel changes nothing.
    await form.getByLabel('E-mail address').fill(ada.email.toUpperCase());
    await page.getByRole('button', { name: 'Request erasure' }).click();
    await page.getByText('This cannot be undone.').waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Request erasure' }).click();
    await page.getByRole('button', { name: 'Yes, erase' }).click();
    await page.getByRole('status').filter({ hasText: 'Erasure requested' }).waitFor();
    const rows = page.locator('tr[data-erasure-id]');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getByTestId('erasure-status').textContent()).toMatch(/^(Queued|Running)/);
    expect(await rows.first().locator('td').nth(2).textContent()).toBe('e-mail address');
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('Admin Person');

    // The privacy worker's steps, as the server runs them.
    const { blobStore } = await testStorage(dashboard.test);
    while (await runErasureStep({ database: dashboard.test.database.database, blobStore }, new Date())) {}

    // The page reads the list again while a request is under way.
    await expect.poll(() => rows.first().getByTestId('erasure-status').textContent()).toMatch(/^Completed/);
    expect(await rows.first().getByTestId('erasure-sessions').textContent()).toBe('1');
    await rows.first().getByText('What was removed').click();
    const receipt = rows.first().getByRole('list', { name: /^Receipt of / });
    expect(await receipt.locator('li[data-table="sessions"]').textContent()).toBe('sessions: 1 row');
    await screenshot(page, 'settings-privacy');
    expect(await receipt.locator('li[data-table="chunks"]').textContent()).toBe('chunks: 1 row');
    expect(await receipt.locator('li[data-table="blobs_removed"]').textContent()).toMatch(
      /^\d+ stored files? removed$/,
    );
    await expectAccessible(page);

    // Ada's session is gone; Bob's stays.
    const sessions = await dashboard.test.database.database.selectFrom('sessions').select('id').execute();
    expect(sessions.map((session) => session.id)).toEqual([bob.sessionId]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('an admin requests a data export by the form; the job gathers it and the list offers its archive', async () => {
    // After the erasure above: Bob's session is the one left.
    const { page, errors } = await dashboard.open(path('privacy'), {
      as: dashboard.people.admin,
      allow: [`400 /v1/orgs/${organizationId}/dsar`],
    });
    const exports = page.getByTestId('data-exports');
    const form = page.getByRole('form', { name: 'Request a data export' });
    await exports.getByText('No data export has been requested.').waitFor();

    // Refused by the API: the reason under its field.
    await form.getByLabel('E-mail address').fill('not an address');
    await form.getByRole('button', { name: 'Request export' }).click();
    const problem = form.locator('[data-field-error="email"]');
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(/email address/i);
    expect(await form.getByLabel('E-mail address').getAttribute('aria-invalid')).toBe('true');

    await form.getByLabel('E-mail address').fill('');
    await form.getByLabel('User id').fill(bob.userId);
    await form.getByRole('button', { name: 'Request export' }).click();
    await form.getByRole('status').filter({ hasText: 'Export requested' }).waitFor();
    expect(await form.locator('[data-field-error]').count()).toBe(0);
    const rows = page.locator('tr[data-dsar-id]');
    await expect.poll(() => rows.count()).toBe(1);
    const row = rows.first();
    expect(await row.getByTestId('dsar-status').textContent()).toMatch(/^(Queued|Gathering)/);
    expect(await row.getByTestId('dsar-subject').textContent()).toBe(bob.userId);
    expect(await row.locator('td').nth(1).textContent()).toBe('Admin Person');
    expect(await row.getByRole('link', { name: /Download archive/ }).count()).toBe(0);

    // The access request job, as the server runs it; the page reads the list again meanwhile.
    await createDsarWorker({
      database: dashboard.test.database.database,
      log: dashboard.test.app.log,
    }).runUntilIdle();
    await expect
      .poll(() => row.getByTestId('dsar-status').textContent(), { timeout: 10_000 })
      .toMatch(/^Ready/);
    const bobChunks = await acknowledged(mobile.project.id);
    const contents = row.getByRole('list', { name: /^Contents of dsar_/ });
    const count = (key: string) => contents.locator(`li[data-count="${key}"]`).textContent();
    expect([await count('sessions'), await count('chunks'), await count('calls')]).toEqual([
      '1 session',
      `${bobChunks.chunks} ${bobChunks.chunks === 1 ? 'chunk' : 'chunks'}`,
      '0 calls',
    ]);
    expect(await count('errors')).toMatch(/^\d+ errors?$/);
    expect(await count('customEvents')).toMatch(/^\d+ custom events?$/);
    expect(await count('bytes')).toMatch(/^[\d.]+ (B|KB|MB) of recording$/);
    expect(await row.getByTestId('dsar-expires').locator('time').count()).toBe(1);
    await expectAccessible(page);

    // The link downloads the zip with the browser's own cookie; index.json lists Bob's session.
    const requestId = (await row.getAttribute('data-dsar-id')) ?? '';
    const link = row.getByRole('link', { name: `Download archive of request ${requestId}` });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(`${requestId}.zip`);
    const files = unzipSync(new Uint8Array(await readFile(await download.path())));
    const index = JSON.parse(new TextDecoder().decode(files['index.json'])) as DsarIndex;
    const sessionIds = new Set(
      index.parts.flatMap((part) => (part.sessionId === undefined ? [] : [part.sessionId])),
    );
    expect([...sessionIds]).toEqual([bob.sessionId]);
    expect(
      Object.keys(files).some((name) =>
        name.startsWith(`projects/${mobile.project.id}/sessions/${bob.sessionId}/chunks/`),
      ),
    ).toBe(true);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
