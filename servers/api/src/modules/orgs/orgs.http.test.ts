import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, type Json } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { accountsClient, linkToken, PASSWORD } from '../accounts/accounts.fixture.ts';

// Organizations over real HTTP (the whole app), with invitations going through a real SMTP server
// in this process, on both engines: people, roles, invitations, projects, tokens and the audit.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('organizations on %s', (engine) => {
  let test: TestApp;
  const client = accountsClient(
    () => test,
    () => smtp,
    engine === 'pglite' ? '10.31' : '10.32',
  );
  const { send, signedIn, sessionCookie, nextAddress } = client;
  type Person = Awaited<ReturnType<typeof signedIn>>;

  beforeAll(async () => {
    test = await createTestApp(engine, { logger: false }, { SVC_SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await test?.close();
  });

  const as = (person: Person, headers?: Record<string, string>) => ({
    cookie: person.cookie,
    csrf: person.csrf,
    ...(headers === undefined ? {} : { headers }),
  });

  async function organization(owner: Person, name: string): Promise<string> {
    const created = expectJson(await send('POST', '/v1/orgs', { name }, as(owner)), 201);
    expect(created).toMatchObject({ name, role: 'owner' });
    return created.id as string;
  }

  async function project(owner: Person, orgId: string, name = 'Web'): Promise<Json> {
    return expectJson(await send('POST', `/v1/orgs/${orgId}/projects`, { name }, as(owner)), 201);
  }

  /** Invites by e-mail and returns the link's token from the message received. */
  async function invite(admin: Person, orgId: string, email: string, role: string): Promise<string> {
    const invitation = expectJson(
      await send('POST', `/v1/orgs/${orgId}/invitations`, { email, role }, as(admin)),
      201,
    );
    expect(invitation).toMatchObject({ email, role, expired: false });
    const mail = await smtp.nextMessage(email);
    expect(mail.subject).toMatch(/^You are invited to /);
    return linkToken(mail, test.configuration.appUrl, 'accept-invitation');
  }

  /** A new person accepting an invitation: their session. */
  async function acceptAsNew(token: string, name: string): Promise<Person> {
    const response = await send(
      'POST',
      `/auth/invitations/${token}/accept`,
      { name, password: PASSWORD },
      { address: nextAddress() },
    );
    const body = expectJson(response, 200);
    return { cookie: sessionCookie(response) as string, csrf: body.csrfToken as string, user: body.user };
  }

  it('creates an organization whose creator is its owner; a non-member sees nothing of it', async () => {
    const owner = await signedIn(`owner-a-${engine}@example.com`);
    const stranger = await signedIn(`stranger-a-${engine}@example.com`);
    const orgId = await organization(owner, 'Acme');

    const mine = expectJson(await send('GET', '/v1/orgs', undefined, as(owner)), 200);
    expect(mine.items).toEqual([expect.objectContaining({ id: orgId, name: 'Acme', role: 'owner' })]);
    expect(expectJson(await send('GET', '/v1/orgs', undefined, as(stranger)), 200).items).toEqual([]);
    for (const url of [`/v1/orgs/${orgId}`, `/v1/orgs/${orgId}/members`, `/v1/orgs/${orgId}/projects`]) {
      expect(expectJson(await send('GET', url, undefined, as(stranger)), 404).error).toBe(
        `No organization ${orgId}`,
      );
    }
    const renamed = await send('PATCH', `/v1/orgs/${orgId}`, { name: 'Taken' }, as(stranger));
    expect(renamed.statusCode).toBe(404);
    expect(expectJson(await send('GET', `/v1/orgs/${orgId}`, undefined, as(owner)), 200).name).toBe('Acme');

    const renamedByOwner = await send('PATCH', `/v1/orgs/${orgId}`, { name: 'Acme Inc' }, as(owner));
    expect(expectJson(renamedByOwner, 200)).toMatchObject({ id: orgId, name: 'Acme Inc', role: 'owner' });
    // Without the CSRF token a cookie changes nothing.
    const noCsrf = await send('PATCH', `/v1/orgs/${orgId}`, { name: 'Forged' }, { cookie: owner.cookie });
    expect(noCsrf.statusCode).toBe(403);
    expect(expectJson(await send('GET', `/v1/orgs/${orgId}`, undefined, as(owner)), 200).name).toBe(
      'Acme Inc',
    );
    // An API token acts for a project, not a person.
    const token = await test.app.inject({ url: '/v1/orgs', headers: test.first.headers });
    expect(expectJson(token, 403).error).toMatch(/^An API token acts for a project/);
  });

  it('invites by e-mail: a new person joins with the role, the link works once; a member accepts signed in', async () => {
    const owner = await signedIn(`owner-b-${engine}@example.com`);
    const orgId = await organization(owner, 'Beta');
    const viewerEmail = `viewer-b-${engine}@example.com`;
    const token = await invite(owner, orgId, viewerEmail, 'viewer');

    const pending = expectJson(await send('GET', `/v1/orgs/${orgId}/invitations`, undefined, as(owner)), 200);
    expect(pending.items.map((item: Json) => item.email)).toEqual([viewerEmail]);

    const viewer = await acceptAsNew(token, 'Vera');
    expect(viewer.user).toMatchObject({ email: viewerEmail, name: 'Vera' });
    expect(viewer.user.emailVerifiedAt).toEqual(expect.any(String));
    const orgs = expectJson(await send('GET', '/v1/orgs', undefined, as(viewer)), 200);
    expect(orgs.items).toEqual([expect.objectContaining({ id: orgId, role: 'viewer' })]);
    const again = await send('POST', `/auth/invitations/${token}/accept`, { password: PASSWORD });
    expect(expectJson(again, 400).error).toMatch(/^This invitation does not work/);
    expect(
      expectJson(await send('GET', `/v1/orgs/${orgId}/invitations`, undefined, as(owner)), 200).items,
    ).toEqual([]);

    // Someone with an account accepts signed in, with the invited address only.
    const memberEmail = `member-b-${engine}@example.com`;
    const member = await signedIn(memberEmail);
    const memberToken = await invite(owner, orgId, memberEmail, 'member');
    const withoutPassword = await send('POST', `/auth/invitations/${memberToken}/accept`, {
      password: PASSWORD,
    });
    expect(expectJson(withoutPassword, 409).error).toBe(
      'This address has an account: sign in, then accept the invitation',
    );
    const other = await signedIn(`other-b-${engine}@example.com`);
    const wrongPerson = await send('POST', `/auth/invitations/${memberToken}/accept`, undefined, as(other));
    expect(expectJson(wrongPerson, 403).error).toMatch(/^This invitation is for another e-mail address/);
    const noCsrf = await send('POST', `/auth/invitations/${memberToken}/accept`, undefined, {
      cookie: member.cookie,
    });
    expect(noCsrf.statusCode).toBe(403);
    const accepted = expectJson(
      await send('POST', `/auth/invitations/${memberToken}/accept`, undefined, as(member)),
      200,
    );
    expect(accepted.organization).toMatchObject({ id: orgId, role: 'member' });

    const members = expectJson(await send('GET', `/v1/orgs/${orgId}/members`, undefined, as(viewer)), 200);
    expect(members.items.map((item: Json) => [item.email, item.role]).sort()).toEqual(
      [
        [`owner-b-${engine}@example.com`, 'owner'],
        [viewerEmail, 'viewer'],
        [memberEmail, 'member'],
      ].sort(),
    );

    // A revoked invitation's link stops working; an expired one too.
    const revokedToken = await invite(owner, orgId, `revoked-b-${engine}@example.com`, 'member');
    const [revoked] = expectJson(
      await send('GET', `/v1/orgs/${orgId}/invitations`, undefined, as(owner)),
      200,
    ).items;
    expect(
      await send('DELETE', `/v1/orgs/${orgId}/invitations/${revoked.id}`, undefined, as(owner)),
    ).toMatchObject({
      statusCode: 204,
    });
    const afterRevoke = await send('POST', `/auth/invitations/${revokedToken}/accept`, {
      password: PASSWORD,
    });
    expect(afterRevoke.statusCode).toBe(400);
    const expiringToken = await invite(owner, orgId, `late-b-${engine}@example.com`, 'member');
    await sql`update organization_invitations set expires_at = now() - interval '1 second' where organization_id = ${orgId} and accepted_at is null and revoked_at is null`.execute(
      test.database.database,
    );
    const late = await send('POST', `/auth/invitations/${expiringToken}/accept`, { password: PASSWORD });
    expect(late.statusCode).toBe(400);
    expect(
      await test.database.database
        .selectFrom('users')
        .select('id')
        .where('email', '=', `late-b-${engine}@example.com`)
        .execute(),
    ).toEqual([]);
  });

  it('lets roles do what the README says: only owners make owners, the last owner stays', async () => {
    const owner = await signedIn(`owner-c-${engine}@example.com`);
    const orgId = await organization(owner, 'Gamma');
    const admin = await acceptAsNew(
      await invite(owner, orgId, `admin-c-${engine}@example.com`, 'admin'),
      'Ada',
    );
    const viewer = await acceptAsNew(
      await invite(owner, orgId, `viewer-c-${engine}@example.com`, 'viewer'),
      'Vic',
    );
    const ownerId = owner.user.id as string;
    const viewerId = viewer.user.id as string;
    const adminId = admin.user.id as string;

    // A viewer administers nothing.
    expect((await send('PATCH', `/v1/orgs/${orgId}`, { name: 'V' }, as(viewer))).statusCode).toBe(403);
    expect(
      (await send('POST', `/v1/orgs/${orgId}/invitations`, { email: 'x@example.com' }, as(viewer)))
        .statusCode,
    ).toBe(403);
    expect(
      (await send('PATCH', `/v1/orgs/${orgId}/members/${viewerId}`, { role: 'admin' }, as(viewer)))
        .statusCode,
    ).toBe(403);
    expect((await send('GET', `/v1/orgs/${orgId}/audit`, undefined, as(viewer))).statusCode).toBe(403);

    // An admin changes members' roles, but makes no owner and touches no owner.
    const promoted = await send(
      'PATCH',
      `/v1/orgs/${orgId}/members/${viewerId}`,
      { role: 'member' },
      as(admin),
    );
    expect(expectJson(promoted, 200)).toMatchObject({ userId: viewerId, role: 'member' });
    const toOwner = await send(
      'PATCH',
      `/v1/orgs/${orgId}/members/${viewerId}`,
      { role: 'owner' },
      as(admin),
    );
    expect(expectJson(toOwner, 403).error).toBe('Only an owner makes another member an owner');
    const demoteOwner = await send(
      'PATCH',
      `/v1/orgs/${orgId}/members/${ownerId}`,
      { role: 'admin' },
      as(admin),
    );
    expect(expectJson(demoteOwner, 403).error).toBe("Only an owner changes an owner's role");
    const removeOwner = await send('DELETE', `/v1/orgs/${orgId}/members/${ownerId}`, undefined, as(admin));
    expect(removeOwner.statusCode).toBe(403);

    // The last owner can neither be demoted nor leave.
    const lastDemote = await send(
      'PATCH',
      `/v1/orgs/${orgId}/members/${ownerId}`,
      { role: 'admin' },
      as(owner),
    );
    expect(expectJson(lastDemote, 409).error).toMatch(/keeps at least one owner/);
    const lastLeave = await send('DELETE', `/v1/orgs/${orgId}/members/${ownerId}`, undefined, as(owner));
    expect(lastLeave.statusCode).toBe(409);
    // With a second owner, the first may leave.
    const second = await send('PATCH', `/v1/orgs/${orgId}/members/${adminId}`, { role: 'owner' }, as(owner));
    expect(expectJson(second, 200).role).toBe('owner');
    expect(
      (await send('DELETE', `/v1/orgs/${orgId}/members/${ownerId}`, undefined, as(owner))).statusCode,
    ).toBe(204);
    expect(expectJson(await send('GET', '/v1/orgs', undefined, as(owner)), 200).items).toEqual([]);

    // A member leaves by their own id; an admin (now owner) removes one.
    expect(
      (await send('DELETE', `/v1/orgs/${orgId}/members/${viewerId}`, undefined, as(viewer))).statusCode,
    ).toBe(204);
    expect(
      (await send('DELETE', `/v1/orgs/${orgId}/members/${viewerId}`, undefined, as(admin))).statusCode,
    ).toBe(404);

    const audit = expectJson(await send('GET', `/v1/orgs/${orgId}/audit`, undefined, as(admin)), 200);
    const actions = audit.items.map((entry: Json) => entry.action);
    for (const action of [
      'organization.created',
      'invitation.created',
      'member.joined',
      'member.role_changed',
      'member.left',
    ])
      expect(actions).toContain(action);
    // Members' own security events reach the organizations they are in.
    const adminSignIn = audit.items.find(
      (entry: Json) => entry.action === 'user.signed_in' && entry.actor.id === adminId,
    );
    expect(adminSignIn).toMatchObject({
      details: { method: 'invitation' },
      target: { type: 'user', id: adminId },
    });
    const roleChange = audit.items.find(
      (entry: Json) => entry.action === 'member.role_changed' && entry.target.id === adminId,
    );
    expect(roleChange).toMatchObject({
      actor: { type: 'user', id: ownerId, label: `owner-c-${engine}@example.com` },
      details: { from: 'admin', to: 'owner' },
    });
    expect(roleChange.ip).toEqual(expect.any(String));
    // Filters and the cursor.
    const onlyLeft = expectJson(
      await send('GET', `/v1/orgs/${orgId}/audit?action=member.left`, undefined, as(admin)),
      200,
    );
    expect(onlyLeft.items.map((entry: Json) => entry.target.id).sort()).toEqual([ownerId, viewerId].sort());
    const first = expectJson(await send('GET', `/v1/orgs/${orgId}/audit?limit=2`, undefined, as(admin)), 200);
    const next = expectJson(
      await send('GET', `/v1/orgs/${orgId}/audit?limit=100&cursor=${first.nextCursor}`, undefined, as(admin)),
      200,
    );
    expect([...first.items, ...next.items].map((entry: Json) => entry.id)).toEqual(
      audit.items.map((entry: Json) => entry.id),
    );
  });

  it("gives members their role's scopes in the organization's projects, and nothing in another's", async () => {
    const owner = await signedIn(`owner-d-${engine}@example.com`);
    const orgId = await organization(owner, 'Delta');
    const web = await project(owner, orgId);
    const viewer = await acceptAsNew(
      await invite(owner, orgId, `viewer-d-${engine}@example.com`, 'viewer'),
      'V',
    );
    const outsider = await signedIn(`outsider-d-${engine}@example.com`);
    await organization(outsider, 'Other');
    const inWeb = { 'x-service-project': web.id as string };

    expect(expectJson(await send('GET', '/v1/sessions', undefined, as(viewer, inWeb)), 200).items).toEqual(
      [],
    );
    expect(expectJson(await send('GET', `/v1/projects/${web.id}`, undefined, as(viewer)), 200).name).toBe(
      'Web',
    );
    const rename = await send('PATCH', `/v1/projects/${web.id}`, { name: 'Mine' }, as(viewer));
    expect(expectJson(rename, 403).error).toBe(
      'Your role (viewer) does not allow this: it needs settings:write',
    );
    const channel = await send(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'x', url: 'https://example.com/hook' },
      as(viewer, inWeb),
    );
    expect(channel.statusCode).toBe(403);
    expect(expectJson(await send('GET', `/v1/projects/${web.id}`, undefined, as(owner)), 200).name).toBe(
      'Web',
    );

    // Another organization's person: not a member of the project, whatever route.
    for (const url of ['/v1/sessions', '/v1/calls', '/v1/issues', '/v1/inbox', '/v1/projects/current'])
      expect((await send('GET', url, undefined, as(outsider, inWeb))).statusCode, url).toBe(403);
    expect((await send('GET', `/v1/projects/${web.id}`, undefined, as(outsider))).statusCode).toBe(404);
    expect((await send('DELETE', `/v1/projects/${web.id}`, undefined, as(outsider))).statusCode).toBe(404);
    // A token of another project does not reach this one by id.
    const foreign = await test.app.inject({ url: `/v1/projects/${web.id}`, headers: test.first.headers });
    expect(foreign.statusCode).toBe(404);
  });

  it('creates scoped, expiring tokens; revoked or expired ones answer 401; security.token_created is recorded', async () => {
    const owner = await signedIn(`owner-e-${engine}@example.com`);
    const orgId = await organization(owner, 'Epsilon');
    const web = await project(owner, orgId);
    const created = expectJson(
      await send(
        'POST',
        `/v1/orgs/${orgId}/tokens`,
        { name: 'CI reader', projectId: web.id, scopes: ['sessions:read'], expiresInDays: 30 },
        as(owner),
      ),
      201,
    );
    expect(created).toMatchObject({ name: 'CI reader', projectId: web.id, scopes: ['sessions:read'] });
    expect(created.token).toMatch(/^svc_/);
    const bearer = { authorization: `Bearer ${created.token}` };
    expect((await test.app.inject({ url: '/v1/sessions', headers: bearer })).statusCode).toBe(200);
    const calls = await test.app.inject({ url: '/v1/calls', headers: bearer });
    expect(expectJson(calls, 403).error).toBe('This API token lacks the calls:read scope');
    const listed = expectJson(await send('GET', `/v1/orgs/${orgId}/tokens`, undefined, as(owner)), 200);
    expect(listed.items).toEqual([expect.objectContaining({ id: created.id, name: 'CI reader' })]);
    expect(JSON.stringify(listed)).not.toContain(created.token);

    // Past its expiry: 401.
    await test.database.database
      .updateTable('api_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', created.id)
      .execute();
    expect((await test.app.inject({ url: '/v1/sessions', headers: bearer })).statusCode).toBe(401);

    // Revoked: 401, and gone from the list.
    const second = expectJson(
      await send(
        'POST',
        `/v1/orgs/${orgId}/tokens`,
        { name: 'Full', projectId: web.id, scopes: ['sessions:read', 'calls:read'] },
        as(owner),
      ),
      201,
    );
    const secondBearer = { authorization: `Bearer ${second.token}` };
    expect((await test.app.inject({ url: '/v1/calls', headers: secondBearer })).statusCode).toBe(200);
    expect(
      (await send('DELETE', `/v1/orgs/${orgId}/tokens/${second.id}`, undefined, as(owner))).statusCode,
    ).toBe(204);
    const revoked = await test.app.inject({ url: '/v1/calls', headers: secondBearer });
    expect(expectJson(revoked, 401).error).toMatch(/^The API token is not valid/);
    expect(
      (await send('DELETE', `/v1/orgs/${orgId}/tokens/${second.id}`, undefined, as(owner))).statusCode,
    ).toBe(404);

    // A project of another organization cannot get a token here.
    const elsewhere = await send(
      'POST',
      `/v1/orgs/${orgId}/tokens`,
      { name: 'x', projectId: test.first.project.id, scopes: ['sessions:read'] },
      as(owner),
    );
    expect(elsewhere.statusCode).toBe(400);
    // security.token_created reached the project's inbox, once per token, without the secret.
    const inbox = expectJson(
      await send('GET', '/v1/inbox', undefined, as(owner, { 'x-service-project': web.id as string })),
      200,
    );
    const announced = inbox.items.filter((item: Json) => item.type === 'security.token_created');
    expect(announced.map((item: Json) => item.title).sort()).toEqual([
      'API token "CI reader" created',
      'API token "Full" created',
    ]);
    expect(announced[0].summary).toContain(`owner-e-${engine}@example.com created the API token`);
    expect(JSON.stringify(inbox)).not.toContain(created.token);
    const audit = expectJson(
      await send('GET', `/v1/orgs/${orgId}/audit?action=token.created`, undefined, as(owner)),
      200,
    );
    expect(audit.items).toHaveLength(2);
    expect(JSON.stringify(audit)).not.toContain(created.token);
  });

  it('rotates a project key with a grace period, and a deleted project ingests and answers nothing', async () => {
    const owner = await signedIn(`owner-f-${engine}@example.com`);
    const orgId = await organization(owner, 'Zeta');
    const web = await project(owner, orgId);
    const token = expectJson(
      await send(
        'POST',
        `/v1/orgs/${orgId}/tokens`,
        { name: 'all', projectId: web.id, scopes: ['sessions:read', 'settings:read', 'settings:write'] },
        as(owner),
      ),
      201,
    ).token as string;
    const config = (key: string) => test.app.inject({ url: `/v1/config?key=${key}` });
    expect((await config(web.projectKey)).statusCode).toBe(200);

    const rotated = expectJson(
      await send('POST', `/v1/projects/${web.id}/rotate-key`, undefined, as(owner)),
      200,
    );
    expect(rotated.projectKey).not.toBe(web.projectKey);
    expect(rotated.previousProjectKey).toMatchObject({ key: web.projectKey });
    expect((await config(web.projectKey)).statusCode).toBe(200);
    expect((await config(rotated.projectKey)).statusCode).toBe(200);

    // A token cannot delete its project; the owner can.
    const byToken = await test.app.inject({
      method: 'DELETE',
      url: `/v1/projects/${web.id}`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(byToken.statusCode).toBe(403);
    expect((await send('DELETE', `/v1/projects/${web.id}`, undefined, as(owner))).statusCode).toBe(204);
    expect((await config(rotated.projectKey)).statusCode).not.toBe(200);
    expect((await config(web.projectKey)).statusCode).not.toBe(200);
    const afterDelete = await test.app.inject({
      url: '/v1/sessions',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(afterDelete.statusCode).toBe(401);
    expect(
      expectJson(await send('GET', `/v1/orgs/${orgId}/projects`, undefined, as(owner)), 200).items,
    ).toEqual([]);
    expect((await send('GET', `/v1/projects/${web.id}`, undefined, as(owner))).statusCode).toBe(404);
  });
});
