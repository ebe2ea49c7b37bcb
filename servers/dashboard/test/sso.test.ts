import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyDomain } from '../../api/src/modules/sso/sso.fixture.ts';
import { authnRequestOf, createTestIdp } from '../../api/test/saml-idp.ts';
import { startOidcIdp, type TestOidcIdp } from '../../api/test/sso-oidc-idp.ts';
import { type Dashboard, expectAccessible, startDashboard } from './harness.ts';

// Organization SSO through the dashboard in Chromium, against a real OpenID provider
// (oidc-provider) beside the server: the owner adds an OpenID connection on the Single sign-on
// settings page; a person of the verified domain signs in with "Sign in with SSO" (e-mail,
// lookup, the provider, back to the dashboard signed in, a member with the default role); a
// refused sign-in comes back to the login page saying why. SAML: the IdP's page (another site,
// served by Playwright's routing) posts the signed response to the ACS; the SameSite=Lax session
// cookie that answer sets is stored and carried by the 303 to the dashboard.

describe('organization SSO in the dashboard', () => {
  let dashboard: Dashboard;
  let idp: TestOidcIdp;
  const domain = 'sso-dashboard.example';

  beforeAll(async () => {
    idp = await startOidcIdp();
    dashboard = await startDashboard();
    await verifyDomain(
      dashboard.test.database.database,
      domain,
      dashboard.test.first.project.organization_id,
    );
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
  it('SAML: the IdP posts from another site; the session cookie of that answer holds', async () => {
    // The IdP's sign-in page on `localhost`, another site than the dashboard's 127.0.0.1: it answers
    // the AuthnRequest with an auto-posting form, as IdPs do.
    let answer: (redirectUrl: string) => Promise<string> = async () => '';
    const idpServer = createServer((request, response) => {
      void answer(`http://localhost${request.url ?? '/'}`).then((html) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(html);
      });
    });
    await new Promise<void>((resolve) => idpServer.listen(0, '127.0.0.1', resolve));
    const idpPort = (idpServer.address() as AddressInfo).port;
    const samlIdp = createTestIdp({ ssoUrl: `http://localhost:${idpPort}/sso` });
    const { page, context, errors } = await dashboard.open('/settings/sso', { as: dashboard.people.owner });
    const form = page.getByRole('form', { name: 'New SSO connection' });
    await form.getByLabel('Type').selectOption('saml');
    await form.getByLabel('Name').fill('Corp SAML');
    await form.getByLabel('Identity provider metadata (XML)').fill(samlIdp.metadata());
    await form.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('status').filter({ hasText: 'Added Corp SAML.' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
    const connections = await dashboard.test.database.database
      .selectFrom('sso_connections')
      .select(['id', 'type'])
      .orderBy('created_at')
      .execute();
    const saml = connections.find((connection) => connection.type === 'saml');
    if (saml === undefined) throw new Error('no SAML connection');
    // Only one enabled connection serves the domain: the OpenID one goes off for this test.
    await dashboard.test.database.database
      .updateTable('sso_connections')
      .set({ enabled: false })
      .where('type', '=', 'oidc')
      .execute();
    const sp = {
      entityId: `${dashboard.base}/auth/sso/${saml.id}/metadata`,
      acsUrl: `${dashboard.base}/auth/sso/${saml.id}/acs`,
    };

    const person = await dashboard.open('/sso');
    answer = async (redirectUrl) => {
      const request = authnRequestOf(redirectUrl);
      const response = await samlIdp.loginResponse({
        sp,
        requestId: request.id,
        nameId: `grace@${domain}`,
        email: `grace@${domain}`,
      });
      return `<!doctype html><html lang="en"><title>IdP</title><form method="post" action="${sp.acsUrl}"><input type="hidden" name="SAMLResponse" value="${response}"><input type="hidden" name="RelayState" value=""></form><script>document.forms[0].submit()</script></html>`;
    };
    await person.page.getByLabel('Work e-mail address').fill(`grace@${domain}`);
    await person.page.getByRole('button', { name: 'Continue' }).click();
    await person.page.waitForURL((url) => url.origin === dashboard.base && !url.pathname.startsWith('/sso'));
    const cookies = await person.context.cookies(dashboard.base);
    expect(cookies.find((cookie) => cookie.name === 'service_session')?.sameSite).toBe('Lax');
    const me = await person.context.request.get('/v1/me');
    expect(((await me.json()) as { user: { email: string } }).user.email).toBe(`grace@${domain}`);
    expect(person.errors).toEqual([]);
    await person.context.close();
    await new Promise<void>((resolve) => idpServer.close(() => resolve()));
  }, 120_000);
});
