import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowser, startOidcIdp, type TestOidcIdp } from '../../../test/sso-oidc-idp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createInvitation } from '../orgs/repository.ts';
import {
  addPerson,
  call,
  expectStatus,
  freePort,
  IDP_CERTIFICATE,
  passwordLogin,
  verifyDomain,
} from './sso.fixture.ts';

// Organization SSO over real HTTP: the server on a port, a real OpenID provider (oidc-provider)
// beside it, and a browser-like client with a cookie jar following every redirect. Connections'
// CRUD with roles (secrets never returned, every change audited and announced as
// security.sso_changed), the lookup, the full OpenID sign-in with just-in-time membership,
// refusals (another key, a replayed callback, another domain) audited, the require-SSO gate and
// auto-join by verified domain.

describe.each(ENGINES)('organization SSO on %s', (engine) => {
  let test: TestApp;
  let idp: TestOidcIdp;
  let base: string;
  let orgId: string;
  const domain = `corp-${engine}.example`;

  beforeAll(async () => {
    idp = await startOidcIdp();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    test = await createTestApp(engine, { logger: false }, { SVC_PUBLIC_URL: base });
    await test.app.listen({ host: '127.0.0.1', port });
    orgId = test.first.project.organization_id;
    await verifyDomain(test.database.database, domain, orgId);
  }, 60_000);
  afterAll(async () => {
    await test?.close();
    await idp?.close();
  });

  async function signedIn(email: string, role: 'owner' | 'admin' | 'member' | 'viewer') {
    await addPerson(test, email, role);
    const browser = createBrowser();
    const login = await passwordLogin(browser, base, email);
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    return { browser, csrf: login.body.csrfToken as string };
  }

  async function auditActions(): Promise<Array<{ action: string; details: Record<string, unknown> }>> {
    return test.database.database
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('organization_id', '=', orgId)
      .where('action', 'like', 'sso.%')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** An OIDC connection whose client is registered at the IdP for its redirect URI. */
  async function oidcConnection(
    admin: { browser: ReturnType<typeof createBrowser>; csrf: string },
    name: string,
    defaultRole = 'viewer',
  ) {
    const created = await call(admin.browser, base, admin.csrf, 'POST', `/v1/orgs/${orgId}/sso`, {
      type: 'oidc',
      name,
      issuer: idp.issuer,
      clientId: 'to-be-registered',
      clientSecret: 'placeholder-secret',
      defaultRole,
    });
    expectStatus(created, 201);
    const client = await idp.registerClient(created.json.oidc.redirectUri);
    const patched = await call(
      admin.browser,
      base,
      admin.csrf,
      'PATCH',
      `/v1/orgs/${orgId}/sso/${created.json.id}`,
      client,
    );
    expectStatus(patched, 200);
    return { ...patched.json, clientSecret: client.clientSecret } as {
      id: string;
      startUrl: string;
      clientSecret: string;
    };
  }

  it('connections: admins manage them, members may not; secrets never answered; audited and announced', async () => {
    // A webhook channel with a rule for security.sso_changed (webhooks to 127.0.0.1 are allowed in tests).
    const channel = (
      await test.app.inject({
        method: 'POST',
        url: '/v1/notifications/channels',
        headers: test.first.headers,
        payload: { type: 'webhook', name: 'security', url: 'http://127.0.0.1:9/hooks' },
      })
    ).json().channel as { id: string };
    const rule = await test.app.inject({
      method: 'POST',
      url: '/v1/notifications/rules',
      headers: test.first.headers,
      payload: {
        name: 'sso',
        channelIds: [channel.id],
        source: { type: 'security', events: ['security.sso_changed'] },
      },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const admin = await signedIn(`admin@crud-${engine}.example`, 'admin');
    const member = await signedIn(`member@crud-${engine}.example`, 'member');
    const connection = await oidcConnection(admin, 'Corp OIDC');
    expect(connection).toMatchObject({
      type: 'oidc',
      name: 'Corp OIDC',
      defaultRole: 'viewer',
      enabled: true,
      startUrl: `${base}/auth/sso/${connection.id}/start`,
      oidc: { issuer: idp.issuer, redirectUri: `${base}/auth/sso/${connection.id}/callback` },
    });
    const saml = await call(admin.browser, base, admin.csrf, 'POST', `/v1/orgs/${orgId}/sso`, {
      type: 'saml',
      name: 'Corp SAML',
      entityId: 'https://idp.example.com/metadata',
      ssoUrl: 'https://idp.example.com/sso',
      certificates: [IDP_CERTIFICATE],
      enabled: false,
    });
    expectStatus(saml, 201);
    expect(saml.json.saml).toMatchObject({
      entityId: 'https://idp.example.com/metadata',
      certificates: [{ subject: 'CN=idp.example.com' }],
      serviceProvider: {
        entityId: `${base}/auth/sso/${saml.json.id}/metadata`,
        acsUrl: `${base}/auth/sso/${saml.json.id}/acs`,
      },
    });

    const list = await call(admin.browser, base, admin.csrf, 'GET', `/v1/orgs/${orgId}/sso`);
    expectStatus(list, 200);
    expect(list.json.items.map((item: { name: string }) => item.name)).toEqual(
      expect.arrayContaining(['Corp OIDC', 'Corp SAML']),
    );
    expect(JSON.stringify(list.json)).not.toContain(connection.clientSecret);
    const stored = await test.database.database
      .selectFrom('sso_connections')
      .select('oidc_client_secret_sealed')
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.oidc_client_secret_sealed as Uint8Array).toString('latin1')).not.toContain(
      connection.clientSecret,
    );

    // Bad input: 400 and nothing written.
    const before = (await call(admin.browser, base, admin.csrf, 'GET', `/v1/orgs/${orgId}/sso`)).json.items
      .length;
    for (const body of [
      {
        type: 'saml',
        name: 'x',
        entityId: 'e',
        ssoUrl: 'https://x.example/sso',
        certificates: ['not a certificate'],
      },
      { type: 'saml', name: 'x', entityId: 'e' },
      { type: 'oidc', name: 'x', issuer: 'ftp://idp.example', clientId: 'c', clientSecret: 's' },
      { type: 'oidc', name: 'x', issuer: 'http://10.1.2.3', clientId: 'c', clientSecret: 's' },
      { type: 'ldap', name: 'x' },
    ])
      expectStatus(await call(admin.browser, base, admin.csrf, 'POST', `/v1/orgs/${orgId}/sso`, body), 400);
    expect(
      (await call(admin.browser, base, admin.csrf, 'GET', `/v1/orgs/${orgId}/sso`)).json.items,
    ).toHaveLength(before);
    expectStatus(
      await call(admin.browser, base, admin.csrf, 'PATCH', `/v1/orgs/${orgId}/sso/${saml.json.id}`, {
        clientSecret: 'x',
      }),
      400,
    );

    // A member may not read or change them.
    expectStatus(await call(member.browser, base, member.csrf, 'GET', `/v1/orgs/${orgId}/sso`), 403);
    expectStatus(
      await call(member.browser, base, member.csrf, 'PATCH', `/v1/orgs/${orgId}/sso/${connection.id}`, {
        enabled: false,
      }),
      403,
    );
    expectStatus(
      await call(member.browser, base, member.csrf, 'DELETE', `/v1/orgs/${orgId}/sso/${saml.json.id}`),
      403,
    );

    const renamed = await call(
      admin.browser,
      base,
      admin.csrf,
      'PATCH',
      `/v1/orgs/${orgId}/sso/${saml.json.id}`,
      {
        name: 'Corp SAML (old)',
      },
    );
    expectStatus(renamed, 200);
    expectStatus(
      await call(admin.browser, base, admin.csrf, 'DELETE', `/v1/orgs/${orgId}/sso/${saml.json.id}`),
      204,
    );
    expectStatus(
      await call(admin.browser, base, admin.csrf, 'GET', `/v1/orgs/${orgId}/sso/${saml.json.id}`),
      404,
    );

    const actions = (await auditActions()).map((entry) => entry.action);
    expect(actions).toEqual(
      expect.arrayContaining(['sso.connection_created', 'sso.connection_updated', 'sso.connection_deleted']),
    );
    expect(JSON.stringify(await auditActions())).not.toContain(connection.clientSecret);
    // security.sso_changed: in the project's inbox for every change.
    const events = await test.database.database
      .selectFrom('notification_events')
      .select(['type', 'title', 'payload'])
      .where('project_id', '=', test.first.project.id)
      .where('type', '=', 'security.sso_changed')
      .execute();
    expect(events.length).toBeGreaterThanOrEqual(5);
    const summaries = events.map(
      (event) => (JSON.parse(event.payload) as { data: { summary: string } }).data.summary,
    );
    expect(summaries).toContainEqual(
      expect.stringContaining('deleted the SAML connection "Corp SAML (old)"'),
    );
    expect(events.map((event) => event.payload).join('\n')).not.toContain(connection.clientSecret);
    // … and queued to the rule's webhook channel, one delivery per change.
    const deliveries = await test.database.database
      .selectFrom('deliveries')
      .select('event_id')
      .where('channel_id', '=', channel.id)
      .execute();
    expect(deliveries.map((delivery) => delivery.event_id).sort()).toEqual(
      (
        await test.database.database
          .selectFrom('notification_events')
          .select('id')
          .where('project_id', '=', test.first.project.id)
          .where('type', '=', 'security.sso_changed')
          .execute()
      )
        .map((event) => event.id)
        .sort(),
    );
  });

  it('signs a person in through OpenID Connect: lookup, IdP, callback, session; just-in-time membership', async () => {
    const admin = await signedIn(`admin@flow-${engine}.example`, 'admin');
    const connection = await oidcConnection(admin, 'Flow OIDC', 'viewer');
    const browser = createBrowser();
    const email = `grace@${domain}`;

    const lookup = await browser.navigate(`${base}/auth/sso/lookup?email=${encodeURIComponent(email)}`);
    const answer = (await lookup.response.json()) as { connectionId: string; startUrl: string };
    // The first enabled connection serves the domain (maybe one of the earlier test's).
    expect(answer.connectionId).toMatch(/^sso_/);
    expect(
      await (
        await browser.navigate(`${base}/auth/sso/lookup?email=nobody@elsewhere-${engine}.example`)
      ).response.json(),
    ).toEqual({ connectionId: null });
    // Rate limited per client address: 60 lookups per 15 minutes, then 429 with Retry-After.
    const lookups = [];
    for (let index = 0; index < 61; index += 1)
      lookups.push(
        await test.app.inject({
          url: `/auth/sso/lookup?email=x${index}@${domain}`,
          remoteAddress: engine === 'pglite' ? '10.77.0.1' : '10.77.0.2',
        }),
      );
    expect(lookups.slice(0, 60).every((response) => response.statusCode === 200)).toBe(true);
    expect(lookups[60]?.statusCode).toBe(429);
    expect(Number(lookups[60]?.headers['retry-after'])).toBeGreaterThan(0);

    idp.signInAs({ sub: `grace-${engine}`, email, name: 'Grace Hopper' });
    const flow = await browser.navigate(connection.startUrl);
    expect(flow.url).toBe(`${base}/`);
    expect(flow.steps.some((step) => step.startsWith(idp.issuer))).toBe(true);
    const callbackUrl = flow.steps.find((step) => step.includes('/callback?')) as string;
    expect(browser.cookies(base).has('service_session')).toBe(true);
    const me = await browser.navigate(`${base}/v1/me`);
    const meBody = (await me.response.json()) as { user: { email: string; emailVerifiedAt?: string } };
    expect(meBody.user.email).toBe(email);
    expect(meBody.user.emailVerifiedAt).toBeDefined();
    const member = await test.database.database
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select('organization_members.role')
      .where('users.email', '=', email)
      .where('organization_members.organization_id', '=', orgId)
      .executeTakeFirstOrThrow();
    expect(member.role).toBe('viewer');
    const actions = await auditActions();
    expect(actions.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['sso.member_joined', 'sso.signed_in']),
    );

    // The same callback again (a replayed code and state): the flow was used, refused and audited.
    const replay = await browser.navigate(callbackUrl);
    expect(replay.url).toBe(`http://127.0.0.1:${new URL(base).port}/login?error=sso&reason=flow`);
    // Signing in again finds the person by subject, even when the IdP sends no address.
    const again = createBrowser();
    idp.signInAs({ sub: `grace-${engine}` });
    expect((await again.navigate(connection.startUrl)).url).toBe(`${base}/`);
    expect(again.cookies(base).has('service_session')).toBe(true);
  });

  it('refuses and audits: an ID token from another key, an address outside the verified domains, a callback without its browser', async () => {
    const admin = await signedIn(`admin@refuse-${engine}.example`, 'admin');
    const refusals = async () =>
      (await auditActions())
        .filter((entry) => entry.action === 'sso.sign_in_refused')
        .map((entry) => entry.details);

    // Another domain: the IdP may not assert addresses its organization does not own.
    const connection = await oidcConnection(admin, 'Refusing OIDC');
    const browser = createBrowser();
    idp.signInAs({ sub: `mallory-${engine}`, email: `ceo@other-${engine}.example` });
    expect((await browser.navigate(connection.startUrl)).url).toBe(`${base}/login?error=sso&reason=domain`);
    expect(browser.cookies(base).has('service_session')).toBe(false);
    expect(await refusals()).toContainEqual(expect.objectContaining({ reason: 'domain' }));

    // The callback in another browser than the one that started: no flow cookie.
    const started = createBrowser();
    idp.signInAs({ sub: `eve-${engine}`, email: `eve@${domain}` });
    const run = await started.navigate(connection.startUrl);
    expect(run.url).toBe(`${base}/`);
    const stranger = createBrowser();
    const callbackUrl = run.steps.find((step) => step.includes('/callback?')) as string;
    expect((await stranger.navigate(callbackUrl)).url).toBe(`${base}/login?error=sso&reason=flow`);

    // An ID token signed by a key the issuer does not publish (a new connection: keys fetched anew).
    idp.publishOtherKeys = true;
    try {
      const forged = await oidcConnection(admin, 'Keys OIDC');
      const victim = createBrowser();
      idp.signInAs({ sub: `frank-${engine}`, email: `frank@${domain}` });
      expect((await victim.navigate(forged.startUrl)).url).toBe(`${base}/login?error=sso&reason=id_token`);
      expect(victim.cookies(base).has('service_session')).toBe(false);
    } finally {
      idp.publishOtherKeys = false;
    }
    expect(await refusals()).toContainEqual(expect.objectContaining({ reason: 'id_token' }));
    const frank = await test.database.database
      .selectFrom('users')
      .select('id')
      .where('email', '=', `frank@${domain}`)
      .executeTakeFirst();
    expect(frank).toBeUndefined();
  });

  it('require SSO: members of the verified domain are refused other ways in, owners keep theirs; auto-join', async () => {
    const owner = await signedIn(`owner@${domain}`, 'owner');
    await addPerson(test, `ada@${domain}`, 'member');
    // Auto-join: a person with a verified address in the domain, no member yet, joins at sign-in.
    await addPerson(test, `newcomer@${domain}`);
    const newcomer = createBrowser();
    expect((await passwordLogin(newcomer, base, `newcomer@${domain}`)).status).toBe(200);
    const joined = await test.database.database
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select('organization_members.role')
      .where('users.email', '=', `newcomer@${domain}`)
      .where('organization_id', '=', orgId)
      .executeTakeFirst();
    // The first enabled connection's default role.
    expect(joined?.role).toBe('viewer');
    const autoJoin = await test.database.database
      .selectFrom('audit_log')
      .select('details')
      .where('organization_id', '=', orgId)
      .where('action', '=', 'member.joined')
      .execute();
    expect(autoJoin.map((entry) => entry.details)).toContainEqual(
      expect.objectContaining({ via: 'verified_domain' }),
    );
    // Someone of the domain with a live invitation joins with the invitation's role, taking it.
    const ownerId = (
      await test.database.database
        .selectFrom('users')
        .select('id')
        .where('email', '=', `owner@${domain}`)
        .executeTakeFirstOrThrow()
    ).id;
    const invitee = await addPerson(test, `invitee@${domain}`);
    const pending = await createInvitation(test.database.database, {
      organizationId: orgId,
      email: invitee.email,
      role: 'member',
      invitedBy: ownerId,
    });
    expect((await passwordLogin(createBrowser(), base, invitee.email)).status).toBe(200);
    const inviteeRole = await test.database.database
      .selectFrom('organization_members')
      .select('role')
      .where('user_id', '=', invitee.id)
      .where('organization_id', '=', orgId)
      .executeTakeFirst();
    expect(inviteeRole?.role).toBe('member');
    expect(
      (
        await test.database.database
          .selectFrom('organization_invitations')
          .select('accepted_by')
          .where('id', '=', pending.invitation.id)
          .executeTakeFirstOrThrow()
      ).accepted_by,
    ).toBe(invitee.id);

    const settings = await call(owner.browser, base, owner.csrf, 'PATCH', `/v1/orgs/${orgId}/sso/settings`, {
      ssoRequired: true,
    });
    expectStatus(settings, 200);
    expect(settings.json.ssoRequired).toBe(true);
    try {
      const refused = await passwordLogin(createBrowser(), base, `ada@${domain}`);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/single sign-on \(SSO\)/);
      expect((await passwordLogin(createBrowser(), base, `owner@${domain}`)).status).toBe(200);
      // People of other domains are not concerned.
      await addPerson(test, `outsider@elsewhere-${engine}.example`, 'member');
      expect(
        (await passwordLogin(createBrowser(), base, `outsider@elsewhere-${engine}.example`)).status,
      ).toBe(200);
      // Through SSO, ada signs in.
      const sso = createBrowser();
      idp.signInAs({ sub: `ada-${engine}`, email: `ada@${domain}` });
      const lookup = (await (
        await sso.navigate(`${base}/auth/sso/lookup?email=ada@${domain}`)
      ).response.json()) as { startUrl: string };
      expect((await sso.navigate(lookup.startUrl)).url).toBe(`${base}/`);
      expect(sso.cookies(base).has('service_session')).toBe(true);

      // An invitation to someone of the domain: no account is made with a password (403, nothing
      // written); signing in with SSO makes the account and takes the invitation, with its role
      // (admin, not the connection's default viewer) on the seat it held.
      const inviter = await test.database.database
        .selectFrom('users')
        .select('id')
        .where('email', '=', `owner@${domain}`)
        .executeTakeFirstOrThrow();
      const invitedEmail = `invited@${domain}`;
      const { invitation, token } = await createInvitation(test.database.database, {
        organizationId: orgId,
        email: invitedEmail,
        role: 'admin',
        invitedBy: inviter.id,
      });
      const accept = await call(createBrowser(), base, '', 'POST', `/auth/invitations/${token}/accept`, {
        password: 'a long enough password',
      });
      expectStatus(accept, 403);
      expect(accept.json.error).toMatch(/single sign-on \(SSO\)/);
      const account = () =>
        test.database.database
          .selectFrom('users')
          .select('id')
          .where('email', '=', invitedEmail)
          .executeTakeFirst();
      expect(await account()).toBeUndefined();
      const invitedBrowser = createBrowser();
      idp.signInAs({ sub: `invited-${engine}`, email: invitedEmail });
      expect((await invitedBrowser.navigate(lookup.startUrl)).url).toBe(`${base}/`);
      const invitedUser = await account();
      const membership = await test.database.database
        .selectFrom('organization_members')
        .select('role')
        .where('organization_id', '=', orgId)
        .where('user_id', '=', invitedUser?.id ?? '')
        .executeTakeFirst();
      expect(membership?.role).toBe('admin');
      const taken = await test.database.database
        .selectFrom('organization_invitations')
        .select(['accepted_at', 'accepted_by'])
        .where('id', '=', invitation.id)
        .executeTakeFirstOrThrow();
      expect(taken.accepted_by).toBe(invitedUser?.id);
      expect((await auditActions()).filter((entry) => entry.action === 'sso.member_joined')).toContainEqual(
        expect.objectContaining({
          details: expect.objectContaining({ role: 'admin', invitationId: invitation.id }),
        }),
      );
    } finally {
      expectStatus(
        await call(owner.browser, base, owner.csrf, 'PATCH', `/v1/orgs/${orgId}/sso/settings`, {
          ssoRequired: false,
        }),
        200,
      );
    }
    expect((await passwordLogin(createBrowser(), base, `ada@${domain}`)).status).toBe(200);
    expect((await auditActions()).map((entry) => entry.action)).toContain('sso.required_changed');
  });
});
