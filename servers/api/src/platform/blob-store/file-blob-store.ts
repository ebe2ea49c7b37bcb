import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { coalesce } from '../coalesce.ts';
import {
  type BlobStore,
  BlobStoreError,
  type BlobStoreErrorCode,
  createBlobStore,
  type PutOptions,
} from './blob-store.ts';
import { createDurableFileWriter, DurableWriteError } from './durable-file-writer.ts';

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
  /**
   * Diagnostics hook, for tests and metrics only: called with the absolute path of a directory
   * each time the store starts an fsync of it (never on Windows, where directories are not
   * fsynced). It must not change the store's directory; an exception it throws is ignored.
   */
  onDirectorySync?: (directory: string) => void;
  /**
   * Threads that write write-once objects (`put(…, { writeOnce: true })`) with blocking calls,
   * started on first use. Default 2.
   */
  writerThreads?: number;
}

const maximumAttempts = 10;
/**
 * How many directories the store remembers as durable. Beyond that the oldest is forgotten,
 * which only costs one more fsync of its parent the next time a put uses it.
 */
const maximumKnownDirectories = 20_000;
const directoryMode = 0o700;
const fileMode = 0o600;
const syncDirectories = process.platform !== 'win32';

/**
 * A directory's own entry in its parent directory. It is durable once the parent has been
 * fsynced after the directory was created: {@link DirectoryEntry.durable} starts that fsync on
 * first use (so it starts after the creation, whoever asks) and shares it with later callers.
 * Only the one level: a directory is durable when its entry and those of its ancestors are.
 */
interface DirectoryEntry {
  durable(): Promise<void>;
}

/**
 * A put creating its directories and opening its temporary file, with the directories (from the
 * root to the target) that a concurrent delete started to remove meanwhile: their incarnation may
 * have changed, so the put neither trusts nor records what the store knows about them.
 */
interface Walk {
  directories: string[];
  disturbed: Set<string>;
}

/** The rmdir() calls of one directory in flight, and its entry from before the first one. */
interface Removal {
  inFlight: number;
  removed: boolean;
  entry: DirectoryEntry | undefined;
}

/** An open temporary file. */
interface TemporaryFile {
  handle: FileHandle;
  path: string;
}

/** What a put created in its directory, and the entries of the directories from the root to it. */
interface Reached<T> {
  created: T;
  entries: DirectoryEntry[];
}

/**
 * A {@link BlobStore} on the local file system: the object `a/b/c` is the file
 * `<directory>/a/b/c`.
 *
 * Design: servers/api/docs/file-blob-store.md (how puts, directories and deletes stay durable).
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
  const syncDirectory = createDirectorySyncer(options.onDirectorySync);
  const writer = createDurableFileWriter({
    threads: options.writerThreads ?? 2,
    mode: fileMode,
    syncDirectory: syncDirectories,
  });
  /** Directories (below the root) whose entries are durable or being made durable, oldest first. */
  const known = new Map<string, DirectoryEntry>();
  /** Puts between their first look at their directories and their open temporary file. */
  const walks = new Set<Walk>();
  /** Directories being removed: rmdir() calls in flight, and what to restore if all fail. */
  const removing = new Map<string, Removal>();
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

  /** Records `directory` as durable once `entry` is, forgetting the oldest beyond the bound. */
  function remember(directory: string, entry: DirectoryEntry): DirectoryEntry {
    known.delete(directory);
    known.set(directory, entry);
    if (known.size > maximumKnownDirectories) {
      const oldest = known.keys().next();
      if (oldest.done !== true) known.delete(oldest.value);
    }
    return entry;
  }

  /** A new entry for `directory`, whose parent is fsynced on first use (see {@link DirectoryEntry}). */
  function entryOf(directory: string): DirectoryEntry {
    let synced: Promise<void> | undefined;
    const entry: DirectoryEntry = {
      durable() {
        synced ??= syncDirectory(path.dirname(directory)).catch((error: unknown) => {
          // Forget it, so that the next put tries again.
          synced = undefined;
          if (known.get(directory) === entry) known.delete(directory);
          throw error;
        });
        return synced;
      },
    };
    return entry;
  }

  /**
   * Creates the directories of `key`. With `trustKnown`, directories the store already knows are
   * taken as there (a new session's folder then costs one mkdir, not one per level); if one was
   * removed behind the store's back, creating its child fails with ENOENT and the caller's next
   * attempt, which trusts nothing, creates every level.
   */
  async function createParents(key: string, walk: Walk, trustKnown: boolean): Promise<'created' | 'retry'> {
    for (const directory of walk.directories) {
      if (trustKnown && known.has(directory) && !walk.disturbed.has(directory)) continue;
      try {
        await mkdir(directory, { mode: directoryMode });
        // Ours, and still there unless a delete started to remove it meanwhile.
        if (!walk.disturbed.has(directory)) remember(directory, entryOf(directory));
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

  /**
   * One attempt at creating a file in the put's directory (`create`: a temporary file, or the
   * object itself). When the store knows the directory it creates the file straight away,
   * otherwise it creates the directories first. `undefined`: a directory is missing, try again.
   */
  async function tryCreateIn<T>(
    key: string,
    walk: Walk,
    parent: string,
    trustKnown: boolean,
    create: () => Promise<T>,
  ): Promise<Reached<T> | undefined> {
    const isKnown = walk.directories.length === 0 || known.has(parent);
    if (!(trustKnown && isKnown) && (await createParents(key, walk, trustKnown)) === 'retry')
      return undefined;
    let created: T;
    try {
      created = await create();
    } catch (error) {
      if (BlobStoreError.isInstance(error)) throw error;
      const code = errorCode(error);
      if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'EISDIR') throw conflict(key, error);
      if (code !== 'ENOENT') throw failure('unavailable', `Cannot write blob ${key} in ${root}`, error);
      return undefined;
    }
    // The directories are in place and stay (the file is in them). One the store does not know
    // was made by an earlier process, which may have crashed before fsyncing its parent; one a
    // delete tried to remove meanwhile may be new. Their parents get fsynced from now on.
    const entries = walk.directories.map((directory) => {
      if (walk.disturbed.has(directory)) return entryOf(directory);
      return known.get(directory) ?? remember(directory, entryOf(directory));
    });
    return { created, entries };
  }

  /**
   * Creates a file in the directory of `key` with `create` (which fails with ENOENT when a
   * directory is missing), creating the directories as needed and again when a concurrent
   * delete removes them meanwhile.
   */
  async function createIn<T>(
    key: string,
    segments: string[],
    parent: string,
    create: () => Promise<T>,
  ): Promise<Reached<T>> {
    const directories: string[] = [];
    for (let index = 1; index < segments.length; index += 1) {
      directories.push(path.join(root, ...segments.slice(0, index)));
    }
    for (let attempt = 1; ; attempt += 1) {
      const walk: Walk = {
        directories,
        disturbed: new Set(directories.filter((directory) => removing.has(directory))),
      };
      walks.add(walk);
      let reached: Reached<T> | undefined;
      try {
        reached = await tryCreateIn(key, walk, parent, attempt === 1, create);
      } finally {
        walks.delete(walk);
      }
      if (reached !== undefined) return reached;
      // ENOENT: the root disappeared (fail), or a directory was removed (retry).
      await assertRootIsDirectory();
      if (attempt >= maximumAttempts) {
        throw failure(
          'unavailable',
          `Cannot create the directory of blob ${key} in ${root}: it keeps disappearing`,
        );
      }
    }
  }

  /** Opens a new temporary file beside the target. */
  function openTemporaryFile(parent: string): () => Promise<TemporaryFile> {
    return async () => {
      const temporary = path.join(parent, `.tmp~${randomBytes(8).toString('hex')}`);
      return { handle: await open(temporary, 'wx', fileMode), path: temporary };
    };
  }

  async function put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void> {
    await ensureRoot();
    const segments = key.split('/');
    const target = pathOf(key);
    const parent = path.dirname(target);
    if (options?.writeOnce === true) return putInPlace(key, bytes, segments, target, parent);
    const {
      created: { handle, path: temporary },
      entries,
    } = await createIn(key, segments, parent, openTemporaryFile(parent));
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
    // The rename is durable once the directory is fsynced (by an fsync that starts now); then
    // wait for the directories' own entries, innermost first: fsyncs this put or a concurrent
    // one started for directories they created or found unknown, nothing for known ones.
    await syncDirectory(parent);
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      await entries[index]?.durable();
    }
  }

  /**
   * A write-once put: the new file is written where it belongs, fsynced, then its directory, all
   * on one of the writer's threads (see `durable-file-writer.ts`). A file that exists already is a
   * `key_conflict`. The directory's fsync is not shared with concurrent puts, as it is for puts
   * with a temporary file: on the server's chunk layout a session's chunks arrive one at a time,
   * so there is nothing to share, and one message beats the round trips of a shared fsync.
   */
  async function putInPlace(
    key: string,
    bytes: Uint8Array,
    segments: string[],
    target: string,
    parent: string,
  ): Promise<void> {
    const { entries } = await createIn(key, segments, parent, async () => {
      if (syncDirectories) notifyDirectorySync(options.onDirectorySync, parent);
      try {
        await writer.write(target, parent, bytes);
      } catch (error) {
        if (DurableWriteError.isInstance(error) && error.stage === 'open') throw error;
        throw failure('unavailable', `Cannot write blob ${key} in ${root}`, error);
      }
    });
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      await entries[index]?.durable();
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
    await syncAfterUnlink(path.dirname(target));
    // Best effort: remove the directories this delete left empty (a deleted session's folder).
    for (let directory = path.dirname(target); directory !== root; directory = path.dirname(directory)) {
      const removal = startRemoval(directory);
      let removed = false;
      try {
        await rmdir(directory);
        removed = true;
      } catch {
        break;
      } finally {
        endRemoval(directory, removal, removed);
      }
    }
  }

  /**
   * Before an rmdir(): forget the directory (a put re-creating it fsyncs its parent again), and
   * tell the puts on their way through it not to trust or record what they find until it is done.
   */
  function startRemoval(directory: string): Removal {
    let removal = removing.get(directory);
    if (removal === undefined) {
      removal = { inFlight: 0, removed: false, entry: known.get(directory) };
      removing.set(directory, removal);
    }
    removal.inFlight += 1;
    known.delete(directory);
    for (const walk of walks) {
      if (walk.directories.includes(directory)) walk.disturbed.add(directory);
    }
    return removal;
  }

  /** After an rmdir(): if none removed the directory (not empty), it is the same one as before. */
  function endRemoval(directory: string, removal: Removal, removed: boolean): void {
    removal.removed ||= removed;
    removal.inFlight -= 1;
    if (removal.inFlight > 0) return;
    removing.delete(directory);
    if (!removal.removed && removal.entry !== undefined && !known.has(directory)) {
      remember(directory, removal.entry);
    }
  }

  /**
   * fsyncs the directory of an object just deleted. A concurrent delete may have removed the
   * directory meanwhile (it was empty); then the nearest directory still there is fsynced, which
   * makes the removal durable, and the object's removal with it.
   */
  async function syncAfterUnlink(directory: string): Promise<void> {
    for (let current = directory; ; current = path.dirname(current)) {
      try {
        await syncDirectory(current);
        return;
      } catch (error) {
        const cause = error instanceof Error ? error.cause : undefined;
        if (current === root || errorCode(cause) !== 'ENOENT') throw error;
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

  return createBlobStore('file', `file blob store at ${root}`, {
    put,
    get,
    remove,
    check,
    close: () => writer.close(),
  });
}

/**
 * fsyncs directories, coalescing: a request is always served by an fsync that starts after it
 * (what it must make durable happened before the request), so per directory at most one fsync
 * runs and one waits; every request made while one runs joins the waiting one.
 */
function createDirectorySyncer(onSync: ((directory: string) => void) | undefined) {
  const syncers = new Map<string, () => Promise<void>>();
  return function syncDirectory(directory: string): Promise<void> {
    if (!syncDirectories) return Promise.resolve();
    let sync = syncers.get(directory);
    if (sync === undefined) {
      sync = coalesce(
        () => fsyncDirectory(directory, onSync),
        () => syncers.delete(directory),
      );
      syncers.set(directory, sync);
    }
    return sync();
  };
}

/** Calls the diagnostics hook; an exception it throws does not get to break the store. */
function notifyDirectorySync(onSync: ((directory: string) => void) | undefined, directory: string): void {
  try {
    onSync?.(directory);
  } catch {
    // Ignored: see FileBlobStoreOptions.onDirectorySync.
  }
}

async function fsyncDirectory(
  directory: string,
  onSync: ((directory: string) => void) | undefined,
): Promise<void> {
  notifyDirectorySync(onSync, directory);
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
