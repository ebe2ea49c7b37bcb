import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { injectDebugId, sourceMappingUrl } from './debug-id.ts';
import { SourcemapsError } from './errors.ts';

// Bundles and their maps on disk: found in a build's output directory, given debug ids in place,
// and read for an upload. Names are relative to the directory, with `/` on every platform.

const BUNDLE = /\.(?:m|c)?js$/;

/** A bundle of a build directory and its source map (paths relative to the directory). */
export interface BundleFiles {
  /** The bundle, e.g. `assets/index-4f2a.js`. */
  bundle: string;
  /** Its source map, e.g. `assets/index-4f2a.js.map`; undefined when it has none. */
  map?: string;
  /** Why it has no map file: none referenced or beside it, or an inline `data:` map. */
  noMap?: 'none' | 'inline';
}

/** What `injectDirectory` did to one bundle. */
export interface InjectedBundle extends BundleFiles {
  /** `injected` (written), `unchanged` (it had the id already) or `skipped` (no map file). */
  status: 'injected' | 'unchanged' | 'skipped';
  debugId?: string;
}

/**
 * The bundles (`*.js`, `*.mjs`, `*.cjs`) under `directory` and their source maps: the file their
 * `//# sourceMappingURL=` comment names, else `<bundle>.map` beside them (hidden source maps).
 * Sorted by name; `node_modules` folders are not entered.
 *
 * @example
 * ```ts
 * await findBundles('dist'); // [{ bundle: 'assets/index-4f2a.js', map: 'assets/index-4f2a.js.map' }]
 * ```
 */
export async function findBundles(directory: string): Promise<BundleFiles[]> {
  const root = resolve(directory);
  const rootStat = await stat(root).catch(() => undefined);
  if (rootStat === undefined || !rootStat.isDirectory())
    throw new SourcemapsError({ code: 'invalid_options', message: `${directory} is not a directory` });
  const names = await listFiles(root);
  const present = new Set(names);
  const found: BundleFiles[] = [];
  for (const name of names) {
    if (!BUNDLE.test(name)) continue;
    const code = await readFile(join(root, name), 'utf8');
    const reference = sourceMappingUrl(code);
    if (reference?.startsWith('data:')) {
      found.push({ bundle: name, noMap: 'inline' });
      continue;
    }
    const referenced = reference === undefined ? undefined : referencedMap(root, name, reference);
    const map =
      referenced !== undefined && present.has(referenced)
        ? referenced
        : present.has(`${name}.map`)
          ? `${name}.map`
          : undefined;
    found.push(map === undefined ? { bundle: name, noMap: 'none' } : { bundle: name, map });
  }
  return found;
}

/**
 * Injects debug ids into the bundles under `directory` that have a source map, and into their
 * maps, rewriting the files in place (see `injectDebugId`). Idempotent: a second run reports
 * every bundle `unchanged`. Bundles without a map file are `skipped`.
 *
 * @example
 * ```ts
 * for (const result of await injectDirectory('dist')) console.log(result.status, result.bundle, result.debugId);
 * ```
 */
export async function injectDirectory(directory: string): Promise<InjectedBundle[]> {
  const root = resolve(directory);
  const results: InjectedBundle[] = [];
  for (const files of await findBundles(root)) {
    if (files.map === undefined) {
      results.push({ ...files, status: 'skipped' });
      continue;
    }
    results.push(await injectFiles(root, files as BundleFiles & { map: string }));
  }
  return results;
}

/**
 * Injects one debug id into a bundle and its map on disk (paths relative to `root`).
 *
 * @example
 * ```ts
 * await injectFiles('dist', { bundle: 'main.js', map: 'main.js.map' }); // { status: 'injected', debugId: '...' }
 * ```
 */
export async function injectFiles(
  root: string,
  files: { bundle: string; map: string },
): Promise<InjectedBundle> {
  const code = await readFile(join(root, files.bundle), 'utf8');
  const map = await readFile(join(root, files.map), 'utf8');
  const result = injectDebugId(code, map);
  if (!result.ok)
    throw new SourcemapsError({
      code: 'invalid_map',
      message: `The source map ${files.map} ${result.message}`,
    });
  if (result.code !== code) await writeFile(join(root, files.bundle), result.code);
  if (result.map !== undefined && result.map !== map) await writeFile(join(root, files.map), result.map);
  return { ...files, status: result.changed ? 'injected' : 'unchanged', debugId: result.debugId };
}

async function listFiles(root: string): Promise<string[]> {
  const names: string[] = [];
  async function walk(folder: string): Promise<void> {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') await walk(path);
      } else if (entry.isFile()) {
        names.push(relative(root, path).split(sep).join('/'));
      }
    }
  }
  await walk(root);
  return names.sort();
}

/** The map a relative `sourceMappingURL` names, relative to the root; undefined when outside it. */
function referencedMap(root: string, bundle: string, reference: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(reference) || reference.startsWith('/')) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(reference.replace(/[?#].*$/, ''));
  } catch {
    return undefined;
  }
  const name = relative(root, resolve(root, dirname(bundle), path))
    .split(sep)
    .join('/');
  return name.startsWith('../') || name === '..' ? undefined : name;
}
