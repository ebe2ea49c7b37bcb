/** Real bundles and source maps for the tests, minified by esbuild. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

export const CART_SOURCE = `export function total(items: number[]): number {
  if (items.length === 0) {
    throw new RangeError('empty cart');
  }
  return items.reduce((sum, item) => sum + item, 0);
}
`;

/** esbuild's minified bundle of `source` and its external map; `sourcemap: 'external'` has no comment. */
export async function buildBundle(
  name: string,
  options: { source?: string; sourcemap?: 'linked' | 'external' | 'inline' } = {},
): Promise<{ code: string; map?: string }> {
  const result = await build({
    stdin: { contents: options.source ?? CART_SOURCE, loader: 'ts', sourcefile: 'src/cart.ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    sourcemap: options.sourcemap ?? 'linked',
    sourcesContent: true,
    outfile: name,
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles.find((file) => !file.path.endsWith('.map'))?.text as string;
  const map = result.outputFiles.find((file) => file.path.endsWith('.map'))?.text;
  return map === undefined ? { code } : { code, map };
}

const created: string[] = [];

/** A temporary directory (removed by `removeDirectories`). */
export async function temporaryDirectory(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'svc-sourcemaps-'));
  created.push(root);
  return root;
}

/** Removes every directory `temporaryDirectory` and `writeDirectory` made (and their `-copy`). */
export async function removeDirectories(): Promise<void> {
  const roots = created.splice(0);
  await Promise.all(
    roots.flatMap((root) => [root, `${root}-copy`].map((path) => rm(path, { recursive: true, force: true }))),
  );
}

/** A temporary directory holding `files` (relative names with folders). */
export async function writeDirectory(files: Record<string, string>): Promise<string> {
  const root = await temporaryDirectory();
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), content);
  }
  return root;
}

/**
 * A build directory with every case: a bundle with a linked map in a folder, one with a hidden
 * map (no comment, `<name>.map` beside it), one whose comment names a map of another name, one
 * with an inline map, one without any map, and a stray map.
 */
export async function buildDirectory(): Promise<string> {
  const linked = await buildBundle('assets/index-4f2a.js');
  const hidden = await buildBundle('worker.mjs', {
    sourcemap: 'external',
    source: `${CART_SOURCE}\nexport const worker = 1;\n`,
  });
  const renamed = await buildBundle('vendor.js', { source: `export const vendor = () => 'v';\n` });
  const inline = await buildBundle('inline.js', { sourcemap: 'inline' });
  const plain = await buildBundle('plain.cjs', { sourcemap: 'external' });
  return writeDirectory({
    'assets/index-4f2a.js': linked.code,
    'assets/index-4f2a.js.map': linked.map as string,
    'worker.mjs': hidden.code,
    'worker.mjs.map': hidden.map as string,
    'vendor.js': renamed.code.replace('vendor.js.map', 'maps/vendor.map'),
    'maps/vendor.map': renamed.map as string,
    'inline.js': inline.code,
    'plain.cjs': plain.code,
    'node_modules/dependency/index.js': linked.code,
    'node_modules/dependency/index.js.map': linked.map as string,
  });
}
