import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliStore } from '../../../test/cli-store.ts';
import { expectJson } from '../../../test/http.ts';
import { captureIo } from '../../../test/process-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { runCli } from '../../cli.ts';
import { grantBreakGlass } from './index.ts';
import { listMembers } from './repository.ts';

// Break-glass access: `svc break-glass` run for real gives an operator temporary access to an
// organization's data, audited, announced to its projects (`security.break_glass`, in every
// inbox) and mailed to its owners; the access works through the API while in force and not a
// moment after; members, owners' role and long grants are refused.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(ENGINES)('svc break-glass on %s', (engine) => {
  it('grants, audits, announces to every project and mails the owners; refuses what it must', async () => {
    const { environment, look } = await cliStore(engine, cleanups);
    const created = captureIo();
    expect(
      await runCli(['create-project', '--name', 'Web', '--json'], environment, created),
      created.err,
    ).toBe(0);
    const { orgId, projectId } = JSON.parse(created.out) as { orgId: string; projectId: string };
    const owner = captureIo();
    const ownerArgs = ['create-user', '--email', 'boss@example.com', '--org', orgId, '--role', 'owner'];
    expect(
      await runCli([...ownerArgs, '--password', 'correct horse battery staple'], environment, owner),
    ).toBe(0);

    const io = captureIo();
    const args = [
      'break-glass',
      '--org',
      orgId,
      '--email',
      'ops@example.com',
      '--reason',
      'ticket 4411: replay will not load',
    ];
    expect(await runCli([...args, '--hours', '2', '--json'], environment, io), io.err).toBe(0);
    const grant = JSON.parse(io.out);
    expect(grant).toMatchObject({
      organization: { id: orgId },
      email: 'ops@example.com',
      role: 'viewer',
      reason: 'ticket 4411: replay will not load',
      grantedBy: 'svc break-glass',
      signInLink: expect.stringMatching(/magic-link\?token=/),
    });
    const hours = (Date.parse(grant.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(1.9);
    expect(hours).toBeLessThanOrEqual(2);

    const seen = await look(async (database) => ({
      audit: await database
        .selectFrom('audit_log')
        .select(['action', 'actor_type', 'details'])
        .where('organization_id', '=', orgId)
        .where('action', '=', 'security.break_glass')
        .execute(),
      events: await database
        .selectFrom('notification_events')
        .select(['project_id', 'type', 'severity', 'inbox', 'payload'])
        .where('type', '=', 'security.break_glass')
        .execute(),
    }));
    expect(seen.audit).toEqual([
      {
        action: 'security.break_glass',
        actor_type: 'system',
        details: expect.objectContaining({ email: 'ops@example.com', role: 'viewer', hours: 2 }),
      },
    ]);
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]).toMatchObject({ project_id: projectId, severity: 'high', inbox: true });
    const payload = seen.events[0]?.payload as unknown;
    const envelope = (typeof payload === 'string' ? JSON.parse(payload) : payload) as {
      data: { summary: string };
    };
    expect(envelope.data.summary).toMatch(/gave ops@example.com viewer access .* Reason: ticket 4411/);
    // The owner was told by mail (the data directory's .eml files without SMTP).
    const mailDirectory = join(environment.SVC_DATA_DIR as string, 'mail');
    const mails = await Promise.all(
      (await readdir(mailDirectory)).map((file) => readFile(join(mailDirectory, file), 'utf8')),
    );
    const told = mails.filter((mail) => /Break-glass access to/.test(mail));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/To: boss@example\.com/);

    // Refused: a member for good, an owner's role, too long, no reason.
    for (const [extra, status, message] of [
      [['--email', 'boss@example.com'], 1, /member of .* already/],
      [['--role', 'owner'], 2, /--role must be one of viewer, member, admin/],
      [['--hours', '48'], 1, /at most 24/],
    ] as const) {
      const refused = captureIo();
      const base = args.filter(
        (arg, index) => !(extra[0] === '--email' && (arg === '--email' || args[index - 1] === '--email')),
      );
      expect(await runCli([...base, ...extra], environment, refused)).toBe(status);
      expect(refused.err).toMatch(message);
    }
    const noReason = captureIo();
    expect(
      await runCli(['break-glass', '--org', orgId, '--email', 'x@example.com'], environment, noReason),
    ).toBe(2);
    expect(noReason.err).toMatch(/--reason is required/);
    // Eight CLI runs, each opening the store: PGlite takes a few seconds a run on a busy machine.
  }, 180_000);
});

describe.each(ENGINES)('break-glass access through the API on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  it('reads the data while in force, changes nothing as a viewer, and ends at its expiry', async () => {
    const { project } = test.first;
    const orgId = project.organization_id;
    const granted = await grantBreakGlass(
      test.database.database,
      test.configuration.appUrl,
      {
        organizationId: orgId,
        email: `ops-${engine}@example.com`,
        reason: 'incident 7',
        hours: 1,
        role: 'viewer',
        grantedBy: 'test',
      },
      async () => {},
    );
    if ('problem' in granted) throw new Error(granted.problem);
    const signIn = await test.app.inject({
      method: 'POST',
      url: '/auth/magic-link',
      payload: { token: new URL(granted.signInLink as string).searchParams.get('token') },
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
    const csrf = expectJson(signIn, 200).csrfToken as string;
    const get = (url: string) =>
      test.app.inject({ method: 'GET', url, headers: { cookie, 'x-service-project': project.id } });

    expect(expectJson(await get('/v1/orgs'), 200).items.map((item: { id: string }) => item.id)).toEqual([
      orgId,
    ]);
    expect((await get(`/v1/orgs/${orgId}/projects`)).statusCode).toBe(200);
    expect((await get('/v1/sessions')).statusCode).toBe(200);
    const members = expectJson(await get(`/v1/orgs/${orgId}/members`), 200);
    expect(members.items.map((member: { email: string }) => member.email)).toContain(
      `ops-${engine}@example.com`,
    );
    // A viewer changes nothing.
    const rename = await test.app.inject({
      method: 'PATCH',
      url: `/v1/orgs/${orgId}`,
      headers: { cookie, 'x-service-csrf': csrf },
      payload: { name: 'Taken over' },
    });
    expect(rename.statusCode).toBe(403);

    // Expired: nothing any more, not the organization, its projects or its sessions.
    await test.database.database
      .updateTable('organization_members')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('organization_id', '=', orgId)
      .where('user_id', '=', granted.userId)
      .execute();
    expect(expectJson(await get('/v1/orgs'), 200).items).toEqual([]);
    expect((await get(`/v1/orgs/${orgId}/projects`)).statusCode).toBe(404);
    expect([401, 403, 404]).toContain((await get('/v1/sessions')).statusCode);
    const after = await listMembers(test.database.database, orgId, { limit: 100 });
    expect(after.map((member) => member.email)).not.toContain(`ops-${engine}@example.com`);
  });
});
