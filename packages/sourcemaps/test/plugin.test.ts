import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type OutputOptions, rollup } from 'rollup';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readDebugId, type SvcSourcemapsOptions, svcSourcemaps, type UploadResult } from '../src/index.ts';
import { removeDirectories, temporaryDirectory, writeDirectory } from './builds.ts';
import { type Receiver, startReceiver } from './receiver.ts';

// The plugin in a real Rollup build (Vite runs the same hooks; servers/api has the Vite build
// against the real server).

let receiver: Receiver;
let source: string;
beforeAll(async () => {
  receiver = await startReceiver();
  source = await writeDirectory({
    'main.js': `export function checkout(cart) {\n  if (cart.items.length === 0) throw new Error('empty');\n  return import('./lazy.js').then((lazy) => lazy.total(cart.items));\n}\n`,
    'lazy.js': `export function total(items) {\n  return items.reduce((sum, item) => sum + item, 0);\n}\n`,
  });
});
afterAll(async () => {
  await receiver.close();
  await removeDirectories();
});
beforeEach(() => {
  receiver.uploads.length = 0;
  receiver.answers.length = 0;
});

async function build(
  options: Partial<SvcSourcemapsOptions>,
  output: OutputOptions = { sourcemap: true },
): Promise<{ dir: string; warnings: string[] }> {
  const warnings: string[] = [];
  const dir = await temporaryDirectory();
  const bundle = await rollup({
    input: join(source, 'main.js'),
    plugins: [svcSourcemaps({ url: receiver.url, token: 'svc_plugin_token', ...options })],
    onwarn: (warning) => warnings.push(warning.message),
  });
  try {
    await bundle.write({
      dir,
      format: 'es',
      entryFileNames: 'js/[name].js',
      chunkFileNames: 'js/[name]-[hash].js',
      ...output,
    });
  } finally {
    await bundle.close();
  }
  return { dir, warnings };
}

describe('svcSourcemaps under Rollup', () => {
  it('injects a debug id into every chunk and its map, then uploads them in one request', async () => {
    const results: UploadResult[] = [];
    const { dir, warnings } = await build({
      release: 'shop@3',
      onUploaded: (result) => results.push(result),
    });
    expect(warnings).toEqual([]);
    const names = (await readdir(join(dir, 'js'))).sort();
    expect(names).toHaveLength(4);
    const [lazy, lazyMap, main, mainMap] = names.map((name) => `js/${name}`) as [
      string,
      string,
      string,
      string,
    ];
    expect(receiver.uploads).toHaveLength(1);
    const [upload] = receiver.uploads;
    expect(upload?.headers.authorization).toBe('Bearer svc_plugin_token');
    expect(upload?.fields).toEqual({ release: 'shop@3', urlPrefix: '~/' });
    expect(upload?.files.map((file) => file.name).sort()).toEqual([lazy, lazyMap, main, mainMap]);
    for (const [bundle, map] of [
      [main, mainMap],
      [lazy, lazyMap],
    ] as const) {
      const code = await readFile(join(dir, bundle), 'utf8');
      const debugId = readDebugId(code);
      expect(debugId).toBeDefined();
      expect(code).toMatch(new RegExp(`\\n//# debugId=${debugId}\\n//# sourceMappingURL=[^\\n]+\\.map\\n?$`));
      expect(JSON.parse(await readFile(join(dir, map), 'utf8')).debugId).toBe(debugId);
      // What was uploaded is what is on disk.
      expect(upload?.files.find((file) => file.name === bundle)?.content).toBe(code);
    }
    expect(results).toEqual([expect.objectContaining({ release: 'shop@3', requests: 1 })]);
    expect(results[0]?.items).toHaveLength(4);
  });

  it('gives a rebuild of the same code the same ids (hidden maps: the comment ends the file)', async () => {
    const first = await build({}, { sourcemap: 'hidden' });
    const second = await build({}, { sourcemap: 'hidden' });
    const ids = async (dir: string) =>
      Promise.all(
        (await readdir(join(dir, 'js')))
          .filter((name) => name.endsWith('.js'))
          .sort()
          .map(async (name) => readDebugId(await readFile(join(dir, 'js', name), 'utf8'))),
      );
    const firstIds = await ids(first.dir);
    expect(firstIds.every((id) => id !== undefined)).toBe(true);
    expect(await ids(second.dir)).toEqual(firstIds);
    const main = await readFile(join(first.dir, 'js/main.js'), 'utf8');
    expect(main).not.toContain('sourceMappingURL');
    expect(main.endsWith(`//# debugId=${firstIds[1]}\n`)).toBe(true);
  });

  it('deletes the maps after the upload when asked', async () => {
    const { dir } = await build({ deleteAfterUpload: true });
    expect(receiver.uploads).toHaveLength(1);
    expect((await readdir(join(dir, 'js'))).filter((name) => name.endsWith('.map'))).toEqual([]);
  });

  it('never uploads without a token: it warns, and still injects', async () => {
    const { dir, warnings } = await build({ token: undefined });
    expect(receiver.uploads).toHaveLength(0);
    expect(warnings).toEqual([
      expect.stringContaining('no token, so the source maps of 2 bundles were not uploaded'),
    ]);
    expect(readDebugId(await readFile(join(dir, 'js/main.js'), 'utf8'))).toBeDefined();
  });

  it('warns when the build emits no source maps', async () => {
    const { warnings } = await build({}, { sourcemap: false });
    expect(receiver.uploads).toHaveLength(0);
    expect(warnings).toEqual([expect.stringContaining('no bundle has a source map file')]);
  });

  it('fails the build with the server reason when the upload fails, or only warns when asked', async () => {
    receiver.answers.push({
      status: 400,
      body: JSON.stringify({ error: 'urlPrefix is a path', code: 'invalid' }),
    });
    const failed = await build({}).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failed?.message).toContain(
      `svc-sourcemaps: Uploading 4 files to ${receiver.url}/v1/sourcemaps failed: 400 urlPrefix is a path (invalid)`,
    );

    receiver.answers.push({ status: 403, body: JSON.stringify({ error: 'Forbidden', code: 'forbidden' }) });
    const { warnings, dir } = await build({ onUploadError: 'warn', deleteAfterUpload: true });
    expect(warnings).toEqual([expect.stringContaining('failed: 403 Forbidden (forbidden)')]);
    // A failed upload keeps the maps.
    expect((await readdir(join(dir, 'js'))).filter((name) => name.endsWith('.map'))).toHaveLength(2);
  });
});
