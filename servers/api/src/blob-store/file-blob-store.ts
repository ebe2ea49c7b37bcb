import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type BlobStore, BlobStoreError, type BlobStoreErrorCode, createBlobStore } from './blob-store.ts';

/**
 * Options of {@link createFileBlobStore}.
 *
 * @example
 * ```ts
 * const options: FileBlobStoreOptions = { directory: './data/blobs' };
 * ```
 */
export interface FileBlobStoreOptions {
  /** The directory that holds the objects, one file per key (`<directory>/<key>`). */
  directory: string;
  /**
   * Create `directory` (and its parents) on first use when it does not exist. Default `true`.
   * Either way, once the store has used the directory it never re-creates it: if it disappears
   * later (an unmounted volume) operations fail with `unavailable` instead of silently writing
   * to the file system underneath.
   */
  createDirectory?: boolean;
}

const maximumAttempts = 10;
const directoryMode = 0o700;
const fileMode = 0o600;
const syncDirectories = process.platform !== 'win32';

/**
 * A {@link BlobStore} on the local file system: the object `a/b/c` is the file
 * `<directory>/a/b/c`.
 *
 * `put` writes a temporary file in the target's directory (a name containing `~`, which no key
 * can contain, so `get` never sees it), fsyncs it, renames it over the target, then fsyncs the
 * directory and its ancestors up to `directory`. A crash at any point leaves the old object or
 * the new one, never a partial one; a leftover temporary file is invisible and harmless.
 * `delete` removes directories it leaves empty, so deleted sessions leave no empty directories.
 * Files are created with mode 0600 and directories with 0700.
 *
 * Limitation: a key cannot be both an object and a prefix of other objects (`a` and `a/b`):
 * such a `put` throws `key_conflict`. The server's keys have a fixed depth, so this never happens.
 *
 * @example
 * ```ts
 * const store = createFileBlobStore({ directory: './data/blobs' });
 * await store.check();
 * await store.put('proj_1/ses_1/00000001', sealed);
 * await store.close();
 * ```
 */
export function createFileBlobStore(options: FileBlobStoreOptions): BlobStore {
  if (typeof options?.directory !== 'string' || options.directory.length === 0) {
    throw new TypeError('createFileBlobStore: `directory` must be a non-empty path');
  }
  const root = path.resolve(options.directory);
  const rootPrefix = root.endsWith(path.sep) ? root : root + path.sep;
  const createDirectory = options.createDirectory ?? true;
  let rootReady: Promise<void> | undefined;

  function ensureRoot(): Promise<void> {
    rootReady ??= prepareRoot().catch((error: unknown) => {
      rootReady = undefined;
      throw error;
    });
    return rootReady;
  }

  async function prepareRoot(): Promise<void> {
    if (createDirectory) {
      let firstCreated: string | undefined;
      try {
        firstCreated = await mkdir(root, { recursive: true, mode: directoryMode });
      } catch (error) {
        // EEXIST/ENOTDIR: a file is in the way; the check below says so clearly.
        const code = errorCode(error);
        if (code !== 'EEXIST' && code !== 'ENOTDIR') {
          throw failure('unavailable', `Cannot create the blob directory ${root}`, error);
        }
      }
      // Make the new directory entries durable: fsync the parent of every directory created.
      if (firstCreated !== undefined) {
        for (let directory = firstCreated; ; directory = path.join(directory, nextSegment(directory))) {
          await syncDirectory(path.dirname(directory));
          if (directory === root) break;
        }
      }
    }
    await assertRootIsDirectory();
  }

  /** The path component after `directory` on the way to `root`. */
  function nextSegment(directory: string): string {
    const rest = path.relative(directory, root);
    return rest.split(path.sep)[0] ?? '';
  }

  async function assertRootIsDirectory(): Promise<void> {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(root)).isDirectory();
    } catch (error) {
      throw failure('unavailable', `The blob directory ${root} does not exist or is not accessible`, error);
    }
    if (!isDirectory) {
      throw failure('unavailable', `The blob directory ${root} is not a directory`);
    }
  }

  function pathOf(key: string): string {
    const target = path.join(root, ...key.split('/'));
    // Defence in depth: a valid key can never leave the root, but check the result anyway.
    if (!target.startsWith(rootPrefix)) {
      throw failure('invalid_key', `Invalid blob key ${JSON.stringify(key)}: resolves outside the store`);
    }
    return target;
  }

  /** An error from the file system that says "no such object", unless the root itself is gone. */
  async function isMissingObject(error: unknown, target: string): Promise<boolean> {
    const code = errorCode(error);
    if (code === 'EPERM') {
      // unlink() of a directory is EPERM on macOS: no object there. Any other EPERM is a failure.
      const isDirectory = await stat(target).then(
        (stats) => stats.isDirectory(),
        () => false,
      );
      if (!isDirectory) return false;
    } else if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR') {
      return false;
    }
    await assertRootIsDirectory();
    return true;
  }

  async function createParents(key: string, segments: string[]): Promise<'created' | 'retry'> {
    for (let index = 1; index < segments.length; index += 1) {
      const directory = path.join(root, ...segments.slice(0, index));
      try {
        await mkdir(directory, { mode: directoryMode });
      } catch (error) {
        const code = errorCode(error);
        if (code === 'EEXIST') continue; // A directory, or an object (then opening the temporary file fails)
        if (code === 'ENOENT') return 'retry'; // A concurrent delete removed a parent, or the root is gone
        if (code === 'ENOTDIR') throw conflict(key, error);
        throw failure('unavailable', `Cannot create directory ${directory} for blob ${key}`, error);
      }
    }
    return 'created';
  }

  async function openTemporaryFile(key: string, segments: string[]): Promise<[FileHandle, string]> {
    const parent = path.dirname(pathOf(key));
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await createParents(key, segments);
      if (outcome === 'created') {
        const temporary = path.join(parent, `.tmp~${randomBytes(8).toString('hex')}`);
        try {
          return [await open(temporary, 'wx', fileMode), temporary];
        } catch (error) {
          const code = errorCode(error);
          if (code === 'ENOTDIR') throw conflict(key, error);
          if (code !== 'ENOENT') throw failure('unavailable', `Cannot write blob ${key} in ${root}`, error);
        }
      }
      // ENOENT: the root disappeared (fail), or a concurrent delete removed an empty parent (retry).
      await assertRootIsDirectory();
      if (attempt >= maximumAttempts) {
        throw failure(
          'unavailable',
          `Cannot create the directory of blob ${key} in ${root}: it keeps disappearing`,
        );
      }
    }
  }

  async function put(key: string, bytes: Uint8Array): Promise<void> {
    await ensureRoot();
    const segments = key.split('/');
    const target = pathOf(key);
    const parent = path.dirname(target);
    const [handle, temporary] = await openTemporaryFile(key, segments);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(temporary).catch(() => {});
      throw failure('unavailable', `Cannot write blob ${key} in ${root}`, error);
    }
    try {
      await handle.close();
      await rename(temporary, target);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      const code = errorCode(error);
      if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') throw conflict(key, error);
      throw failure('unavailable', `Cannot write blob ${key} in ${root}`, error);
    }
    // The rename is durable once the directory is; its ancestors are synced too because a
    // concurrent put may have (re)created them without having synced them yet.
    for (let directory = parent; ; directory = path.dirname(directory)) {
      await syncDirectory(directory);
      if (directory === root) break;
    }
  }

  async function get(key: string): Promise<Uint8Array | null> {
    await ensureRoot();
    const target = pathOf(key);
    try {
      const buffer = await readFile(target);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } catch (error) {
      if (await isMissingObject(error, target)) return null;
      throw failure('unavailable', `Cannot read blob ${key} in ${root}`, error);
    }
  }

  async function remove(key: string): Promise<void> {
    await ensureRoot();
    const target = pathOf(key);
    try {
      await unlink(target);
    } catch (error) {
      if (await isMissingObject(error, target)) return;
      throw failure('unavailable', `Cannot delete blob ${key} in ${root}`, error);
    }
    await syncDirectory(path.dirname(target));
    // Best effort: remove the directories this delete left empty (a deleted session's folder).
    for (let directory = path.dirname(target); directory !== root; directory = path.dirname(directory)) {
      try {
        await rmdir(directory);
      } catch {
        break;
      }
    }
  }

  async function check(): Promise<void> {
    await ensureRoot();
    await assertRootIsDirectory();
    const probe = path.join(root, `.check~${randomBytes(8).toString('hex')}`);
    try {
      const handle = await open(probe, 'wx', fileMode);
      try {
        await handle.writeFile('ok');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await unlink(probe);
    } catch (error) {
      await unlink(probe).catch(() => {});
      throw failure('unavailable', `The blob directory ${root} is not writable`, error);
    }
  }

  return createBlobStore('file', `file blob store at ${root}`, { put, get, remove, check });
}

async function syncDirectory(directory: string): Promise<void> {
  if (!syncDirectories) return;
  let handle: FileHandle | undefined;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    throw failure('unavailable', `Cannot fsync directory ${directory}`, error);
  } finally {
    await handle?.close();
  }
}

function conflict(key: string, cause: unknown): BlobStoreError {
  return failure(
    'key_conflict',
    `Cannot store blob ${key}: its path is a directory of other blobs, or one of its prefixes is a blob`,
    cause,
  );
}

function failure(code: BlobStoreErrorCode, message: string, cause?: unknown): BlobStoreError {
  const reason = errorCode(cause) ?? (cause instanceof Error ? cause.message : undefined);
  return new BlobStoreError({
    code,
    message: reason === undefined ? message : `${message} (${reason})`,
    cause,
  });
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
