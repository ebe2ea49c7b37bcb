import { execFile } from 'node:child_process';
import { type FileHandle, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { coalesce } from '../coalesce.ts';

const execFileAsync = promisify(execFile);

/**
 * Postgres settings that make {@link createPGliteDurability}'s guarantee hold, passed on PGlite's
 * command line. A checkpoint writes data pages without fsync (PGlite runs Postgres with `-F`) and
 * then removes WAL segments older than the checkpoint; keeping `wal_keep_size` of WAL, several
 * times the distance between checkpoints (about `max_wal_size` / 1.9), means a segment is only
 * removed long after the pages it covers were flushed by the full sync that follows every
 * checkpoint. Costs at most about 224 MB of WAL on disk.
 */
export const PGLITE_DURABILITY_SETTINGS: readonly string[] = ['max_wal_size=64MB', 'wal_keep_size=160MB'];

/** Where the write-ahead log is, and what the last checkpoint was: one query. */
export interface WalPosition {
  /** The WAL segment file holding the current write position, e.g. `00000001000000000000000E`. */
  segment: string;
  /** The last checkpoint's redo position: when it moves, a checkpoint ran. */
  redo: string;
}

/** What a flush did, for tests and diagnostics. */
export type DurabilityEvent =
  | { kind: 'wal'; segments: string[] }
  | { kind: 'full'; reason: 'first' | 'checkpoint' | 'close' };

/** Options of {@link createPGliteDurability}. */
export interface PGliteDurabilityOptions {
  /** PGlite's data directory. */
  directory: string;
  /** Runs `select pg_walfile_name(pg_current_wal_lsn()), redo_lsn from pg_control_checkpoint()`. */
  position(): Promise<WalPosition>;
  /** Diagnostics hook: called after each flush with what it made durable. */
  onFlush?: (event: DurabilityEvent) => void;
}

/** Makes what PGlite has committed durable; see {@link createPGliteDurability}. */
export interface PGliteDurability {
  /**
   * Resolves once every transaction committed before the call is on disk. Calls made while a
   * flush runs share the next one.
   */
  flush(): Promise<void>;
  /** Flushes every file of the data directory (after PGlite has closed). */
  flushAll(reason: 'close'): Promise<void>;
}

/**
 * PGlite runs Postgres with `fsync=off` and its file system has no fsync: a committed transaction
 * survives the process being killed (its writes are in the operating system's cache), but not a
 * power loss or a kernel crash. This barrier adds what Postgres' own `fsync=on` would do at
 * commit, from outside: after a commit it fsyncs the WAL segments written since the last flush,
 * so the commit record is on disk before the server answers. Data pages are only written by
 * checkpoints; when one has run since the last flush (its redo position moved), every file of the
 * data directory is flushed (`sync -f`, i.e. syncfs(2), on Linux; one fsync per file elsewhere)
 * before WAL older than it can be removed (see {@link PGLITE_DURABILITY_SETTINGS}). The first
 * flush is a full one too, for whatever a previous process left in the cache.
 *
 * @example
 * ```ts
 * const durability = createPGliteDurability({ directory, position: () => readWalPosition(pglite) });
 * await insertRows();
 * await durability.flush();
 * ```
 */
export function createPGliteDurability(options: PGliteDurabilityOptions): PGliteDurability {
  const walDirectory = path.join(options.directory, 'pg_wal');
  let synced: WalPosition | undefined;

  async function flushOnce(): Promise<void> {
    const position = await options.position();
    if (synced === undefined || position.redo !== synced.redo) {
      await syncTree(options.directory);
      options.onFlush?.({ kind: 'full', reason: synced === undefined ? 'first' : 'checkpoint' });
      synced = position;
      return;
    }
    let segments = [position.segment];
    if (position.segment !== synced.segment) {
      // Every segment written since the last flush: names sort in WAL order. Later names are
      // recycled segments waiting to be used, not written yet.
      const names = await readdir(walDirectory);
      const from = synced.segment;
      segments = names.filter((name) => isSegment(name) && name >= from && name <= position.segment).sort();
    }
    for (const segment of segments) await fsyncPath(path.join(walDirectory, segment), 'r+');
    // A segment that is new in the directory needs its directory entry on disk too.
    if (segments.length > 1) await fsyncPath(walDirectory, 'r');
    options.onFlush?.({ kind: 'wal', segments });
    synced = position;
  }

  const flush = coalesce(flushOnce);
  return {
    flush,
    async flushAll(reason) {
      await syncTree(options.directory);
      options.onFlush?.({ kind: 'full', reason });
    },
  };
}

function isSegment(name: string): boolean {
  return /^[0-9A-F]{24}$/.test(name);
}

async function fsyncPath(target: string, flags: 'r' | 'r+'): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(target, flags);
    await handle.sync();
  } finally {
    await handle?.close();
  }
}

/** Flushes every file and directory under `directory` to disk. */
async function syncTree(directory: string): Promise<void> {
  if (process.platform === 'linux') {
    try {
      // syncfs(2) of the file system holding the directory: one call, whatever the file count.
      await execFileAsync('sync', ['-f', directory], { timeout: 60_000 });
      return;
    } catch {
      // No coreutils `sync -f` (busybox, ...): fsync file by file below.
    }
  }
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  for (const entry of entries) {
    const target = path.join(entry.parentPath, entry.name);
    if (entry.isFile()) await fsyncPath(target, 'r+');
  }
  for (const entry of entries) {
    if (entry.isDirectory()) await fsyncPath(path.join(entry.parentPath, entry.name), 'r');
  }
  await fsyncPath(directory, 'r');
}
