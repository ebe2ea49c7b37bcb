import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findBundles, injectDirectory, readDebugId, readUploadFiles, SourcemapsError } from '../src/index.ts';
import { buildDirectory, removeDirectories, writeDirectory } from './builds.ts';

afterAll(removeDirectories);

async function snapshot(root: string, names: string[]): Promise<Record<string, string>> {
  return Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await readFile(join(root, name), 'utf8')])),
  );
}

const ALL = [
  'assets/index-4f2a.js',
  'assets/index-4f2a.js.map',
  'worker.mjs',
  'worker.mjs.map',
  'vendor.js',
  'maps/vendor.map',
  'inline.js',
  'plain.cjs',
];

describe('findBundles', () => {
  it('pairs each bundle with the map its comment names, else the map beside it, outside node_modules', async () => {
    const root = await buildDirectory();
    expect(await findBundles(root)).toEqual([
      { bundle: 'assets/index-4f2a.js', map: 'assets/index-4f2a.js.map' },
      { bundle: 'inline.js', noMap: 'inline' },
      { bundle: 'plain.cjs', noMap: 'none' },
      { bundle: 'vendor.js', map: 'maps/vendor.map' },
      { bundle: 'worker.mjs', map: 'worker.mjs.map' },
    ]);
  });

  it('refuses a path that is not a directory', async () => {
    const error = await findBundles('/nonexistent/dist').catch((caught: unknown) => caught);
    expect(SourcemapsError.isInstance(error) && error.code).toBe('invalid_options');
  });
});

describe('injectDirectory', () => {
  it('injects every bundle with a map in place, skips the others, and a second run changes nothing', async () => {
    const root = await buildDirectory();
    const before = await snapshot(root, ALL);
    const first = await injectDirectory(root);
    expect(first.map(({ bundle, status }) => [bundle, status])).toEqual([
      ['assets/index-4f2a.js', 'injected'],
      ['inline.js', 'skipped'],
      ['plain.cjs', 'skipped'],
      ['vendor.js', 'injected'],
      ['worker.mjs', 'injected'],
    ]);
    const after = await snapshot(root, ALL);
    for (const result of first.filter((item) => item.status === 'injected')) {
      expect(readDebugId(after[result.bundle] as string)).toBe(result.debugId);
      expect(JSON.parse(after[result.map as string] as string).debugId).toBe(result.debugId);
    }
    expect(new Set(first.map((result) => result.debugId).filter(Boolean)).size).toBe(3);
    // Untouched: the bundles without a map file.
    expect(after['inline.js']).toBe(before['inline.js']);
    expect(after['plain.cjs']).toBe(before['plain.cjs']);
    // The node_modules copy is not entered.
    expect(await readFile(join(root, 'node_modules/dependency/index.js'), 'utf8')).toBe(
      before['assets/index-4f2a.js'],
    );

    const second = await injectDirectory(root);
    expect(second.map((result) => result.status)).toEqual([
      'unchanged',
      'skipped',
      'skipped',
      'unchanged',
      'unchanged',
    ]);
    expect(second.map((result) => result.debugId)).toEqual(first.map((result) => result.debugId));
    expect(await snapshot(root, ALL)).toEqual(after);
  });

  it('gives the same build the same ids in another directory (deterministic), and another build other ids', async () => {
    const root = await buildDirectory();
    const copy = `${root}-copy`;
    await cp(root, copy, { recursive: true });
    const ids = (await injectDirectory(root)).map((result) => result.debugId);
    expect((await injectDirectory(copy)).map((result) => result.debugId)).toEqual(ids);

    const changed = await writeDirectory({
      'main.js': 'run(2);\n//# sourceMappingURL=main.js.map\n',
      'main.js.map': '{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"}',
    });
    const same = await writeDirectory({
      'main.js': 'run(1);\n//# sourceMappingURL=main.js.map\n',
      'main.js.map': '{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"}',
    });
    const [one] = await injectDirectory(changed);
    const [two] = await injectDirectory(same);
    expect(one?.debugId).not.toBe(two?.debugId);
  });

  it('fails with invalid_map, naming the file, on a map that is not JSON', async () => {
    const root = await writeDirectory({ 'main.js': 'run();\n', 'main.js.map': 'garbage' });
    const error = await injectDirectory(root).catch((caught: unknown) => caught);
    expect(SourcemapsError.isInstance(error) && [error.code, error.message]).toEqual([
      'invalid_map',
      'The source map main.js.map is not JSON',
    ]);
    expect(await readFile(join(root, 'main.js'), 'utf8')).toBe('run();\n');
  });
});

describe('readUploadFiles', () => {
  it('reads each bundle with a map and its map, and names the bundles without an id or a map', async () => {
    const root = await buildDirectory();
    const before = await readUploadFiles(root);
    expect(before.files.map((file) => file.name)).toEqual([
      'assets/index-4f2a.js',
      'assets/index-4f2a.js.map',
      'vendor.js',
      'maps/vendor.map',
      'worker.mjs',
      'worker.mjs.map',
    ]);
    expect(before.withoutDebugId).toEqual(['assets/index-4f2a.js', 'vendor.js', 'worker.mjs']);
    expect(before.withoutMap).toEqual(['inline.js', 'plain.cjs']);
    await injectDirectory(root);
    expect((await readUploadFiles(root)).withoutDebugId).toEqual([]);
  });
});
