import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `pnpm start` runs this before the server: the dashboard is built when dist/ is missing or older
// than any of its sources, and left alone otherwise (a second start costs a few stat calls).

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.built');
const SOURCES = ['src', 'index.html', 'vite.config.ts', 'package.json'];

async function newestChange(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestChange(join(path, entry)));
  return newest;
}

/** Builds the dashboard unless dist/ is newer than every source; answers whether it built. */
export async function buildIfStale(options: { always?: boolean } = {}): Promise<boolean> {
  const built = await stat(stamp).then(
    (info) => info.mtimeMs,
    () => 0,
  );
  let newest = 0;
  for (const source of SOURCES) newest = Math.max(newest, await newestChange(join(root, source)));
  if (built > newest && options.always !== true) return false;
  const { build } = await import('vite');
  // Vite takes the bundle's NODE_ENV from the environment when it is set: under vitest it is
  // `test`, which would build React's development bundles. The app is always built for
  // production.
  const nodeEnvironment = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ root, configFile: join(root, 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
  } finally {
    if (nodeEnvironment === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnvironment;
  }
  await writeFile(stamp, `${new Date().toISOString()}\n`);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  if (await buildIfStale({ always: process.argv.includes('--always') }))
    process.stdout.write(`Built the dashboard in ${Date.now() - started} ms\n`);
}
