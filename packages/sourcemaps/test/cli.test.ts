import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readDebugId } from '../src/index.ts';
import { buildDirectory, removeDirectories, writeDirectory } from './builds.ts';
import { type Receiver, startReceiver } from './receiver.ts';

// The CLI as users run it: a child process of this Node, reading the TypeScript sources through
// the package's source condition.
const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const { SVC_URL: _url, SVC_API_TOKEN: _token, ...inherited } = process.env;
    execFile(
      process.execPath,
      ['--conditions=@svc/source', CLI, ...args],
      { env: { ...inherited, ...env } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await removeDirectories();
});
beforeEach(() => {
  receiver.uploads.length = 0;
  receiver.answers.length = 0;
});

describe('svc-sourcemaps inject', () => {
  it('injects, reports each bundle, and is idempotent', async () => {
    const root = await buildDirectory();
    const first = await run(['inject', root]);
    expect(first.code).toBe(0);
    const code = await readFile(join(root, 'assets/index-4f2a.js'), 'utf8');
    const debugId = readDebugId(code) as string;
    expect(first.stdout).toContain(`injected  assets/index-4f2a.js ${debugId}`);
    expect(first.stdout).toContain('skipped   inline.js (inline source map)');
    expect(first.stdout).toContain('skipped   plain.cjs (no source map)');
    expect(first.stdout).toContain('3 bundles with a debug id');
    const second = await run(['inject', root]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`unchanged assets/index-4f2a.js ${debugId}`);
    expect(await readFile(join(root, 'assets/index-4f2a.js'), 'utf8')).toBe(code);
  });

  it('exits 1 when no bundle has a map, 2 on usage errors', async () => {
    const empty = await writeDirectory({ 'main.js': 'run();\n' });
    expect(await run(['inject', empty])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no bundle'),
    });
    expect(await run(['inject'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('which directory?'),
    });
    expect(await run(['deploy', empty])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Unknown command "deploy"'),
    });
    expect(await run(['inject', empty, '--bogus'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--bogus'),
    });
    expect(await run(['inject', '/nonexistent/dist'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('/nonexistent/dist is not a directory'),
    });
  });

  it('prints its usage and version', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('svc-sourcemaps upload <dir> --url <url> --token <token>');
    const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    expect((await run(['--version'])).stdout.trim()).toBe(manifest.version);
  });
});

describe('svc-sourcemaps upload', () => {
  it('uploads the bundles with maps and their maps, with --release and --url-prefix', async () => {
    const root = await buildDirectory();
    await run(['inject', root]);
    const result = await run([
      'upload',
      root,
      '--url',
      receiver.url,
      '--token',
      'svc_cli_token',
      '--release',
      'shop@2.0.0',
      '--url-prefix',
      '~/static/',
    ]);
    expect(result.stderr).toContain('skipped   inline.js (no source map)');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('uploaded  ~/static/assets/index-4f2a.js');
    expect(result.stdout).toContain('6 files uploaded for release shop@2.0.0');
    expect(receiver.uploads).toHaveLength(1);
    const [upload] = receiver.uploads;
    expect(upload?.headers.authorization).toBe('Bearer svc_cli_token');
    expect(upload?.fields).toEqual({ release: 'shop@2.0.0', urlPrefix: '~/static/' });
    expect(upload?.files.map((file) => file.name)).toEqual([
      'assets/index-4f2a.js',
      'assets/index-4f2a.js.map',
      'vendor.js',
      'maps/vendor.map',
      'worker.mjs',
      'worker.mjs.map',
    ]);
    expect(upload?.files[0]?.content).toBe(await readFile(join(root, 'assets/index-4f2a.js'), 'utf8'));
  });

  it('takes the url and token from SVC_URL and SVC_API_TOKEN, warns about bundles without a debug id, and deletes maps when asked', async () => {
    const root = await buildDirectory();
    const result = await run(['upload', root, '--delete-after-upload'], {
      SVC_URL: receiver.url,
      SVC_API_TOKEN: 'svc_env_token',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('3 bundle(s) carry no debug id');
    expect(receiver.uploads[0]?.headers.authorization).toBe('Bearer svc_env_token');
    expect(receiver.uploads[0]?.fields).toEqual({});
    expect(result.stdout).toContain('3 source maps deleted');
    await expect(stat(join(root, 'assets/index-4f2a.js.map'))).rejects.toThrow();
    await expect(stat(join(root, 'assets/index-4f2a.js'))).resolves.toBeDefined();
  });

  it('exits 2 without a url or token, and 1 with the server reason when the upload is refused', async () => {
    const root = await buildDirectory();
    expect(await run(['upload', root, '--url', receiver.url])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--token (or SVC_API_TOKEN) is required'),
    });
    expect(await run(['upload', root, '--token', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--url (or SVC_URL) is required'),
    });
    expect(await run(['upload', root, '--url', 'not a url', '--token', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is not a URL'),
    });
    receiver.answers.push({
      status: 403,
      body: JSON.stringify({ error: 'This API token lacks the scope sourcemaps:write', code: 'forbidden' }),
    });
    const refused = await run(['upload', root, '--url', receiver.url, '--token', 'svc_secret_token']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'failed: 403 This API token lacks the scope sourcemaps:write (forbidden)',
    );
    expect(refused.stderr + refused.stdout).not.toContain('svc_secret_token');
    // Nothing deleted or written on failure.
    await expect(stat(join(root, 'assets/index-4f2a.js.map'))).resolves.toBeDefined();
  });
});
