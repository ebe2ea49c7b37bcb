import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./pglite-initdb.child.ts', import.meta.url));
const INITDB_TIMEOUT_MS = 180_000;

/**
 * Creates the embedded store's data directory when it holds no database yet, in a short-lived
 * child process, so that the server never hosts PGlite's initdb. Done in-process, initdb is a
 * second WebAssembly Postgres instance whose memory V8 gives back only at a full garbage
 * collection, which an idle server rarely runs: a first start sat at ~730 MB RSS against ~250 MB
 * after a restart (`pnpm bench`, memory). The database is created in a sibling directory and
 * renamed into place, so a crash during initdb leaves no half-created database behind.
 *
 * Throws when `directory` exists, is not empty and holds no database (`PG_VERSION`).
 *
 * @example
 * ```ts
 * await initializePGliteDirectory('./data/pglite');
 * const pglite = newPGlite('./data/pglite'); // opens it
 * ```
 */
export async function initializePGliteDirectory(directory: string): Promise<void> {
  const target = path.resolve(directory);
  if (await exists(path.join(target, 'PG_VERSION'))) return;
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(path.join(parent, `.${path.basename(target)}.initdb-`));
  try {
    await runInitdb(staging);
    try {
      await rmdir(target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        throw new Error(
          `The database directory ${target} is not empty but holds no database (no PG_VERSION): move it away, or point SVC_DATA_DIR elsewhere`,
        );
      }
      if (code !== 'ENOENT') throw error;
    }
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

function runInitdb(directory: string): Promise<void> {
  // The process's own flags (e.g. --conditions), except those only an entry script may take.
  const flags = process.execArgv.filter((flag) => !flag.startsWith('--input-type') && flag !== '--eval');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...flags, CHILD, directory],
      { timeout: INITDB_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error === null) resolve();
        else
          reject(
            new Error(`Creating the database in ${directory} failed: ${stderr.trim() || error.message}`),
          );
      },
    );
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
