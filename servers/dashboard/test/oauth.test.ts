import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcProvider, type TestOidcProvider } from '../../api/src/modules/oauth/oauth.fixture.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';

// Sign-in with Google from the dashboard's sign-in page, in Chromium, against a real OpenID
// provider (oidc-provider in this process, configured as Google through SVC_OAUTH_GOOGLE_ISSUER):
// the button, the provider's login form, back on the dashboard signed in, the linked account in
// the profile.

let google: TestOidcProvider;
let dashboard: Dashboard;

beforeAll(async () => {
  google = await startOidcProvider();
  dashboard = await startDashboard({
    environment: {
      SVC_OAUTH_GOOGLE_CLIENT_ID: google.clientId,
      SVC_OAUTH_GOOGLE_CLIENT_SECRET: google.clientSecret,
      SVC_OAUTH_GOOGLE_ISSUER: google.issuer,
    },
  });
  google.registerRedirectUri(`${dashboard.base}/auth/oauth/google/callback`);
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
  await google?.close();
});

describe('sign-in with Google', () => {
  it('shows the button, goes through the provider and comes back signed in, with the account linked', async () => {
    const member = dashboard.people.member;
    google.people.set('member-at-google', {
      sub: 'member-at-google',
      email: member.email,
      email_verified: true,
    });
    const { page, errors } = await dashboard.open('/sessions', { allow: ['401 /v1/me'] });
    await page.waitForURL(/\/login\?next=%2Fsessions$/);
    // The provider buttons come from /auth/oauth/providers, after the form: wait for them.
    const button = page.getByRole('link', { name: 'Continue with Google' });
    await button.waitFor();
    await expectAccessible(page);
    await screenshot(page, 'oauth-sign-in');

    await button.click();
    // The provider's own login form (oidc-provider's, which accepts any login and password).
    await page.waitForURL(`${google.issuer}/**`);
    await page.locator('input[name="login"]').fill('member-at-google');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();

    await page.waitForURL(`${dashboard.base}/sessions`);
    await page.getByRole('heading', { name: 'Sessions' }).first().waitFor();

    await page.goto('/settings/profile');
    const linked = page.getByRole('region', { name: 'Linked accounts' });
    await linked.getByRole('cell', { name: 'Google', exact: true }).waitFor();
    await expect(linked.getByRole('cell', { name: member.email }).isVisible()).resolves.toBe(true);
    await expectAccessible(page);
    await linked.scrollIntoViewIfNeeded();
    await screenshot(page, 'oauth-linked-accounts');
    // The member has a password of their own: the identity may go.
    await linked.getByRole('button', { name: 'Unlink Google' }).click();
    await linked.getByRole('status').filter({ hasText: 'Your Google account is unlinked.' }).waitFor();
    await linked.getByText('No Google, Microsoft or GitHub account is linked.', { exact: false }).waitFor();
    expect(errors).toEqual([]);
  }, 120_000);

  it('shows why a sign-in was refused', async () => {
    google.people.set('stranger', { sub: 'stranger', email: 'someone@example.com', email_verified: false });
    const { page, errors } = await dashboard.open('/login', { allow: ['401 /v1/me'] });
    await page.getByRole('link', { name: 'Continue with Google' }).click();
    await page.waitForURL(`${google.issuer}/**`);
    await page.locator('input[name="login"]').fill('stranger');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL(/\/login\?error=/);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/no account was made/);
    await expectAccessible(page);
    await screenshot(page, 'oauth-refused');
    expect(errors).toEqual([]);
  }, 120_000);
});
