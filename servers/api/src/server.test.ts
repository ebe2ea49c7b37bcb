import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo, createScratchDirectories } from '../test/process-helpers.ts';
import { withMigratedStore } from '../test/test-database.ts';
import { runCli } from './cli.ts';
import { type RunningServer, startServer } from './server.ts';

const servers: RunningServer[] = [];
const scratch = createScratchDirectories('svc-server-');
/**
 * A data directory holding an empty store at the latest schema (a copy of the run's template):
 * what these tests check starts after the store exists. Creating it is tested from an empty
 * directory: the first start below and `svc migrate`.
 */
const migratedDirectory = async () => withMigratedStore(await scratch.make());

async function start(directory: string): Promise<{ server: RunningServer; output: string }> {
  let output = '';
  const server = await startServer(
    { SVC_DATA_DIR: directory, PORT: '0', SVC_LOG_LEVEL: 'silent' },
    { output: (text) => (output += text) },
  );
  servers.push(server);
  return { server, output };
}

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  await scratch.removeAll();
});

// Each test starts servers or runs the CLI, each opening PGlite (seconds each on a busy 2-core
// machine; creating a store from nothing, more): more time than the 30 s default.
describe('the server process on the embedded store', { timeout: 120_000 }, () => {
  it('creates the first project on first start, prints it with a working curl example, and reuses it later', async () => {
    // An empty directory, as a new user's: the start creates the store and migrates it.
    const directory = await scratch.make();
    const { server, output } = await start(directory);
    const credentials = server.credentials;
    if (credentials === null) throw new Error('expected first-start credentials');
    expect(output).toContain('Created your first project');
    expect(output).toContain(
      `curl -s ${server.url}/v1/projects/current -H 'Authorization: Bearer ${credentials.apiToken}'`,
    );
    expect(output).toContain(`listening on ${server.url}`);

    const response = await fetch(`${server.url}/v1/projects/current`, {
      headers: { authorization: `Bearer ${credentials.apiToken}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: credentials.projectId,
      projectKey: credentials.projectKey,
    });
    expect((await stat(join(directory, 'first-project.json'))).mode & 0o777).toBe(0o600);

    await server.close();
    const again = await start(directory);
    expect(again.server.credentials).toEqual(credentials);
    expect(again.output).toContain('Your first project (kept in the data directory)');
  });

  it('creates the owner account on first start and prints a one-time sign-in link that works once', async () => {
    const directory = await migratedDirectory();
    const { server, output } = await start(directory);
    const owner = server.owner;
    if (owner === null || owner.signInLink === undefined) throw new Error('expected the owner account');
    expect(owner).toMatchObject({ email: 'owner@svc.localhost', role: 'owner' });
    expect(owner.organization.id).toBe(server.credentials?.orgId);
    expect(output).toContain(`Created the owner account owner@svc.localhost`);
    expect(output).toContain(owner.signInLink);
    const token = new URL(owner.signInLink).searchParams.get('token');
    const signIn = () =>
      fetch(`${server.url}/auth/magic-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
    const first = await signIn();
    expect(first.status).toBe(200);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
    // The owner reaches the first project through the organization.
    const current = await fetch(`${server.url}/v1/projects/current`, {
      headers: { cookie, 'x-service-project': server.credentials?.projectId as string },
    });
    expect(current.status).toBe(200);
    const orgs = (await (await fetch(`${server.url}/v1/orgs`, { headers: { cookie } })).json()) as {
      items: unknown[];
    };
    expect(orgs.items).toEqual([expect.objectContaining({ id: owner.organization.id, role: 'owner' })]);
    expect((await signIn()).status).toBe(400);

    // A later start makes no second owner and prints no link.
    await server.close();
    const again = await start(directory);
    expect(again.server.owner).toBeNull();
    expect(again.output).not.toContain('Created the owner account');
  });

  it('holds the data directory: the CLI refuses to open it while the server runs, and may once it stopped', async () => {
    const directory = await migratedDirectory();
    const { server } = await start(directory);
    const io = captureIo();
    expect(await runCli(['create-project', '--name', 'Second'], { SVC_DATA_DIR: directory }, io)).toBe(1);
    expect(io.err).toMatch(/in use by process \d+ .*stop the server first/s);

    await server.close();
    const after = captureIo();
    expect(
      await runCli(['create-project', '--name', 'Second', '--json'], { SVC_DATA_DIR: directory }, after),
    ).toBe(0);
  });

  it('close() stops listening, then releases the data directory', async () => {
    const directory = await migratedDirectory();
    const { server } = await start(directory);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.close();
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    await expect(stat(join(directory, '.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses bad settings with one line per variable', async () => {
    await expect(
      startServer({ PORT: 'eighty', DATABASE_URL: 'mysql://x' }, { output: () => {} }),
    ).rejects.toThrow(/PORT: .*\n.*DATABASE_URL: must be a postgres/s);
  });
});

describe('svc CLI', { timeout: 120_000 }, () => {
  it('create-project --json prints exactly orgId, projectId, projectKey and apiToken, and they work', async () => {
    const directory = await migratedDirectory();
    const io = captureIo();
    expect(
      await runCli(['create-project', '--name', 'Web app', '--json'], { SVC_DATA_DIR: directory }, io),
    ).toBe(0);
    const printed = JSON.parse(io.out);
    expect(Object.keys(printed)).toEqual(['orgId', 'projectId', 'projectKey', 'apiToken']);
    expect(printed.orgId).toMatch(/^org_/);
    expect(printed.projectId).toMatch(/^proj_/);

    const second = captureIo();
    expect(
      await runCli(['create-project', '--name', 'Mobile', '--json'], { SVC_DATA_DIR: directory }, second),
    ).toBe(0);
    expect(JSON.parse(second.out).orgId).toBe(printed.orgId);

    const { server } = await start(directory);
    const response = await fetch(`${server.url}/v1/projects/current`, {
      headers: { authorization: `Bearer ${printed.apiToken}` },
    });
    expect(await response.json()).toMatchObject({ id: printed.projectId, name: 'Web app' });
    // The store already had data: no first-project bootstrap happened.
    expect(server.credentials).toBeNull();
  });

  it('create-token and rotate-key: the old key keeps working through its grace period', async () => {
    const directory = await migratedDirectory();
    const created = captureIo();
    await runCli(['create-project', '--name', 'Web app', '--json'], { SVC_DATA_DIR: directory }, created);
    const { projectId, projectKey } = JSON.parse(created.out);

    const token = captureIo();
    expect(
      await runCli(['create-token', '--project', projectId, '--json'], { SVC_DATA_DIR: directory }, token),
    ).toBe(0);
    expect(JSON.parse(token.out)).toMatchObject({ projectId, tokenId: expect.stringMatching(/^tok_/) });

    const rotated = captureIo();
    expect(
      await runCli(['rotate-key', '--project', projectId, '--json'], { SVC_DATA_DIR: directory }, rotated),
    ).toBe(0);
    const { projectKey: newKey, previousKeyExpiresAt } = JSON.parse(rotated.out);
    expect(newKey).not.toBe(projectKey);
    expect(Date.parse(previousKeyExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);

    const { server } = await start(directory);
    for (const key of [projectKey, newKey]) {
      expect((await fetch(`${server.url}/v1/config?key=${key}`)).status).toBe(200);
    }
  });

  it('create-user and reset-password: an operator adds a person to an organization and resets a password', async () => {
    const directory = await migratedDirectory();
    const created = captureIo();
    await runCli(['create-project', '--name', 'Web app', '--json'], { SVC_DATA_DIR: directory }, created);
    const { orgId, projectId } = JSON.parse(created.out);
    const env = { SVC_DATA_DIR: directory };

    const viewer = captureIo();
    expect(
      await runCli(
        [
          'create-user',
          '--email',
          'ada@example.com',
          '--name',
          'Ada',
          '--role',
          'viewer',
          '--password',
          'a long enough passphrase',
          '--json',
        ],
        env,
        viewer,
      ),
    ).toBe(0);
    expect(JSON.parse(viewer.out)).toMatchObject({
      email: 'ada@example.com',
      role: 'viewer',
      organization: { id: orgId },
    });
    expect(JSON.parse(viewer.out).signInLink).toBeUndefined();
    const owner = captureIo();
    expect(await runCli(['create-user', '--email', 'bo@example.com', '--json'], env, owner)).toBe(0);
    const ownerLink = JSON.parse(owner.out).signInLink as string;
    expect(ownerLink).toContain('/magic-link?token=');
    const again = captureIo();
    expect(await runCli(['create-user', '--email', 'ADA@example.com'], env, again)).toBe(1);
    expect(again.err).toBe('ADA@example.com has an account already\n');
    const badRole = captureIo();
    expect(await runCli(['create-user', '--email', 'c@example.com', '--role', 'king'], env, badRole)).toBe(2);
    const reset = captureIo();
    expect(await runCli(['reset-password', '--email', 'ada@example.com', '--json'], env, reset)).toBe(0);
    const resetLink = JSON.parse(reset.out).resetLink as string;
    expect(resetLink).toContain('/reset-password?token=');
    const set = captureIo();
    expect(
      await runCli(
        ['reset-password', '--email', 'bo@example.com', '--password', 'another long passphrase'],
        env,
        set,
      ),
    ).toBe(0);
    const { server } = await start(directory);
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // The viewer signs in with the password the operator set, and reads but does not change.
    const login = await post('/auth/login', {
      email: 'ada@example.com',
      password: 'a long enough passphrase',
    });
    expect(login.status).toBe(200);
    const { csrfToken } = (await login.json()) as { csrfToken: string };
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const headers = { cookie, 'x-service-csrf': csrfToken, 'x-service-project': projectId };
    expect((await fetch(`${server.url}/v1/sessions`, { headers })).status).toBe(200);
    const rename = await fetch(`${server.url}/v1/projects/${projectId}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Mine' }),
    });
    expect(rename.status).toBe(403);
    // The reset link sets a password once.
    const resetToken = new URL(resetLink).searchParams.get('token');
    expect(
      (await post('/auth/password/reset', { token: resetToken, password: 'a brand new passphrase' })).status,
    ).toBe(200);
    expect(
      (await post('/auth/login', { email: 'ada@example.com', password: 'a brand new passphrase' })).status,
    ).toBe(200);
    expect(
      (await post('/auth/login', { email: 'bo@example.com', password: 'another long passphrase' })).status,
    ).toBe(200);
    const ownerToken = new URL(ownerLink).searchParams.get('token');
    expect((await post('/auth/magic-link', { token: ownerToken })).status).toBe(200);
  });

  it('answers a missing project, a missing option and an unknown command clearly', async () => {
    const directory = await scratch.make();
    const migrate = captureIo();
    expect(await runCli(['migrate'], { SVC_DATA_DIR: directory }, migrate)).toBe(0);
    expect(migrate.out).toMatch(/^Applied 2026-11-22-initial/);
    const again = captureIo();
    expect(await runCli(['migrate'], { SVC_DATA_DIR: directory }, again)).toBe(0);
    expect(again.out).toBe('The database schema is up to date.\n');
    const missingProject = captureIo();
    expect(
      await runCli(['rotate-key', '--project', 'proj_nope'], { SVC_DATA_DIR: directory }, missingProject),
    ).toBe(1);
    expect(missingProject.err).toBe('No project proj_nope\n');
    const missingOption = captureIo();
    expect(await runCli(['create-project'], { SVC_DATA_DIR: directory }, missingOption)).toBe(2);
    expect(missingOption.err).toMatch(/^--name is required\n\nUsage: svc/);
    const unknown = captureIo();
    expect(await runCli(['launch'], { SVC_DATA_DIR: directory }, unknown)).toBe(2);
    expect(unknown.err).toMatch(/^Unknown command "launch"/);
    const badFlag = captureIo();
    expect(await runCli(['migrate', '--force'], { SVC_DATA_DIR: directory }, badFlag)).toBe(2);
  });
});
