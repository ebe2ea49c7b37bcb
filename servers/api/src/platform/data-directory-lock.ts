import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

const marker = Symbol.for('@svc/api.DataDirectoryLockedError');

/**
 * Thrown when another live process holds the data directory. The message is made from
 * `directory` and `pid`, and says how to get past it.
 *
 * @example
 * ```ts
 * throw new DataDirectoryLockedError({ directory: './data', pid: 4242 });
 * ```
 */
export class DataDirectoryLockedError extends Error {
  /** Marks instances for {@link DataDirectoryLockedError.isInstance}, across copies of the module. */
  readonly [marker] = true;
  /** The data directory that is locked. */
  readonly directory: string;
  /** The process holding it. */
  readonly pid: number;

  constructor({ directory, pid, cause }: { directory: string; pid: number; cause?: unknown }) {
    super(
      `The data directory ${directory} is in use by process ${pid} (a running server?). ` +
        'The embedded store (PGlite) can be opened by one process at a time: stop the server first, ' +
        'or run against PostgreSQL (DATABASE_URL) to use the CLI while servers run.',
      cause === undefined ? undefined : { cause },
    );
    this.name = 'DataDirectoryLockedError';
    this.directory = directory;
    this.pid = pid;
  }

  /** Whether `value` is a DataDirectoryLockedError (also one made by another copy of this module). */
  static isInstance(value: unknown): value is DataDirectoryLockedError {
    return typeof value === 'object' && value !== null && (value as { [marker]?: unknown })[marker] === true;
  }
}

/** Lock files this process holds: a second open in the same process is refused too. */
const heldByThisProcess = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the embedded store's data directory for this process (a `.lock` file holding the pid).
 * PGlite has no lock of its own, and two processes writing one PGlite directory corrupt it. A
 * lock left by a process that no longer exists (killed, crashed) is taken over.
 *
 * @returns a function that releases the lock
 * @throws {DataDirectoryLockedError} when a live process holds it
 */
export async function lockDataDirectory(directory: string): Promise<() => Promise<void>> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const path = join(directory, '.lock');
  if (heldByThisProcess.has(path)) throw new DataDirectoryLockedError({ directory, pid: process.pid });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.sync();
      await handle.close();
      heldByThisProcess.add(path);
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        heldByThisProcess.delete(path);
        await rm(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      // A lock file naming this process but not held by it was left by an earlier process that
      // had the same pid (a restarted container): stale.
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new DataDirectoryLockedError({ directory, pid: holder });
      }
      // Stale: its process is gone. Remove it and try again.
      await rm(path, { force: true });
    }
  }
  throw new Error(`Could not lock the data directory ${directory}`);
}
