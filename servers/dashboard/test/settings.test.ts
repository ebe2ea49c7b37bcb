import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import jsQR from 'jsqr';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../api/src/modules/accounts/passwords.ts';
import { insertUser } from '../../api/src/modules/accounts/repository.ts';
import { type Dashboard, expectAccessible, PASSWORD, screenshot, startDashboard } from './harness.ts';

// The settings pages against the real server: what an admin changes reaches the API, what a viewer
// sees is read-only and the server refuses a forged change, invitations are mailed, API tokens
// work until revoked, the audit log lists it all, and two-factor sign-in turns on with a real code.

let dashboard: Dashboard;
let projectId: string;
let organizationId: string;

beforeAll(async () => {
  dashboard = await startDashboard();
  // A locator that finds nothing fails within 10 s, naming itself, before the test's own timeout.
  const open = dashboard.open;
  dashboard.open = async (path, options) => {
    const opened = await open(path, options);
    opened.page.setDefaultTimeout(10_000);
    return opened;
  };
  projectId = dashboard.test.first.project.id;
  organizationId = dashboard.test.first.project.organization_id;
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

/** The project as the API answers it to the project's API token. */
async function projectFromApi() {
  const response = await fetch(`${dashboard.base}/v1/projects/${projectId}`, {
    headers: dashboard.test.first.headers,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    name: string;
    projectKey: string;
    previousProjectKey?: { key: string; expiresAt: string };
    settings: {
      privacy: { mode: string };
      detectorThresholds: Record<string, number>;
      allowedOrigins: string[];
      insights: { routePatterns: string[] };
      assets: { archiveFonts: boolean; archiveImages: boolean };
    };
  };
}

describe('project settings', () => {
  it('an admin changes the privacy mode, a threshold and an allowed origin; an invalid threshold shows the API’s error', async () => {
    const { page, errors } = await dashboard.open(`/settings/project?project=${projectId}`, {
      as: dashboard.people.admin,
      allow: [`400 /v1/projects/${projectId}`],
    });
    await page.getByRole('heading', { name: 'Project settings' }).waitFor();
    // Every threshold is listed with its default, from the API's SDK configuration.
    const loss = page.getByLabel('Packet loss (%)');
    expect(await loss.inputValue()).toBe('5');
    expect(await page.getByLabel('Round-trip time (ms)', { exact: true }).inputValue()).toBe('300');
    expect(await page.getByRole('row', { name: /Low resolution below height/ }).textContent()).toContain(
      '240',
    );
    await expectAccessible(page);

    await page.getByLabel('Privacy mode').selectOption('strict');
    await loss.fill('3');
    await page.getByLabel('Add to allowed origins').fill('https://app.example.com');
    await page.getByRole('button', { name: 'Add', exact: true }).last().click();
    await page.getByRole('button', { name: 'Remove https://app.example.com' }).waitFor();
    expect(await page.getByLabel('Also archive fonts').isChecked()).toBe(false);
    await page.getByLabel('Also archive fonts').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Saved at/ })
      .waitFor();

    const saved = await projectFromApi();
    expect(saved.settings.privacy.mode).toBe('strict');
    expect(saved.settings.detectorThresholds).toEqual({ lossPct: 3 });
    expect(saved.settings.allowedOrigins).toEqual(['https://app.example.com']);
    expect(saved.settings.assets).toEqual({ archiveFonts: true, archiveImages: false });
    // The form shows what was saved, the threshold marked as changed.
    expect(await page.getByLabel('Packet loss (%)').inputValue()).toBe('3');
    await page.getByRole('button', { name: 'Reset Packet loss (%)' }).waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'settings');

    // Over its bound: the API's message next to the form, the field marked, nothing changed.
    await page.getByLabel('Packet loss (%)').fill('300');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/lossPct/);
    expect(await page.getByLabel('Packet loss (%)').getAttribute('aria-invalid')).toBe('true');
    expect((await projectFromApi()).settings.detectorThresholds).toEqual({ lossPct: 3 });
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('an admin sets route patterns, one a line; a refused pattern is named next to the field', async () => {
    const { page, errors } = await dashboard.open(`/settings/project?project=${projectId}`, {
      as: dashboard.people.admin,
      allow: [`400 /v1/projects/${projectId}`],
    });
    await page.getByRole('heading', { name: 'Project settings' }).waitFor();
    const patterns = page.getByLabel('Route patterns');
    expect(await patterns.inputValue()).toBe('');
    await patterns.fill('/docs/:slug\n\n  /u/:id/settings  \n');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Saved at/ })
      .waitFor();
    expect((await projectFromApi()).settings.insights.routePatterns).toEqual([
      '/docs/:slug',
      '/u/:id/settings',
    ]);
    // The form shows what was saved; a reload reads it back.
    expect(await patterns.inputValue()).toBe('/docs/:slug\n/u/:id/settings');
    await page.reload();
    expect(await page.getByLabel('Route patterns').inputValue()).toBe('/docs/:slug\n/u/:id/settings');

    // A pattern that is no path: the API's reason next to the field, naming it, and nothing changed.
    await page.getByLabel('Route patterns').fill('/docs/:slug\ndocs?page=2');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').waitFor();
    const problem = page.locator('[data-field-error="routePatterns"]');
    expect(await problem.textContent()).toBe(
      'docs?page=2: must be a path such as /docs/:slug (no query, hash or spaces)',
    );
    const field = page.getByLabel('Route patterns');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await field.getAttribute('aria-describedby')).toContain(await problem.getAttribute('id'));
    expect((await projectFromApi()).settings.insights.routePatterns).toEqual([
      '/docs/:slug',
      '/u/:id/settings',
    ]);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a viewer sees the settings read-only, and the server refuses a forged change', async () => {
    const before = await projectFromApi();
    const { page, context, errors } = await dashboard.open(`/settings/project?project=${projectId}`, {
      as: dashboard.people.viewer,
    });
    await page.getByRole('heading', { name: 'Project settings' }).waitFor();
    expect(await page.getByLabel('Privacy mode').inputValue()).toBe(before.settings.privacy.mode);
    expect(await page.getByLabel('Privacy mode').isDisabled()).toBe(true);
    expect(await page.getByLabel('Packet loss (%)').isDisabled()).toBe(true);
    expect(await page.getByLabel('Project name').isDisabled()).toBe(true);
    await page.getByRole('note').filter({ hasText: 'viewer' }).waitFor();
    await page.getByText(before.projectKey).waitFor();
    for (const name of ['Save settings', 'Rotate key', 'Delete project', 'Add'])
      expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    // The sub-navigation leaves out what a viewer cannot open.
    const navigation = page.getByRole('navigation', { name: 'Settings' });
    expect(await navigation.getByRole('link').allTextContents()).toEqual([
      'Project',
      'Members',
      'AI',
      'Usage',
      'Your profile',
    ]);
    await expectAccessible(page);

    // The browser's own session, with its CSRF token: still 403, nothing changed.
    const me = (await (await context.request.get('/v1/me')).json()) as { csrfToken: string };
    const headers = { 'x-service-csrf': me.csrfToken, 'x-service-project': projectId };
    const forged = await context.request.patch(`/v1/projects/${projectId}`, {
      headers,
      data: { settings: { privacy: { mode: 'standard' }, allowedOrigins: [] } },
    });
    expect(forged.status()).toBe(403);
    expect((await forged.json()) as unknown).toMatchObject({ code: 'unauthorized' });
    expect((await context.request.post(`/v1/projects/${projectId}/rotate-key`, { headers })).status()).toBe(
      403,
    );
    expect((await context.request.delete(`/v1/projects/${projectId}`, { headers })).status()).toBe(403);
    const after = await projectFromApi();
    expect(after.settings).toEqual(before.settings);
    expect(after.projectKey).toBe(before.projectKey);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('an admin copies and rotates the project key after confirming; the old key’s time left is shown', async () => {
    const before = await projectFromApi();
    const { page, errors } = await dashboard.open(`/settings/project?project=${projectId}`, {
      as: dashboard.people.admin,
    });
    await page.getByTestId('project-key').filter({ hasText: before.projectKey }).waitFor();
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByText('the current one keeps working for 24 hours').waitFor();
    await page.getByRole('button', { name: 'Yes, rotate the key' }).click();
    await page.getByRole('status').filter({ hasText: 'A new key is in place.' }).waitFor();
    const after = await projectFromApi();
    expect(after.projectKey).not.toBe(before.projectKey);
    expect(after.previousProjectKey?.key).toBe(before.projectKey);
    expect(await page.getByTestId('project-key').textContent()).toBe(after.projectKey);
    const previous = page.getByText(/The previous key .* keeps working until/);
    expect(await previous.textContent()).toContain(before.projectKey);
    expect(await previous.textContent()).toMatch(/2[34] h left/);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('an admin deletes a project only after typing its name', async () => {
    const other = await dashboard.test.app.inject({
      method: 'POST',
      url: `/v1/orgs/${organizationId}/projects`,
      headers: await cookieHeaders(dashboard.people.admin.email),
      payload: { name: 'Staging' },
    });
    expect(other.statusCode).toBe(201);
    const staging = other.json() as { id: string };
    const { page, errors } = await dashboard.open(
      `/settings/project?org=${organizationId}&project=${staging.id}`,
      {
        as: dashboard.people.admin,
      },
    );
    const remove = page.getByRole('button', { name: 'Delete project' });
    await remove.waitFor();
    expect(await remove.isDisabled()).toBe(true);
    await page.getByLabel(/Type the project's name/).fill('Stagin');
    expect(await remove.isDisabled()).toBe(true);
    await page.getByLabel(/Type the project's name/).fill('Staging');
    await remove.click();
    await page.waitForURL((url) => !url.search.includes(staging.id));
    const gone = await fetch(`${dashboard.base}/v1/orgs/${organizationId}/projects`, {
      headers: await cookieHeaders(dashboard.people.admin.email),
    });
    const names = ((await gone.json()) as { items: { name: string }[] }).items.map((project) => project.name);
    expect(names).not.toContain('Staging');
    expect(errors).toEqual([]);
    await page.context().close();
  });
});

/**
 * A session of `email` (signed in through the API), for calls made outside the browser: its cookie
 * and CSRF token. Kept per address (`userAgent` aside): sign-in is rate limited per account (10)
 * and per client address (30) in 15 minutes, and every test here signs in from 127.0.0.1.
 */
const sessionsByEmail = new Map<string, Record<string, string>>();

async function cookieHeaders(email: string, userAgent?: string): Promise<Record<string, string>> {
  const kept = userAgent === undefined ? sessionsByEmail.get(email) : undefined;
  if (kept !== undefined) return kept;
  const response = await fetch(`${dashboard.base}/auth/login`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin: dashboard.base,
      ...(userAgent === undefined ? {} : { 'user-agent': userAgent }),
    },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(response.status).toBe(200);
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const headers = { cookie, 'x-service-csrf': csrfToken };
  if (userAgent === undefined) sessionsByEmail.set(email, headers);
  return headers;
}

describe('organization', () => {
  it('an admin invites someone (the e-mail is sent), sees the pending invitation and revokes it; changes a role; removes a member', async () => {
    // Someone to remove (the people of the harness stay for the other tests).
    const leaving = await insertUser(dashboard.test.database.database, {
      email: 'leaving@example.com',
      name: 'Leaving Person',
      passwordHash: 'unused',
      emailVerified: true,
    });
    if (leaving === undefined) throw new Error('could not create leaving@example.com');
    await dashboard.test.database.database
      .insertInto('organization_members')
      .values({ organization_id: organizationId, user_id: leaving.id, role: 'member' })
      .execute();
    const { page, errors } = await dashboard.open('/settings/members', { as: dashboard.people.admin });
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    const people = page.getByRole('table').first();
    await people.getByRole('cell', { name: dashboard.people.viewer.email }).waitFor();
    await expectAccessible(page);

    await page.getByLabel('E-mail address to invite').fill('new.person@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Invitation sent to new.person@example.com.' })
      .waitFor();
    const pending = page.getByRole('row', { name: /new\.person@example\.com/ });
    await pending.waitFor();
    expect(await pending.textContent()).toContain('Viewer');
    expect(await pending.textContent()).toContain('Admin Person');
    // Without SMTP the message is a file in the data directory, with the one-time link.
    const mail = await mailTo('new.person@example.com');
    expect(mail).toMatch(/accept-invitation\?token=/);

    await page.getByRole('button', { name: 'Revoke the invitation to new.person@example.com' }).click();
    await page.getByRole('status').filter({ hasText: 'was revoked' }).waitFor();
    await page.getByText('No pending invitations.').waitFor();

    await page.getByLabel('Role of Member Person').selectOption('viewer');
    await page.getByRole('status').filter({ hasText: 'Member Person is now Viewer.' }).waitFor();
    const members = await fetch(`${dashboard.base}/v1/orgs/${organizationId}/members`, {
      headers: await cookieHeaders(dashboard.people.admin.email),
    });
    const listed = ((await members.json()) as { items: { email: string; role: string }[] }).items;
    expect(listed.find((candidate) => candidate.email === dashboard.people.member.email)?.role).toBe(
      'viewer',
    );
    // An admin does not change an owner: no control on that row.
    expect(await page.getByLabel('Role of Owner Person').count()).toBe(0);
    await page.getByLabel('Role of Member Person').selectOption('member');
    await page.getByRole('status').filter({ hasText: 'Member Person is now Member.' }).waitFor();

    await page.getByRole('button', { name: 'Remove Leaving Person' }).click();
    await page.getByText('Remove Leaving Person from Test project org?').waitFor();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByRole('status').filter({ hasText: 'Leaving Person was removed.' }).waitFor();
    await page.getByRole('cell', { name: 'leaving@example.com' }).waitFor({ state: 'detached' });
    const after = await fetch(`${dashboard.base}/v1/orgs/${organizationId}/members`, {
      headers: await cookieHeaders(dashboard.people.admin.email),
    });
    const emails = ((await after.json()) as { items: { email: string }[] }).items.map((item) => item.email);
    expect(emails).not.toContain('leaving@example.com');
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('the last owner cannot step down: the API’s refusal is shown', async () => {
    const { page, errors } = await dashboard.open('/settings/members', {
      as: dashboard.people.owner,
      allow: [`409 /v1/orgs/${organizationId}/members/${dashboard.people.owner.id}`],
    });
    await page.getByLabel('Role of Owner Person').selectOption('admin');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'An organization keeps at least one owner: make another member an owner first',
    );
    expect(await page.getByLabel('Role of Owner Person').inputValue()).toBe('owner');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('an admin creates an API token: the secret is shown once and works until it is revoked', async () => {
    const { page, errors } = await dashboard.open('/settings/tokens', { as: dashboard.people.admin });
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Token name').fill('CI export');
    await page.getByLabel('settings:read').check();
    await page.getByLabel('calls:read').uncheck();
    await page.getByLabel('Expires after').selectOption('30 days');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = page.getByTestId('token-secret');
    await secret.waitFor();
    const token = (await secret.textContent()) ?? '';
    expect(token).toMatch(/^svc_/);
    await page.getByText('Copy it now: it is not shown again.').waitFor();
    await expectAccessible(page);

    const current = () =>
      fetch(`${dashboard.base}/v1/projects/current`, { headers: { authorization: `Bearer ${token}` } });
    expect((await current()).status).toBe(200);

    await page.getByRole('button', { name: 'Done, I copied it' }).click();
    expect(await page.getByTestId('token-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    const row = page.getByRole('row', { name: /CI export/ });
    expect(await row.textContent()).toContain('issues:read, sessions:read, settings:read');
    await page.getByRole('button', { name: 'Revoke CI export' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'CI export was revoked' }).waitFor();
    expect((await current()).status).toBe(401);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('the audit log lists those actions, newest first, with their actor and readable names, page after page', async () => {
    // A page of newer entries on top of those actions: changes made with the project's API token.
    for (let index = 0; index < 50; index += 1) {
      const answer = await dashboard.test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${projectId}`,
        headers: dashboard.test.first.headers,
        payload: { name: 'Test project' },
      });
      expect(answer.statusCode).toBe(200);
    }
    const { page, errors } = await dashboard.open('/settings/audit', { as: dashboard.people.admin });
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.getByRole('table');
    const rows = table.locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(50);
    // The newest: the admin signing in to open this page, then the token's changes.
    expect(await rows.first().textContent()).toContain('Signed in');
    const change = (await rows.nth(1).textContent()) ?? '';
    expect(change).toContain('Project settings changed');
    expect(change).toContain('API token test');
    expect(change).toContain('changed: name');
    expect(await rows.filter({ hasText: 'Invitation sent' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Older entries' }).click();
    for (const [event, detail] of [
      ['Project settings changed', 'changed: name, settings'],
      ['Project key rotated', 'previous key works until'],
      ['Project deleted', 'Staging'],
      ['Invitation sent', 'new.person@example.com as viewer'],
      ['Invitation revoked', 'new.person@example.com'],
      ['Member role changed', 'member → viewer'],
      ['Member removed', 'as member'],
      ['API token created', 'CI export'],
      ['API token revoked', 'CI export'],
    ] as const) {
      const row = table.getByRole('row').filter({ hasText: event }).filter({ hasText: detail }).first();
      await row.waitFor();
      expect(await row.textContent(), event).toContain(dashboard.people.admin.email);
    }
    await expectAccessible(page);

    // One kind of action only.
    await page.getByLabel('Show').selectOption('token.revoked');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    expect(await table.getByRole('row').nth(1).textContent()).toContain('API token revoked');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a viewer sees the members but cannot change them; tokens and audit are refused in words', async () => {
    const { page, errors } = await dashboard.open('/settings/members', { as: dashboard.people.viewer });
    await page.getByRole('cell', { name: dashboard.people.admin.email }).waitFor();
    expect(await page.getByRole('combobox', { name: /Role of/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Remove|Send invitation/ }).count()).toBe(0);
    await page.goto('/settings/tokens');
    await page.getByText("API tokens are managed by the organization's admins and owners.").waitFor();
    await page.goto('/settings/audit');
    await page.getByText("The audit log is for the organization's admins and owners.").waitFor();
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('a member leaves the organization from the members page', async () => {
    const quitting = await insertUser(dashboard.test.database.database, {
      email: 'quitting@example.com',
      name: 'Quitting Person',
      passwordHash: await hashPassword(PASSWORD),
      emailVerified: true,
    });
    if (quitting === undefined) throw new Error('could not create quitting@example.com');
    await dashboard.test.database.database
      .insertInto('organization_members')
      .values({ organization_id: organizationId, user_id: quitting.id, role: 'viewer' })
      .execute();
    const person = { id: quitting.id, email: 'quitting@example.com', role: 'viewer' as const };
    const { page, errors } = await dashboard.open('/settings/members', { as: person });
    await page.getByRole('button', { name: 'Leave Test project org' }).click();
    await page.getByText('You lose access to its projects.').waitFor();
    await page.getByRole('button', { name: 'Yes, leave' }).click();
    await page.waitForURL(/\/sessions$/);
    // With no organization left, the app offers to create one (src/app/Onboarding.tsx).
    await page.getByRole('heading', { name: 'Create your organization' }).waitFor();
    const members = await fetch(`${dashboard.base}/v1/orgs/${organizationId}/members?limit=500`, {
      headers: await cookieHeaders(dashboard.people.admin.email),
    });
    const emails = ((await members.json()) as { items: { email: string }[] }).items.map((item) => item.email);
    expect(emails).not.toContain('quitting@example.com');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('an admin renames the organization; the switcher follows', async () => {
    const { page, errors } = await dashboard.open('/settings/members', { as: dashboard.people.admin });
    const rename = async (name: string) => {
      await page.getByLabel('Organization name').fill(name);
      await page.getByRole('button', { name: 'Rename' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `The organization is now ${name}.` })
        .waitFor();
      await page.getByRole('heading', { name: `People in ${name}` }).waitFor();
      const switcher = page.getByRole('combobox', { name: 'Organization' });
      expect(await switcher.locator('option:checked').textContent()).toBe(name);
      const answer = await fetch(`${dashboard.base}/v1/orgs/${organizationId}`, {
        headers: await cookieHeaders(dashboard.people.admin.email),
      });
      expect(((await answer.json()) as { name: string }).name).toBe(name);
    };
    await rename('Acme Telehealth');
    // Back, for the names the other tests read.
    await rename('Test project org');
    expect(errors).toEqual([]);
    await page.context().close();
  });
});

/** The text of the e-mail written for `address` (no SMTP: `<dataDir>/mail/*.eml`). */
async function mailTo(address: string): Promise<string> {
  const folder = join(dashboard.test.dataDirectory, 'mail');
  for (let attempt = 0; attempt < 50; attempt += 1) {
    for (const file of await readdir(folder).catch(() => [] as string[])) {
      const text = await readFile(join(folder, file), 'utf8');
      if (text.includes(`To: ${address}`)) return text.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no e-mail to ${address}`);
}

describe('your profile', () => {
  it('changes the name, lists the sessions (this one marked; one other signed out, then all others), turns two-factor sign-in on with a real code, replaces the recovery codes and turns it off', async () => {
    const person = dashboard.people.owner;
    // Two more sessions of the same person, signed in on a phone.
    const phone =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
    const elsewhere = [await cookieHeaders(person.email, phone), await cookieHeaders(person.email, phone)];
    /** How many of those sessions still answer `GET /v1/me`. */
    const live = async () => {
      let count = 0;
      for (const headers of elsewhere)
        if ((await fetch(`${dashboard.base}/v1/me`, { headers: { cookie: headers.cookie ?? '' } })).ok)
          count += 1;
      return count;
    };
    expect(await live()).toBe(2);
    const { page, errors } = await dashboard.open('/settings/profile', { as: person });
    await page.getByRole('heading', { name: 'Your profile' }).waitFor();
    await expectAccessible(page);

    await page.getByLabel('Your name').fill('Olivia Owner');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Your name is saved.' }).waitFor();
    await page.getByRole('banner').getByText('Olivia Owner').waitFor();

    const sessions = page.getByRole('table').filter({ hasText: 'Last active' });
    const current = sessions.getByRole('row').filter({ hasText: 'This session' });
    await current.waitFor();
    expect(await current.textContent()).toMatch(/Chrome \d+ on Linux/);
    const phones = sessions.getByRole('row').filter({ hasText: 'Safari 17 on iOS' });
    expect(await phones.count()).toBe(2);
    const rows = await sessions.locator('tbody tr').count();
    await page
      .getByRole('button', { name: /^Sign out Safari 17 on iOS/ })
      .first()
      .click();
    await page.getByRole('status').filter({ hasText: 'That session is signed out.' }).waitFor();
    await page.waitForFunction(
      (expected) => document.querySelectorAll('tr[data-session-id]').length === expected,
      rows - 1,
    );
    expect(await live()).toBe(1);
    await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /other sessions? (was|were) signed out/ })
      .waitFor();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-session-id]').length === 1);
    expect(await live()).toBe(0);

    await page.getByLabel('Your password, to set up two-factor sign-in').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = ((await page.getByTestId('mfa-secret').textContent()) ?? '').replaceAll(' ', '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = await page.getByRole('link', { name: 'Open in an authenticator app' }).getAttribute('href');
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    // The QR code holds the same otpauth URI: drawn to a canvas and read back with jsQR.
    const image = await page
      .getByRole('img', { name: 'QR code of the two-factor key for an authenticator app' })
      .evaluate(async (svg) => {
        const url = URL.createObjectURL(
          new Blob([new XMLSerializer().serializeToString(svg)], { type: 'image/svg+xml' }),
        );
        const picture = new Image();
        picture.src = url;
        await picture.decode();
        const canvas = document.createElement('canvas');
        canvas.width = 400;
        canvas.height = 400;
        const context = canvas.getContext('2d');
        if (context === null) throw new Error('no 2d context');
        context.drawImage(picture, 0, 0, 400, 400);
        URL.revokeObjectURL(url);
        return Array.from(context.getImageData(0, 0, 400, 400).data);
      });
    const read = jsQR(Uint8ClampedArray.from(image), 400, 400);
    expect(read?.data).toBe(uri);
    expect(new URL(uri ?? '').searchParams.get('secret')).toBe(secret);
    await expectAccessible(page);
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    await page.getByLabel('The 6-digit code the app shows').fill(code);
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    expect(await codes.count()).toBe(10);
    const shown = (await codes.allTextContents()).map((text) => text.trim());
    expect(await codes.first().textContent()).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/i);
    await page.getByText('Status: on.').waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Done, I saved them' }).click();
    expect(await page.getByRole('list', { name: 'Recovery codes' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).waitFor();

    // Signing in now asks for the second factor.
    const login = await fetch(`${dashboard.base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard.base },
      body: JSON.stringify({ email: person.email, password: PASSWORD }),
    });
    expect(await login.json()).toMatchObject({ mfaRequired: true });

    // New recovery codes, asked with one of the old ones; then off, with a later code of the app.
    await page.getByLabel('Code from your app, or a recovery code').fill(shown[0] ?? '');
    await page.getByRole('button', { name: 'Replace recovery codes' }).click();
    await page.getByRole('status').filter({ hasText: 'the old ones no longer work' }).waitFor();
    const replaced = (await codes.allTextContents()).map((text) => text.trim());
    expect(replaced).toHaveLength(10);
    expect(replaced.filter((replacement) => shown.includes(replacement))).toEqual([]);
    await page.getByRole('button', { name: 'Done, I saved them' }).click();
    const later = new TOTP({ secret: Secret.fromBase32(secret) }).generate({
      timestamp: Date.now() + 30_000,
    });
    await page.getByLabel('Code from your app, or a recovery code').fill(later);
    await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
    await page.getByText('Status: off.').waitFor();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('changes the password: a wrong current password is the API’s refusal; the new one signs in', async () => {
    const person = dashboard.people.member;
    const { page, errors } = await dashboard.open('/settings/profile', {
      as: person,
      allow: ['403 /v1/me/password'],
    });
    /** Sends the form and waits for the API's answer (the status line of a previous change is still up). */
    const changePassword = async () => {
      const answered = page.waitForResponse(
        (response) => response.url().endsWith('/v1/me/password') && response.request().method() === 'POST',
      );
      await page.getByRole('button', { name: 'Change password' }).click();
      expect((await answered).status()).toBe(200);
    };
    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password (at least 8 characters)').fill('another long passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').filter({ hasText: 'The current password is wrong' }).waitFor();
    await page.getByLabel('Current password').fill(PASSWORD);
    await changePassword();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    const signIn = (password: string) =>
      fetch(`${dashboard.base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: dashboard.base },
        body: JSON.stringify({ email: person.email, password }),
      });
    expect((await signIn(PASSWORD)).status).toBe(401);
    expect((await signIn('another long passphrase')).status).toBe(200);
    // Back to the harness's password, for whoever signs in as this person next.
    await page.getByLabel('Current password').fill('another long passphrase');
    await page.getByLabel('New password (at least 8 characters)').fill(PASSWORD);
    await changePassword();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    expect((await signIn(PASSWORD)).status).toBe(200);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
