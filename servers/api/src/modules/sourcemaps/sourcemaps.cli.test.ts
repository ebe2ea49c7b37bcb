import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readDebugId } from '@svc/sourcemaps';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { buildCheckout, CALL_LINE, stackOf, THROW_LINE } from './sourcemaps.fixture.ts';

// The CLI path for builds without the Vite plugin: esbuild writes a bundle and its map, then
// `svc-sourcemaps inject` and `svc-sourcemaps upload` run as child processes against the real
// server, and the stack the injected bundle throws symbolicates.

const ORIGIN = 'https://shop.example.com';
const CLI = join(
  dirname(createRequire(import.meta.url).resolve('@svc/sourcemaps/package.json')),
  'src/cli.ts',
);

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--conditions=@svc/source', CLI, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe.each(ENGINES)('svc-sourcemaps inject and upload against the server, on %s', (engine) => {
  let test: TestApp;
  let base: string;
  let dist: string;

  beforeAll(async () => {
    test = await createTestApp(engine);
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
    dist = await mkdtemp(join(tmpdir(), 'svc-cli-dist-'));
    const built = await buildCheckout({ name: 'main.js' });
    await mkdir(join(dist, 'js'));
    await writeFile(join(dist, 'js/main.js'), built.code);
    await writeFile(join(dist, 'js/main.js.map'), built.map);
  });
  afterAll(async () => {
    await test?.close();
    if (dist !== undefined) await rm(dist, { recursive: true, force: true });
  });

  it('uploads the injected bundle and map, and the bundle as deployed symbolicates by debug id and by release', async () => {
    const injected = await run(['inject', dist], {});
    expect(injected.code).toBe(0);
    const code = await readFile(join(dist, 'js/main.js'), 'utf8');
    const debugId = readDebugId(code) as string;
    expect(injected.stdout).toContain(`injected  js/main.js ${debugId}`);

    const uploaded = await run(['upload', dist, '--release', 'shop@2.1.0', '--url-prefix', '~/static/'], {
      SVC_URL: base,
      SVC_API_TOKEN: test.first.apiToken,
    });
    expect(uploaded.stderr).toBe('');
    expect(uploaded.code).toBe(0);
    expect(uploaded.stdout).toContain(`uploaded  ~/static/js/main.js ${debugId}`);
    expect(uploaded.stdout).toContain('2 files uploaded for release shop@2.1.0');

    const stack = stackOf({ name: 'main.js', code, map: '' }, `${ORIGIN}/static/js/main.js`);
    for (const release of [{}, { release: 'shop@2.1.0' }]) {
      const response = await test.app.inject({
        method: 'POST',
        url: '/v1/symbolicate',
        headers: test.first.headers,
        payload: { ...release, stack },
      });
      expect(response.statusCode).toBe(200);
      const frames = response.json().frames;
      expect(frames[0]).toMatchObject({
        mapped: true,
        file: 'src/checkout.ts',
        line: THROW_LINE,
        function: 'validate',
      });
      expect(frames[1]).toMatchObject({
        mapped: true,
        file: 'src/checkout.ts',
        line: CALL_LINE,
        function: 'checkout',
      });
    }
  });

  it('exits 1 with the server reason when the server refuses the upload', async () => {
    const refused = await run(['upload', dist], { SVC_URL: base, SVC_API_TOKEN: 'svc_not_a_token' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/svc-sourcemaps: Uploading 2 files to .*\/v1\/sourcemaps failed: 401 /);
    expect(refused.stderr).not.toContain('svc_not_a_token');
  });
});
