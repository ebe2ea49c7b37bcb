import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { personOf, send, type TestPerson } from '../../../test/people.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { buildApp } from '../../app.ts';
import { type OrganizationPlan, organizationPlan } from './index.ts';
import { type LicensePayload, signLicense } from './license.ts';
import { storeLicense } from './license-store.ts';
import { planLimits } from './plans.ts';

// A self-hosted deployment (no billing provider): the license decides every organization's plan,
// GET /v1/license says where the deployment stands (and the log warns), checkout and portal answer
// that billing is not configured, and who may call what.

const issuer = generateKeyPairSync('ed25519');
const DAY = 86_400_000;

function license(overrides: Partial<LicensePayload> = {}): { text: string; license: LicensePayload } {
  const now = Date.now();
  const payload: LicensePayload = {
    id: 'lic_HTTP1',
    organization: 'Acme Calls GmbH',
    plan: 'business',
    issuedAt: new Date(now - 30 * DAY).toISOString(),
    expiresAt: new Date(now + 300 * DAY).toISOString(),
    ...overrides,
  };
  return { text: signLicense(payload, issuer.privateKey), license: payload };
}

describe.each(ENGINES)('billing without a provider, on %s', (engine) => {
  let test: TestApp;
  const logLines: string[] = [];
  let orgId: string;
  let owner: TestPerson;
  let admin: TestPerson;
  let member: TestPerson;
  let outsider: TestPerson;

  beforeAll(async () => {
    test = await createTestApp(
      engine,
      { logger: { level: 'warn', stream: { write: (line: string) => logLines.push(line) } } },
      {},
      { licensePublicKey: issuer.publicKey },
    );
    const database = test.database.database;
    orgId = test.first.project.organization_id;
    owner = await personOf(database, orgId, 'owner');
    admin = await personOf(database, orgId, 'admin');
    member = await personOf(database, orgId, 'member');
    outsider = await personOf(
      database,
      (await test.createProject('Elsewhere')).project.organization_id,
      'owner',
    );
  });
  afterAll(async () => {
    await test?.close();
  });
  beforeEach(async () => {
    await test.database.database.deleteFrom('deployment_license').execute();
    logLines.length = 0;
  });

  const get = (url: string, as: { headers: Record<string, string> }) => send(test, 'GET', url, as.headers);

  it('shows no license as the free plan, and an installed one with its plan and limits', async () => {
    const none = await get('/v1/license', member);
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({
      status: 'missing',
      plan: 'free',
      limits: planLimits('free'),
      graceDays: 14,
    });

    const installed = license();
    await storeLicense(test.database.database, installed, 'test');
    const answer = (await get('/v1/license', member)).json();
    expect(answer).toMatchObject({
      status: 'valid',
      plan: 'business',
      limits: planLimits('business'),
      license: { ...installed.license, graceEndsAt: expect.any(String) },
      installedAt: expect.any(String),
    });
    expect(answer.warning).toBeUndefined();
    expect(JSON.stringify(answer)).not.toContain(installed.text.split('.')[2]);

    // Every organization's plan comes from it.
    const billing = (await get(`/v1/orgs/${orgId}/billing`, owner)).json();
    expect(billing).toMatchObject({
      organizationId: orgId,
      provider: 'none',
      plan: 'business',
      source: 'license',
      limits: planLimits('business'),
      status: 'none',
    });
    expect(
      billing.plans.map((plan: { plan: string; purchasable: boolean }) => [plan.plan, plan.purchasable]),
    ).toEqual([
      ['free', false],
      ['team', false],
      ['business', false],
      ['enterprise', false],
    ]);
    expect(logLines).toEqual([]);
  });

  it('falls back to the free plan with a warning (answer and log) when the license expired or is forged', async () => {
    const expired = license({
      id: 'lic_OLD',
      issuedAt: new Date(Date.now() - 400 * DAY).toISOString(),
      expiresAt: new Date(Date.now() - 20 * DAY).toISOString(),
    });
    await storeLicense(test.database.database, expired, 'test');
    const answer = (await get('/v1/license', owner)).json();
    expect(answer).toMatchObject({
      status: 'expired',
      plan: 'free',
      limits: planLimits('free'),
      license: { id: 'lic_OLD' },
    });
    expect(answer.warning).toMatch(/lic_OLD expired on .* grace period ended .* free plan's limits apply/);
    expect((await get(`/v1/orgs/${orgId}/billing`, owner)).json()).toMatchObject({
      plan: 'free',
      source: 'free',
      warning: answer.warning,
    });
    expect(logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ level: 40, license: 'expired', msg: answer.warning }),
    );

    // Within the grace period the plan holds, with a warning.
    await storeLicense(
      test.database.database,
      license({ id: 'lic_LATE', expiresAt: new Date(Date.now() - 2 * DAY).toISOString() }),
      'test',
    );
    const late = (await get('/v1/license', owner)).json();
    expect(late).toMatchObject({ status: 'grace', plan: 'business' });
    expect(late.warning).toMatch(/lic_LATE expired on .* its business plan applies until/);

    // A row edited by hand (another plan, the old signature) verifies as forged.
    const genuine = license({ id: 'lic_EDIT', plan: 'team' });
    const [prefix, , signature] = genuine.text.split('.');
    const edited = `${prefix}.${Buffer.from(JSON.stringify({ ...genuine.license, plan: 'enterprise' })).toString('base64url')}.${signature}`;
    await test.database.database.updateTable('deployment_license').set({ document: edited }).execute();
    const forged = (await get('/v1/license', owner)).json();
    expect(forged).toMatchObject({ status: 'invalid', plan: 'free', limits: planLimits('free') });
    expect(forged.license).toBeUndefined();
    expect(forged.warning).toMatch(/not valid \(The license signature does not verify/);
  });

  it('warns in the log at start-up when the license is not in force', async () => {
    const old = {
      issuedAt: new Date(Date.now() - 400 * DAY).toISOString(),
      expiresAt: new Date(Date.now() - 40 * DAY).toISOString(),
    };
    await storeLicense(test.database.database, license({ id: 'lic_START', ...old }), 'test');
    // Another app on the same services, as a second server process starting.
    const lines: string[] = [];
    const { blobStore, masterKey } = test.processingDependencies;
    const second = await buildApp(
      {
        configuration: test.configuration,
        database: test.database,
        blobStore,
        masterKey,
        licensePublicKey: issuer.publicKey,
      },
      { logger: { level: 'warn', stream: { write: (line: string) => lines.push(line) } } },
    );
    await second.close();
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 40,
        license: 'expired',
        msg: expect.stringMatching(/^The license lic_START expired on/),
      }),
    ]);
  });

  it('answers checkout and portal with 409: billing is not configured; invoices are none', async () => {
    const checkout = await send(test, 'POST', `/v1/orgs/${orgId}/billing/checkout`, owner.headers, {
      plan: 'team',
    });
    expect(checkout.statusCode).toBe(409);
    expect(checkout.json()).toEqual({
      error: expect.stringMatching(
        /^Billing is not configured on this deployment: its plan comes from its license/,
      ),
      code: 'invalid',
    });
    const portal = await send(test, 'POST', `/v1/orgs/${orgId}/billing/portal`, owner.headers);
    expect(portal.statusCode).toBe(409);
    expect(portal.json().code).toBe('invalid');
    expect((await get(`/v1/orgs/${orgId}/billing/invoices`, admin)).json()).toEqual({ items: [] });
    const webhook = await test.app.inject({
      method: 'POST',
      url: '/v1/billing/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: '{}',
    });
    expect(webhook.statusCode).toBe(404);
    expect(webhook.json()).toEqual({
      error: 'Stripe billing is not configured on this deployment',
      code: 'not_found',
    });

    // Bad input first: 400 { error, code }, whatever the provider.
    for (const body of [{}, { plan: 'free' }, { plan: 'gold' }, { plan: 'team', extra: 1 }]) {
      const refused = await send(test, 'POST', `/v1/orgs/${orgId}/billing/checkout`, owner.headers, body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json()).toEqual({ error: expect.stringMatching(/^Invalid body/), code: 'invalid' });
    }
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=in_1;drop', 'other=1']) {
      const refused = await get(`/v1/orgs/${orgId}/billing/invoices?${query}`, admin);
      expect(refused.statusCode, query).toBe(400);
      expect(refused.json().code).toBe('invalid');
    }
    const nothing = await test.database.database.selectFrom('billing_accounts').selectAll().execute();
    expect(nothing).toEqual([]);
    const audited = await test.database.database
      .selectFrom('audit_log')
      .select('action')
      .where('action', 'like', 'billing.%')
      .execute();
    expect(audited).toEqual([]);
  });

  it('lets admins and owners read billing, owners alone buy, and hides the organization from others', async () => {
    expect((await get(`/v1/orgs/${orgId}/billing`, admin)).statusCode).toBe(200);
    expect((await get(`/v1/orgs/${orgId}/billing`, member)).statusCode).toBe(403);
    expect((await get(`/v1/orgs/${orgId}/billing/invoices`, member)).statusCode).toBe(403);
    expect((await get(`/v1/orgs/${orgId}/billing`, outsider)).statusCode).toBe(404);
    const byAdmin = await send(test, 'POST', `/v1/orgs/${orgId}/billing/checkout`, admin.headers, {
      plan: 'team',
    });
    expect(byAdmin.statusCode).toBe(403);
    expect(byAdmin.json()).toEqual({
      error: 'Your role (admin) does not allow this: billing takes an owner',
      code: 'unauthorized',
    });
    expect((await send(test, 'POST', `/v1/orgs/${orgId}/billing/portal`, admin.headers)).statusCode).toBe(
      403,
    );
    // A token acts for a project, not a person.
    expect((await send(test, 'GET', `/v1/orgs/${orgId}/billing`, test.first.headers)).statusCode).toBe(403);
    expect((await send(test, 'GET', '/v1/license', test.first.headers)).statusCode).toBe(403);
    expect((await send(test, 'GET', '/v1/license', {})).statusCode).toBe(401);
  });

  it("refuses a seat or a project beyond the plan's limits with 402, creating nothing", async () => {
    const database = test.database.database;
    const post = (url: string, body: unknown) => send(test, 'POST', url, admin.headers, body);
    const invitations = async () =>
      (
        await database
          .selectFrom('organization_invitations')
          .select('id')
          .where('organization_id', '=', orgId)
          .execute()
      ).length;
    // No license and no provider: no limits (the organization has 3 members and 1 project).
    const free = await post(`/v1/orgs/${orgId}/invitations`, { email: 'seat-four@example.com' });
    expect(free.statusCode, free.body).toBe(201);
    await database.deleteFrom('organization_invitations').where('organization_id', '=', orgId).execute();
    // A license of 4 seats and 2 projects: one invitation and one project fit, the next do not.
    await storeLicense(
      database,
      license({ limits: { ...planLimits('team'), seats: 4, projects: 2 } }),
      'test',
    );
    expect((await post(`/v1/orgs/${orgId}/invitations`, { email: 'seat-four@example.com' })).statusCode).toBe(
      201,
    );
    const fifth = await post(`/v1/orgs/${orgId}/invitations`, { email: 'seat-five@example.com' });
    expect(fifth.statusCode).toBe(402);
    expect(fifth.json()).toEqual({ error: expect.stringContaining('allows 4 seats'), code: 'invalid' });
    expect(await invitations()).toBe(1);
    const second = await post(`/v1/orgs/${orgId}/projects`, { name: 'Second' });
    expect(second.statusCode, second.body).toBe(201);
    const third = await post(`/v1/orgs/${orgId}/projects`, { name: 'Third' });
    expect(third.statusCode).toBe(402);
    expect(third.json()).toEqual({ error: expect.stringContaining('allows 2 projects'), code: 'invalid' });
    expect(
      await database
        .selectFrom('projects')
        .select('name')
        .where('organization_id', '=', orgId)
        .where('name', '=', 'Third')
        .execute(),
    ).toEqual([]);
    // A deleted project frees its place.
    const deleted = await send(test, 'DELETE', `/v1/projects/${second.json().id}`, owner.headers);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect((await post(`/v1/orgs/${orgId}/projects`, { name: 'Third' })).statusCode).toBe(201);
    await database.deleteFrom('organization_invitations').where('organization_id', '=', orgId).execute();
  });

  it("reads an organization's plan for the usage module: subscription, else license, else free", async () => {
    const database = test.database.database;
    const lookup = (now = new Date()): Promise<OrganizationPlan> =>
      organizationPlan(database, orgId, { publicKey: issuer.publicKey, now });
    expect(await lookup()).toEqual({
      organizationId: orgId,
      plan: 'free',
      limits: planLimits('free'),
      source: 'free',
    });
    await storeLicense(database, license({ plan: 'team' }), 'test');
    expect(await lookup()).toEqual({
      organizationId: orgId,
      plan: 'team',
      limits: planLimits('team'),
      source: 'license',
    });
    // With the shipped key the test's license is forged: free, with the warning.
    expect(await organizationPlan(database, orgId)).toMatchObject({
      plan: 'free',
      source: 'free',
      warning: expect.any(String),
    });
    await database
      .insertInto('billing_accounts')
      .values({
        organization_id: orgId,
        provider: 'stripe',
        customer_id: 'cus_1',
        subscription_id: 'sub_1',
        plan: 'business',
        status: 'trialing',
      })
      .execute();
    try {
      expect(await lookup()).toEqual({
        organizationId: orgId,
        plan: 'business',
        limits: planLimits('business'),
        source: 'subscription',
      });
      await database
        .updateTable('billing_accounts')
        .set({ status: 'incomplete_expired' })
        .where('organization_id', '=', orgId)
        .execute();
      expect(await lookup()).toMatchObject({ plan: 'team', source: 'license' });
      // Another organization's subscription is not this one's.
      const other = (await test.createProject('Other')).project.organization_id;
      await database
        .updateTable('billing_accounts')
        .set({ status: 'active' })
        .where('organization_id', '=', orgId)
        .execute();
      expect(await organizationPlan(database, other, { publicKey: issuer.publicKey })).toMatchObject({
        plan: 'team',
        source: 'license',
      });
    } finally {
      await database.deleteFrom('billing_accounts').where('organization_id', '=', orgId).execute();
    }
  });
});
