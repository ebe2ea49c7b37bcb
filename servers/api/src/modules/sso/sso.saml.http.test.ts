import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authnRequestOf, createTestIdp, OTHER_KEY_PAIR } from '../../../test/saml-idp.ts';
import { createBrowser } from '../../../test/sso-oidc-idp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { parseXml, serializeXml, type XmlElement } from './saml/xml.ts';
import { addPerson, call, expectStatus, freePort, passwordLogin, verifyDomain } from './sso.fixture.ts';

// SAML sign-in over HTTP: a connection made from the samlify IdP's metadata, the SP metadata for
// its admin, `/start` redirecting with an AuthnRequest, the IdP's response posted as a form to
// `/acs` (cross-site: another Origin), a session and just-in-time membership; a replayed response
// is refused and audited with its reason, and gives no session; so is each known attack.

describe.each(ENGINES)('SAML SSO over HTTP on %s', (engine) => {
  let test: TestApp;
  let base: string;
  let orgId: string;
  const domain = `saml-${engine}.example`;
  const idp = createTestIdp();

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    test = await createTestApp(engine, { logger: false }, { SVC_PUBLIC_URL: base });
    await test.app.listen({ host: '127.0.0.1', port });
    orgId = test.first.project.organization_id;
    await verifyDomain(test.database.database, domain, orgId);
  }, 60_000);
  afterAll(async () => {
    await test?.close();
  });

  it('signs in through the ACS with a signed response; a replay is refused and audited', async () => {
    await addPerson(test, `admin@${domain}`, 'admin');
    const admin = createBrowser();
    const csrf = (await passwordLogin(admin, base, `admin@${domain}`)).body.csrfToken as string;
    const created = await call(admin, base, csrf, 'POST', `/v1/orgs/${orgId}/sso`, {
      type: 'saml',
      name: 'Corp SAML',
      metadataXml: idp.metadata(),
      defaultRole: 'member',
    });
    expectStatus(created, 201);
    const connection = created.json as {
      id: string;
      startUrl: string;
      saml: { entityId: string; serviceProvider: { entityId: string; acsUrl: string; metadataUrl: string } };
    };
    expect(connection.saml.entityId).toBe(idp.entityId);
    const sp = connection.saml.serviceProvider;
    const metadata = await fetch(sp.metadataUrl);
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${sp.entityId}"`);
    expect(xml).toContain(`Location="${sp.acsUrl}"`);

    // The person's browser: lookup, start (a redirect to the IdP with an AuthnRequest).
    const browser = createBrowser();
    const email = `lin@${domain}`;
    const lookup = (await (
      await browser.navigate(`${base}/auth/sso/lookup?email=${email}`)
    ).response.json()) as {
      connectionId: string;
    };
    expect(lookup.connectionId).toBe(connection.id);
    const start = await fetch(connection.startUrl, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const redirect = start.headers.get('location') as string;
    expect(redirect.startsWith(idp.ssoUrl)).toBe(true);
    const request = authnRequestOf(redirect);
    expect(request.acsUrl).toBe(sp.acsUrl);

    // The IdP's page posts the response to the ACS, from its own origin.
    const samlResponse = await idp.loginResponse({
      sp,
      requestId: request.id,
      nameId: email,
      email,
      name: 'Lin',
    });
    const post = (response: string) =>
      browser.navigate(sp.acsUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.test' },
        body: new URLSearchParams({ SAMLResponse: response, RelayState: '' }).toString(),
      });
    const signedIn = await post(samlResponse);
    expect(signedIn.url).toBe(`${base}/`);
    expect(browser.cookies(base).has('service_session')).toBe(true);
    const me = (await (await browser.navigate(`${base}/v1/me`)).response.json()) as {
      user: { email: string };
    };
    expect(me.user.email).toBe(email);
    const member = await test.database.database
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select('organization_members.role')
      .where('users.email', '=', email)
      .where('organization_id', '=', orgId)
      .executeTakeFirst();
    expect(member?.role).toBe('member');

    // The same response again, from another browser: the assertion was used.
    const attacker = createBrowser();
    const replayed = await attacker.navigate(sp.acsUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
    });
    expect(replayed.url).toMatch(/\/login\?error=sso&reason=(replay|in_response_to)$/);
    expect(attacker.cookies(base).has('service_session')).toBe(false);
    const refused = await test.database.database
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('organization_id', '=', orgId)
      .where('action', '=', 'sso.sign_in_refused')
      .execute();
    expect(refused.map((entry) => entry.details)).toContainEqual(
      expect.objectContaining({ type: 'saml', reason: expect.stringMatching(/^(replay|in_response_to)$/) }),
    );
    const signedInEntries = await test.database.database
      .selectFrom('audit_log')
      .select('action')
      .where('organization_id', '=', orgId)
      .where('action', 'in', ['sso.signed_in', 'sso.member_joined'])
      .execute();
    expect(signedInEntries.map((entry) => entry.action).sort()).toEqual([
      'sso.member_joined',
      'sso.signed_in',
    ]);
  });
  it('refuses each known attack at the ACS, audits it with its reason, and starts no session', async () => {
    await addPerson(test, `owner2@${domain}`, 'admin');
    const admin = createBrowser();
    const csrf = (await passwordLogin(admin, base, `owner2@${domain}`)).body.csrfToken as string;
    const created = await call(admin, base, csrf, 'POST', `/v1/orgs/${orgId}/sso`, {
      type: 'saml',
      name: 'Corp SAML (attacks)',
      metadataXml: idp.metadata(),
    });
    expectStatus(created, 201);
    const connection = created.json as {
      id: string;
      startUrl: string;
      saml: { serviceProvider: { entityId: string; acsUrl: string } };
    };
    const sp = connection.saml.serviceProvider;
    /** A fresh AuthnRequest of this server's, as `/start` makes it. */
    const requestId = async () => {
      const start = await fetch(connection.startUrl, { redirect: 'manual' });
      return authnRequestOf(start.headers.get('location') as string).id;
    };
    const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
    const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
    const xmlOf = (response: string) =>
      parseXml(Buffer.from(response, 'base64').toString('utf8'), (message) => new Error(message));

    // Signature wrapping: the IdP signed eve's assertion; a forged unsigned one naming the admin
    // is put first, the signed one after it.
    const signed = xmlOf(
      await idp.loginResponse({ sp, requestId: await requestId(), nameId: `eve@${domain}` }),
    );
    const original = signed.getElementsByTagNameNS(ASSERTION, 'Assertion')[0] as XmlElement;
    const forged = original.cloneNode(true) as XmlElement;
    forged.setAttribute('ID', '_forged');
    const forgedSignature = forged.getElementsByTagNameNS(DSIG, 'Signature')[0];
    forgedSignature?.parentNode?.removeChild(forgedSignature);
    (forged.getElementsByTagNameNS(ASSERTION, 'NameID')[0] as XmlElement).textContent = `admin@${domain}`;
    (signed.documentElement as XmlElement).insertBefore(forged, original);
    const wrapped = Buffer.from(serializeXml(signed)).toString('base64');

    // A comment inside the NameID: read whole, it names another domain than the verified one.
    const plain = Buffer.from(
      await idp.loginResponse({ sp, requestId: await requestId(), nameId: `admin@${domain}.evil.test` }),
      'base64',
    ).toString('utf8');
    const commented = Buffer.from(
      plain.replace(`>admin@${domain}.evil.test<`, `>admin@${domain}<!---->.evil.test<`),
    ).toString('base64');

    const attacks: Array<{ name: string; response: string; reason: RegExp }> = [
      { name: 'signature wrapping', response: wrapped, reason: /^signature$/ },
      { name: 'a comment inside the NameID', response: commented, reason: /^domain$/ },
      {
        name: 'signed by another certificate',
        response: await idp.loginResponse({
          sp,
          requestId: await requestId(),
          nameId: `admin@${domain}`,
          keyPair: OTHER_KEY_PAIR,
        }),
        reason: /^signature$/,
      },
      {
        name: 'another audience',
        response: await idp.loginResponse({
          sp,
          requestId: await requestId(),
          nameId: `admin@${domain}`,
          audience: 'https://other-service.example/saml',
        }),
        reason: /^audience$/,
      },
      {
        name: 'unsolicited',
        response: await idp.loginResponse({ sp, requestId: null, nameId: `admin@${domain}` }),
        reason: /^in_response_to$/,
      },
    ];
    for (const attack of attacks) {
      const before = new Date(Date.now() - 1000);
      const attacker = createBrowser();
      const answer = await attacker.navigate(sp.acsUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.test' },
        body: new URLSearchParams({ SAMLResponse: attack.response }).toString(),
      });
      expect(answer.url, attack.name).toMatch(/\/login\?error=sso&reason=[a-z_]+$/);
      expect(attacker.cookies(base).has('service_session'), attack.name).toBe(false);
      const audited = await test.database.database
        .selectFrom('audit_log')
        .select(['details', 'target_id'])
        .where('organization_id', '=', orgId)
        .where('action', '=', 'sso.sign_in_refused')
        .where('created_at', '>=', before)
        .execute();
      expect(
        audited.map((entry) => ({
          target: entry.target_id,
          reason: (entry.details as { reason: string }).reason,
        })),
        attack.name,
      ).toContainEqual({ target: connection.id, reason: expect.stringMatching(attack.reason) });
    }
    // Nobody signed in as the admin through any of them.
    const signedIn = await test.database.database
      .selectFrom('audit_log')
      .select('target_id')
      .where('organization_id', '=', orgId)
      .where('action', '=', 'sso.signed_in')
      .execute();
    expect(signedIn.filter((entry) => entry.target_id === connection.id)).toEqual([]);
  });
});
