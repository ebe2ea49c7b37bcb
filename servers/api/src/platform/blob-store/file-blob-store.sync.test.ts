import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileBlobStore, type FileBlobStoreOptions } from './file-blob-store.ts';

// Which directories the store fsyncs, observed through its diagnostics hook on a real directory.
const syncsDirectories = process.platform !== 'win32';

let scratch: string;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'svc-file-blob-syncs-'));
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A store over `scratch` that records the directories it fsyncs, relative to `scratch`. */
function observedStore(options: Partial<FileBlobStoreOptions> = {}) {
  const synced: string[] = [];
  const store = createFileBlobStore({
    directory: scratch,
    onDirectorySync: (directory) => synced.push(path.relative(scratch, directory) || '.'),
    ...options,
  });
  /** The directories fsynced since the last call. */
  const take = () => synced.splice(0);
  return { store, take };
}

function chunkKey(session: string, sequence: number): string {
  return `projects/p/sessions/${session}/${String(sequence).padStart(10, '0')}.${randomBytes(8).toString('hex')}.chunk`;
}

function bytes(size = 3000): Uint8Array {
  return new Uint8Array(randomBytes(size));
}

function expectSameBytes(actual: Uint8Array | null, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(Buffer.compare(Buffer.from(actual ?? []), Buffer.from(expected))).toBe(0);
}

/**
 * Puts into session s1 (from seq `firstSeq`) and then s2, and checks the directories fsynced: at
 * first every directory of the key up to the root (none is known yet), then only s1's, then s2
 * and its new entry in `sessions`.
 */
async function expectDirectorySyncs(
  store: ReturnType<typeof observedStore>['store'],
  take: () => string[],
  firstSeq: number,
): Promise<void> {
  await store.put(chunkKey('s1', firstSeq), bytes());
  expect(take()).toEqual(['projects/p/sessions/s1', 'projects/p/sessions', 'projects/p', 'projects', '.']);
  await store.put(chunkKey('s1', firstSeq + 1), bytes());
  expect(take()).toEqual(['projects/p/sessions/s1']);
  await store.put(chunkKey('s2', 1), bytes());
  expect(take()).toEqual(['projects/p/sessions/s2', 'projects/p/sessions']);
}

/** Every file and directory below `directory`, relative to it. */
async function listTree(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true });
  return entries.map(String).sort();
}

describe('file blob store write-once puts', () => {
  it('writes in place, without a temporary file, and refuses a key that exists', async () => {
    const { store, take } = observedStore();
    const key = chunkKey('s1', 1);
    const first = bytes();
    await store.put(key, first, { writeOnce: true });
    expectSameBytes(await store.get(key), first);
    expect((await listTree(scratch)).filter((name) => name.includes('~'))).toEqual([]);
    take();

    // A second write-once put into the known directory fsyncs only that directory.
    await store.put(chunkKey('s1', 2), bytes(), { writeOnce: true });
    if (syncsDirectories) expect(take()).toEqual(['projects/p/sessions/s1']);

    const error = await store.put(key, bytes(), { writeOnce: true }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'key_conflict' });
    expectSameBytes(await store.get(key), first);
  });

  it('keeps every concurrent write-once put, byte for byte', async () => {
    const { store } = observedStore();
    const written = Array.from({ length: 40 }, (_, index) => ({
      key: chunkKey(`s${index % 5}`, index),
      body: bytes(1000 + index),
    }));
    await Promise.all(written.map(({ key, body }) => store.put(key, body, { writeOnce: true })));
    for (const { key, body } of written) expectSameBytes(await store.get(key), body);
  });
});

describe.runIf(syncsDirectories)('file blob store directory fsyncs', () => {
  it('fsyncs the parents of the directories a put creates, then only the directory for later puts', async () => {
    const { store, take } = observedStore();
    await store.check();
    take();

    // The rename, then the entries of the new directories, innermost first.
    await expectDirectorySyncs(store, take, 1);
    await store.close();
  });

  it('coalesces the fsyncs of concurrent puts into one directory, each served by an fsync that started after its rename', async () => {
    const { store, take } = observedStore();
    await store.put(chunkKey('s1', 0), bytes());
    take();
    const directory = path.join(scratch, 'projects', 'p', 'sessions', 's1');
    // What the directory held when each of its fsyncs started.
    const snapshots: Set<string>[] = [];
    const recording = createFileBlobStore({
      directory: scratch,
      onDirectorySync: (synced) => {
        if (synced === directory) snapshots.push(new Set(readdirSync(directory)));
      },
    });
    // Warm up the second store's knowledge of the directories (it did not create them).
    await recording.put(chunkKey('s1', 1), bytes());
    snapshots.length = 0;

    const keys = Array.from({ length: 20 }, (_, index) => chunkKey('s1', index + 2));
    const servedAfterRename = await Promise.all(
      keys.map((key) =>
        recording.put(key, bytes()).then(() => {
          const name = path.basename(key);
          // Resolved: an fsync of the directory that started after the rename (it saw the file).
          return snapshots.some((snapshot) => snapshot.has(name));
        }),
      ),
    );
    expect(servedAfterRename).toEqual(keys.map(() => true));
    expect(snapshots.length).toBeGreaterThan(0);
    // Typically 2: the one running when the first rename came, and one for all the others.
    expect(snapshots.length).toBeLessThanOrEqual(keys.length / 2);
    await recording.close();
    await store.close();
  });

  it('fsyncs the parent of a directory an earlier store created once, and keeps its objects', async () => {
    const earlier = createFileBlobStore({ directory: scratch });
    const first = chunkKey('s1', 1);
    const firstBytes = bytes();
    await earlier.put(first, firstBytes);
    await earlier.close();

    const { store, take } = observedStore();
    // Unknown directories: an earlier process may have crashed before fsyncing their parents.
    await expectDirectorySyncs(store, take, 2);
    expectSameBytes(await store.get(first), firstBytes);
    await store.close();
  });

  it('forgets the directories a delete removes: a put re-creating them fsyncs their parents again', async () => {
    const { store, take } = observedStore();
    const lone = chunkKey('s1', 1);
    await store.put(lone, bytes());
    await store.put(chunkKey('s2', 1), bytes());
    await store.delete(lone);
    expect(await readdir(path.join(scratch, 'projects', 'p', 'sessions'))).toEqual(['s2']);
    take();

    await store.put(chunkKey('s1', 2), bytes());
    expect(take()).toEqual(['projects/p/sessions/s1', 'projects/p/sessions']);

    // The whole tree goes with the last object; putting again re-creates and re-syncs all of it.
    for (const key of await listTree(scratch)) {
      if (key.endsWith('.chunk')) await store.delete(key);
    }
    expect(await readdir(scratch)).toEqual([]);
    take();
    await store.put(chunkKey('s1', 3), bytes());
    expect(take()).toEqual(['projects/p/sessions/s1', 'projects/p/sessions', 'projects/p', 'projects', '.']);
    await store.close();
  });
});

describe('file blob store under concurrent puts and deletes', () => {
  it.runIf(syncsDirectories)(
    'resolves each put only after fsyncs that saw its file and each of its directories',
    async () => {
      // For each directory, what it held (name -> inode) whenever an fsync of it started.
      const snapshots = new Map<string, Map<string, number>[]>();
      const store = createFileBlobStore({
        directory: scratch,
        onDirectorySync: (directory) => {
          const snapshot = new Map<string, number>();
          for (const name of readdirSync(directory)) {
            snapshot.set(name, lstatSync(path.join(directory, name)).ino);
          }
          snapshots.set(directory, [...(snapshots.get(directory) ?? []), snapshot]);
        },
      });
      const unsynced: string[] = [];
      /** On resolution: the file and every directory up to the root were in an fsynced directory. */
      const checkDurable = (key: string) => {
        for (
          let entry = path.join(scratch, ...key.split('/'));
          entry !== scratch;
          entry = path.dirname(entry)
        ) {
          const inode = lstatSync(entry).ino;
          const seen = snapshots.get(path.dirname(entry)) ?? [];
          if (!seen.some((snapshot) => snapshot.get(path.basename(entry)) === inode)) {
            unsynced.push(`${path.relative(scratch, entry)} of ${key}`);
          }
        }
      };

      // Per session: the only object is deleted while the next one is put, so deletes remove
      // (and puts re-create) session directories, and sometimes the directories above them.
      await Promise.all(
        Array.from({ length: 6 }, async (_, session) => {
          let previous: string | undefined;
          for (let round = 0; round < 15; round += 1) {
            const key = chunkKey(`s${session}`, round);
            const removal = previous === undefined ? Promise.resolve() : store.delete(previous);
            await Promise.all([removal, store.put(key, bytes(200)).then(() => checkDurable(key))]);
            previous = key;
          }
        }),
      );
      expect(unsynced).toEqual([]);
      await store.close();
    },
  );

  it('keeps every put that resolved, byte for byte, and nothing that was deleted', async () => {
    const store = createFileBlobStore({ directory: scratch });
    const kept = new Map<string, Uint8Array>();
    const deleted = new Set<string>();

    // Sessions that start with one object, deleted while other puts go into the same session,
    // so deletes remove directories that puts are about to use.
    const existing: string[] = [];
    for (let session = 0; session < 6; session += 1) {
      const key = chunkKey(`s${session}`, 0);
      await store.put(key, bytes(100));
      existing.push(key);
    }

    let sequence = 1;
    const operations: Promise<void>[] = [];
    for (let round = 0; round < 5; round += 1) {
      for (let session = 0; session < 12; session += 1) {
        // Long-lived objects, into the pre-existing sessions and into new ones.
        const key = chunkKey(`s${session}`, sequence++);
        const content = bytes(1 + ((sequence * 997) % 5000));
        operations.push(store.put(key, content).then(() => void kept.set(key, content)));
        // Short-lived ones: stored, then deleted, which removes the session when it is the last.
        const transient = chunkKey(`t${session}-${round}`, sequence++);
        operations.push(
          store.put(transient, bytes(200)).then(async () => {
            await store.delete(transient);
            deleted.add(transient);
          }),
        );
      }
      const old = existing[round];
      if (old !== undefined) {
        operations.push(store.delete(old).then(() => void deleted.add(old)));
      }
    }
    const outcomes = await Promise.allSettled(operations);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);

    expect(kept.size).toBe(60);
    for (const [key, content] of kept) expectSameBytes(await store.get(key), content);
    expect(deleted.size).toBe(65);
    for (const key of deleted) expect(await store.get(key)).toBeNull();

    // On disk: exactly the kept objects (plus the one pre-existing object not deleted), no
    // temporary file, and no directory of a deleted session.
    const files = (await listTree(scratch)).filter((entry) => !kept.has(entry) && entry.includes('.'));
    expect(files).toEqual(existing.slice(5));
    const sessions = await readdir(path.join(scratch, 'projects', 'p', 'sessions'));
    expect(sessions.filter((name) => name.startsWith('t'))).toEqual([]);
    await store.close();
  });

  it('deletes every object of a session concurrently, and the session directory with them', async () => {
    const store = createFileBlobStore({ directory: scratch });
    for (let round = 0; round < 10; round += 1) {
      const keys = Array.from({ length: 8 }, (_, index) => chunkKey('s1', index));
      await Promise.all(keys.map((key) => store.put(key, bytes(100))));
      // The last delete removes the directory while the others may still be fsyncing it.
      await Promise.all(keys.map((key) => store.delete(key)));
      expect(await readdir(scratch)).toEqual([]);
    }
    await store.close();
  });

  it('serves a fresh store over the same directory after concurrent work', async () => {
    const first = createFileBlobStore({ directory: scratch });
    const contents = new Map<string, Uint8Array>();
    await Promise.all(
      Array.from({ length: 30 }, async (_, index) => {
        const key = chunkKey(`s${index % 3}`, index);
        const content = bytes(500);
        await first.put(key, content);
        contents.set(key, content);
      }),
    );
    await first.close();

    const second = createFileBlobStore({ directory: scratch });
    const more = chunkKey('s0', 100);
    const moreBytes = bytes();
    await Promise.all([
      second.put(more, moreBytes),
      ...[...contents.keys()].slice(0, 10).map((key) => second.delete(key)),
    ]);
    for (const [index, [key, content]] of [...contents].entries()) {
      if (index < 10) expect(await second.get(key)).toBeNull();
      else expectSameBytes(await second.get(key), content);
    }
    expectSameBytes(await second.get(more), moreBytes);
    await second.close();
  });
});
