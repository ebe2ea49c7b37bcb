import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyDomain } from '../../api/src/modules/sso/sso.fixture.ts';
import { startOidcIdp, type TestOidcIdp } from '../../api/test/sso-oidc-idp.ts';
import { type Dashboard, expectAccessible, startDashboard } from './harness.ts';

// Organization SSO through the dashboard in Chromium, against a real OpenID provider
// (oidc-provider) beside the server: the owner adds an OpenID connection on the Single sign-on
// settings page; a person of the verified domain signs in with "Sign in with SSO" (e-mail,
// lookup, the provider, back to the dashboard signed in, a member with the default role); a
// refused sign-in comes back to the login page saying why.

describe('organization SSO in the dashboard', () => {
  let dashboard: Dashboard;
  let idp: TestOidcIdp;
  const domain = 'sso-dashboard.example';

  beforeAll(async () => {
    idp = await startOidcIdp();
    dashboard = await startDashboard();
    await verifyDomain(dashboard.test, domain);
  }, 120_000);
  afterAll(async () => {
    await dashboard?.close();
    await idp?.close();
  });

  it('an owner adds an OpenID connection; a person signs in with SSO and joins', async () => {
    // The client exists at the provider first; its redirect URI is set once the connection has one.
    const client = await idp.registerClient(`${dashboard.base}/placeholder`);
    const { page, context, errors } = await dashboard.open('/settings/sso', { as: dashboard.people.owner });
    await page.getByRole('heading', { name: 'Single sign-on', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'New SSO connection' });
    await form.getByLabel('Name').fill('Corp IdP');
    await form.getByLabel('New members join as').selectOption('viewer');
    await form.getByLabel('Issuer URL').fill(idp.issuer);
    await form.getByLabel('Client ID').fill(client.clientId);
    await form.getByLabel('Client secret').fill(client.clientSecret);
    await form.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('status').filter({ hasText: 'Added Corp IdP.' }).waitFor();
    const item = page.getByTestId('sso-connection');
    await item.getByRole('heading', { name: /Corp IdP/ }).waitFor();
    const redirectUri = (await item.locator('code').first().textContent()) ?? '';
    expect(redirectUri).toMatch(new RegExp(`^${dashboard.base}/auth/sso/sso_\\w+/callback$`));
    expect(await page.content()).not.toContain(client.clientSecret);
    await idp.setRedirectUri(client.clientId, redirectUri);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();

    // A person of the domain, not signed in: the login page, "Sign in with SSO", the provider.
    const person = await dashboard.open('/login');
    await person.page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await person.page.getByRole('heading', { name: 'Sign in with SSO' }).waitFor();
    await expectAccessible(person.page);
    idp.signInAs({ sub: 'lovelace', email: `ada@${domain}`, name: 'Ada Lovelace' });
    await person.page.getByLabel('Work e-mail address').fill(`ada@${domain}`);
    await person.page.getByRole('button', { name: 'Continue' }).click();
    await person.page.waitForURL((url) => url.origin === dashboard.base && !url.pathname.startsWith('/sso'));
    const me = await person.context.request.get('/v1/me');
    expect(me.status()).toBe(200);
    expect(((await me.json()) as { user: { email: string } }).user.email).toBe(`ada@${domain}`);
    await person.page.getByRole('navigation').first().waitFor();
    const member = await dashboard.test.database.database
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select('organization_members.role')
      .where('users.email', '=', `ada@${domain}`)
      .executeTakeFirst();
    expect(member?.role).toBe('viewer');
    expect(person.errors).toEqual([]);
    await person.context.close();

    // An address outside the verified domains: back on the login page, told why, no session.
    const outsider = await dashboard.open('/sso', { allow: ['401 /v1/me'] });
    idp.signInAs({ sub: 'mallory', email: 'mallory@elsewhere.example' });
    const lookup = await outsider.context.request.get(`/auth/sso/lookup?email=ada@${domain}`);
    const { startUrl } = (await lookup.json()) as { startUrl: string };
    await outsider.page.goto(startUrl);
    await outsider.page.waitForURL(/\/login\?error=sso&reason=domain/);
    await outsider.page
      .getByText(/Single sign-on failed: your identity provider sent an address outside/)
      .waitFor();
    expect((await outsider.context.request.get('/v1/me')).status()).toBe(401);
    await outsider.context.close();
  }, 120_000);
});
