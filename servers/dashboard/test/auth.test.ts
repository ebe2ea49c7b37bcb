import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, expectAccessible, PASSWORD, startDashboard } from './harness.ts';
import { mailedLink } from './mail.ts';

// Every way into the dashboard the server offers besides the password form (test/sign-in.test.ts):
// sign-up with e-mail verification and the first organization and project, password reset, a
// one-time sign-in link, and invitation acceptance (new account, and an existing one that signs
// in first). The e-mails are the .eml files of the embedded default, read as a person would.

let dashboard: Dashboard;

beforeAll(async () => {
  dashboard = await startDashboard();
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

/** Expected failed answers on these pages: signed-out `GET /v1/me`. */
const SIGNED_OUT = ['401 /v1/me'];

async function signInWithForm(page: import('playwright-core').Page, email: string, password: string) {
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('getting into the dashboard', { timeout: 120_000 }, () => {
  it('signs up, verifies the address from the e-mail, signs in and creates an organization and a project', async () => {
    const { page, errors, context } = await dashboard.open('/login', { allow: SIGNED_OUT });
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Name').fill('Grace');
    await page.getByLabel('E-mail address').fill('grace@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();

    // Signing in before verifying is refused with the server's reason.
    await page.goto('/login');
    await signInWithForm(page, 'grace@example.com', PASSWORD);
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/^Verify your e-mail address first/);

    await page.goto(
      await mailedLink(dashboard.test.dataDirectory, dashboard.base, 'grace@example.com', 'verify-email'),
    );
    await page.getByRole('status').filter({ hasText: 'Your address is verified' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInWithForm(page, 'grace@example.com', PASSWORD);

    // A new account has no organization: it creates one, then its first project.
    await page.getByRole('heading', { name: 'Create your organization' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Organization name').fill('Grace Inc');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Create a project' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Project name').fill('Web shop');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(
      await page.getByRole('combobox', { name: 'Organization' }).locator('option:checked').textContent(),
    ).toBe('Grace Inc');
    expect(
      await page
        .getByRole('combobox', { name: 'Project', exact: true })
        .locator('option:checked')
        .textContent(),
    ).toBe('Web shop');
    const projects = await dashboard.test.database.database
      .selectFrom('projects')
      .innerJoin('organizations', 'organizations.id', 'projects.organization_id')
      .select(['projects.name as project', 'organizations.name as organization'])
      .where('organizations.name', '=', 'Grace Inc')
      .execute();
    expect(projects).toEqual([{ project: 'Web shop', organization: 'Grace Inc' }]);
    expect(errors).toEqual(['403 /auth/login']);
    await context.close();
  });

  it('resets a forgotten password from the e-mailed link; the old password stops working', async () => {
    const email = dashboard.people.member.email;
    const { page, errors, context } = await dashboard.open('/login', {
      allow: [...SIGNED_OUT, '401 /auth/login'],
    });
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'E-mail me a reset link' }).click();
    await page.getByRole('status').filter({ hasText: email }).waitFor();
    await expectAccessible(page);

    await page.goto(await mailedLink(dashboard.test.dataDirectory, dashboard.base, email, 'reset-password'));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Change password' }).click();
    // The browser's own check (minlength) stops it before the server: the field is invalid.
    expect(
      await page
        .getByLabel('New password', { exact: true })
        .evaluate((input: HTMLInputElement) => input.validity.valid),
    ).toBe(false);
    await page.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();

    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInWithForm(page, email, PASSWORD);
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('The e-mail address or the password is wrong');
    await signInWithForm(page, email, 'a brand new passphrase');
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('signs in with an e-mailed one-time link', async () => {
    const email = dashboard.people.admin.email;
    const { page, errors, context } = await dashboard.open('/login', { allow: SIGNED_OUT });
    await page.getByRole('link', { name: 'E-mail me a sign-in link' }).click();
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').filter({ hasText: email }).waitFor();
    await expectAccessible(page);
    await page.goto(await mailedLink(dashboard.test.dataDirectory, dashboard.base, email, 'magic-link'));
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(await page.getByText('Admin Person').count()).toBe(1);
    // The link works once.
    const again = await context.request.post('/auth/magic-link', {
      data: { token: new URL(page.url()).searchParams.get('token') ?? 'used' },
      headers: { origin: dashboard.base },
    });
    expect(again.status()).toBe(400);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('accepts an invitation as a new person, and as a person with an account who signs in first', async () => {
    const owner = await dashboard.open('/sessions', { as: dashboard.people.owner });
    await owner.page.getByRole('heading', { name: 'Sessions' }).waitFor();
    const { csrfToken } = (await (await owner.context.request.get('/v1/me')).json()) as { csrfToken: string };
    const orgId = dashboard.test.first.project.organization_id;
    async function invite(email: string) {
      const answer = await owner.context.request.post(`/v1/orgs/${orgId}/invitations`, {
        data: { email, role: 'member' },
        headers: { 'x-service-csrf': csrfToken, origin: dashboard.base },
      });
      expect(answer.status()).toBe(201);
    }

    await invite('linus@example.com');
    const link = await mailedLink(
      dashboard.test.dataDirectory,
      dashboard.base,
      'linus@example.com',
      'accept-invitation',
    );
    const newcomer = await dashboard.open(link, { allow: SIGNED_OUT });
    await newcomer.page.getByRole('heading', { name: 'Join the organization' }).waitFor();
    await expectAccessible(newcomer.page);
    await newcomer.page.getByLabel('Name').fill('Linus');
    await newcomer.page.getByLabel('Password').fill(PASSWORD);
    await newcomer.page.getByRole('button', { name: 'Create account and join' }).click();
    await newcomer.page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(new URL(newcomer.page.url()).searchParams.get('org')).toBe(orgId);
    expect(await newcomer.page.getByText('Linus', { exact: true }).count()).toBe(1);
    expect(newcomer.errors).toEqual([]);
    await newcomer.context.close();

    // grace@example.com has an account (the sign-up test): the page sends her to sign in first.
    await invite('grace@example.com');
    const second = await mailedLink(
      dashboard.test.dataDirectory,
      dashboard.base,
      'grace@example.com',
      'accept-invitation',
    );
    const existing = await dashboard.open(second, { allow: [...SIGNED_OUT, '409 /auth/invitations/accept'] });
    await existing.page.getByLabel('Password').fill(PASSWORD);
    await existing.page.getByRole('button', { name: 'Create account and join' }).click();
    await expect
      .poll(() => existing.page.getByRole('alert').textContent())
      .toBe('This address has an account already: sign in, then open the invitation again');
    await existing.page.getByRole('link', { name: 'Sign in to accept' }).click();
    await signInWithForm(existing.page, 'grace@example.com', PASSWORD);
    await existing.page.getByRole('button', { name: 'Join' }).click();
    await existing.page.getByRole('heading', { name: 'Sessions' }).waitFor();
    expect(new URL(existing.page.url()).searchParams.get('org')).toBe(orgId);
    const roles = await dashboard.test.database.database
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select(['users.email', 'organization_members.role'])
      .where('organization_members.organization_id', '=', orgId)
      .where('users.email', 'in', ['linus@example.com', 'grace@example.com'])
      .orderBy('users.email')
      .execute();
    expect(roles).toEqual([
      { email: 'grace@example.com', role: 'member' },
      { email: 'linus@example.com', role: 'member' },
    ]);
    expect(existing.errors.filter((failure) => !failure.startsWith('409 /auth/invitations/'))).toEqual([]);
    await existing.context.close();
    await owner.context.close();
  });
});
