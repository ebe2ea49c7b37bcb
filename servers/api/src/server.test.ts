import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from './cli.ts';
import { type RunningServer, startServer } from './server.ts';

const directories: string[] = [];
const servers: RunningServer[] = [];

async function dataDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'svc-server-'));
  directories.push(directory);
  return directory;
}

function capture(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

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
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

describe('the server process on the embedded store', () => {
  it('creates the first project on first start, prints it with a working curl example, and reuses it later', async () => {
    const directory = await dataDirectory();
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

  it('holds the data directory: the CLI refuses to open it while the server runs, and may once it stopped', async () => {
    const directory = await dataDirectory();
    const { server } = await start(directory);
    const io = capture();
    expect(await runCli(['create-project', '--name', 'Second'], { SVC_DATA_DIR: directory }, io)).toBe(1);
    expect(io.err).toMatch(/in use by process \d+ .*stop the server first/s);

    await server.close();
    const after = capture();
    expect(
      await runCli(['create-project', '--name', 'Second', '--json'], { SVC_DATA_DIR: directory }, after),
    ).toBe(0);
  });

  it('close() stops listening, then releases the data directory', async () => {
    const directory = await dataDirectory();
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

describe('svc CLI', () => {
  it('create-project --json prints exactly orgId, projectId, projectKey and apiToken, and they work', async () => {
    const directory = await dataDirectory();
    const io = capture();
    expect(
      await runCli(['create-project', '--name', 'Web app', '--json'], { SVC_DATA_DIR: directory }, io),
    ).toBe(0);
    const printed = JSON.parse(io.out);
    expect(Object.keys(printed)).toEqual(['orgId', 'projectId', 'projectKey', 'apiToken']);
    expect(printed.orgId).toMatch(/^org_/);
    expect(printed.projectId).toMatch(/^proj_/);

    const second = capture();
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
    const directory = await dataDirectory();
    const created = capture();
    await runCli(['create-project', '--name', 'Web app', '--json'], { SVC_DATA_DIR: directory }, created);
    const { projectId, projectKey } = JSON.parse(created.out);

    const token = capture();
    expect(
      await runCli(['create-token', '--project', projectId, '--json'], { SVC_DATA_DIR: directory }, token),
    ).toBe(0);
    expect(JSON.parse(token.out)).toMatchObject({ projectId, tokenId: expect.stringMatching(/^tok_/) });

    const rotated = capture();
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

  it('answers a missing project, a missing option and an unknown command clearly', async () => {
    const directory = await dataDirectory();
    const migrate = capture();
    expect(await runCli(['migrate'], { SVC_DATA_DIR: directory }, migrate)).toBe(0);
    expect(migrate.out).toMatch(/^Applied 2026-11-22-initial/);
    const again = capture();
    expect(await runCli(['migrate'], { SVC_DATA_DIR: directory }, again)).toBe(0);
    expect(again.out).toBe('The database schema is up to date.\n');
    const missingProject = capture();
    expect(
      await runCli(['rotate-key', '--project', 'proj_nope'], { SVC_DATA_DIR: directory }, missingProject),
    ).toBe(1);
    expect(missingProject.err).toBe('No project proj_nope\n');
    const missingOption = capture();
    expect(await runCli(['create-project'], { SVC_DATA_DIR: directory }, missingOption)).toBe(2);
    expect(missingOption.err).toMatch(/^--name is required\n\nUsage: svc/);
    const unknown = capture();
    expect(await runCli(['launch'], { SVC_DATA_DIR: directory }, unknown)).toBe(2);
    expect(unknown.err).toMatch(/^Unknown command "launch"/);
    const badFlag = capture();
    expect(await runCli(['migrate', '--force'], { SVC_DATA_DIR: directory }, badFlag)).toBe(2);
  });
});
