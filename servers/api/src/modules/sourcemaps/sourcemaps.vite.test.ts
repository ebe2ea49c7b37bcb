import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import vm from 'node:vm';
import { readDebugId, svcSourcemaps, type UploadResult } from '@svc/sourcemaps';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import { CALL_LINE, CHECKOUT_SOURCE, THROW_LINE } from './sourcemaps.fixture.ts';

// The proof of issue 23, end to end: a real app built by Vite with the @svc/sourcemaps plugin
// pointed at the real server, the built bundle run until it throws, and the error's stack
// symbolicated back to the TypeScript that threw.

const ORIGIN = 'https://shop.example.com';
const BASE = '/static/';

let app: string;
beforeAll(async () => {
  app = await mkdtemp(join(tmpdir(), 'svc-vite-app-'));
  await mkdir(join(app, 'src'));
  await writeFile(
    join(app, 'index.html'),
    '<!doctype html>\n<script type="module" src="/src/main.ts"></script>\n',
  );
  await writeFile(join(app, 'src/checkout.ts'), CHECKOUT_SOURCE);
  await writeFile(
    join(app, 'src/main.ts'),
    "import { checkout } from './checkout.ts';\n\n(globalThis as { app?: unknown }).app = { checkout };\n",
  );
});
afterAll(async () => {
  await rm(app, { recursive: true, force: true });
});

/** Builds the app with the plugin into a fresh `dist-*` directory of the app; returns its path. */
async function buildApp(plugin: Parameters<typeof svcSourcemaps>[0]): Promise<string> {
  const outDir = await mkdtemp(join(app, 'dist-'));
  await build({
    root: app,
    base: BASE,
    configFile: false,
    logLevel: 'silent',
    // No module preload polyfill: the bundle is one plain script that node:vm can run.
    build: { outDir, emptyOutDir: true, modulePreload: { polyfill: false } },
    plugins: [svcSourcemaps(plugin)],
  });
  return outDir;
}

/** Runs the built bundle as the script at `url` and returns the stack of its error. */
function stackOf(code: string, url: string): string {
  const context = vm.createContext({});
  new vm.Script(code, { filename: url }).runInContext(context);
  try {
    (context as { app: { checkout(cart: object): number } }).app.checkout({});
  } catch (error) {
    return (error as Error).stack as string;
  }
  throw new Error('checkout did not throw');
}

describe.each(ENGINES)('a Vite build with @svc/sourcemaps, symbolicated by the server, on %s', (engine) => {
  let test: TestApp;
  let base: string;
  let outDir: string;
  let uploads: UploadResult[];
  let bundle: { name: string; code: string };

  beforeAll(async () => {
    test = await createTestApp(engine);
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
    uploads = [];
    // No build.sourcemap: the plugin makes them hidden, and deletes them once uploaded.
    outDir = await buildApp({
      url: base,
      token: test.first.apiToken,
      release: 'shop@1.0.0',
      deleteAfterUpload: true,
      onUploaded: (result) => uploads.push(result),
    });
    const names = await readdir(join(outDir, 'assets'));
    expect(names).toHaveLength(1);
    const name = `assets/${names[0]}`;
    bundle = { name, code: await readFile(join(outDir, name), 'utf8') };
  });
  afterAll(async () => {
    await test?.close();
    if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
  });

  it('uploaded the bundle and its map with the debug id of the bundle as built, then deleted the map', async () => {
    const debugId = readDebugId(bundle.code);
    expect(debugId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(bundle.code).not.toContain('sourceMappingURL');
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatchObject({ release: 'shop@1.0.0', requests: 1 });
    const listed = await test.app.inject({
      method: 'GET',
      url: '/v1/sourcemaps?release=shop@1.0.0',
      headers: test.first.headers,
    });
    expect(listed.statusCode).toBe(200);
    expect(
      listed
        .json()
        .items.map((item: { url: string; kind: string; debugId: string }) => [
          item.url,
          item.kind,
          item.debugId,
        ])
        .sort(),
    ).toEqual([
      [`~${BASE}${bundle.name}`, 'bundle', debugId],
      [`~${BASE}${bundle.name}.map`, 'map', debugId],
    ]);
    // The deployed directory has no map.
    expect(await readdir(join(outDir, 'assets'))).toEqual([bundle.name.slice('assets/'.length)]);
  });

  async function symbolicate(body: object) {
    const response = await fetch(`${base}/v1/symbolicate`, {
      method: 'POST',
      headers: { ...test.first.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { frames: Record<string, unknown>[] }).frames;
  }

  it.each([
    ['by debug id, without a release', {}],
    ['by release and URL', { release: 'shop@1.0.0' }],
  ])(
    'maps the stack the built bundle throws back to the TypeScript that threw, %s',
    async (_how, release) => {
      const url = `${ORIGIN}${BASE}${bundle.name}`;
      const stack = stackOf(bundle.code, url);
      expect(stack).toContain(`${url}:1:`);
      const frames = await symbolicate({ ...release, stack });
      expect(frames[0]).toMatchObject({
        mapped: true,
        // The map names it relative to itself (../../src/checkout.ts, from dist-*/assets/): read as a project path.
        file: 'src/checkout.ts',
        line: THROW_LINE,
        function: 'validate',
        generated: { file: url, line: 1 },
      });
      expect(frames[0]?.context).toMatchObject({ line: CHECKOUT_SOURCE.split('\n')[THROW_LINE - 1] });
      // The caller: checkout's call of validate (minified to `Object.t [as checkout]`).
      expect(frames[1]).toMatchObject({
        mapped: true,
        file: 'src/checkout.ts',
        line: CALL_LINE,
        function: 'checkout',
        generated: { file: url, line: 1 },
      });
    },
  );

  it('finds nothing for another release', async () => {
    const stack = stackOf(bundle.code, `${ORIGIN}${BASE}${bundle.name}`);
    const frames = await symbolicate({ release: 'shop@0.9.0', stack });
    expect(frames[0]?.mapped).toBe(false);
  });

  it('fails the build with the server reason when the token may not upload', async () => {
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'read only',
      scopes: ['sourcemaps:read'],
    });
    const failed = await buildApp({ url: base, token, release: 'shop@1.0.1' }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failed?.message).toMatch(/svc-sourcemaps: Uploading 2 files to .*\/v1\/sourcemaps failed: 403 /);
    expect(failed?.message).toContain('sourcemaps:write');
    expect(failed?.message).not.toContain(token);
    // The files were written before the upload: a rebuild of the same code has the same debug id.
    const rebuilt = (await readdir(app)).filter(
      (name) => name.startsWith('dist-') && join(app, name) !== outDir,
    );
    expect(rebuilt).toHaveLength(1);
    const code = await readFile(join(app, rebuilt[0] as string, bundle.name), 'utf8');
    expect(readDebugId(code)).toBe(readDebugId(bundle.code));
    await rm(join(app, rebuilt[0] as string), { recursive: true });
  });
});
