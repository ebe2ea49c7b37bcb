import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobStoreError } from './blob-store.ts';
import { createFileBlobStore } from './file-blob-store.ts';

let scratch: string;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'svc-file-blobs-'));
});

afterEach(async () => {
  await chmod(scratch, 0o700).catch(() => {});
  await rm(scratch, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<BlobStoreError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!BlobStoreError.isInstance(error)) throw new Error(`expected a BlobStoreError, got ${String(error)}`);
  return error;
}

/**
 * A directory the process cannot create files in. Permissions do not stop root, so as root
 * (CI runs as root) this is /sys, where nobody can create files.
 */
async function unwritableDirectory(): Promise<string> {
  const directory = path.join(scratch, 'read-only');
  await mkdir(directory);
  await chmod(directory, 0o500);
  const writable = await writeFile(path.join(directory, 'probe'), 'x').then(
    () => true,
    () => false,
  );
  return writable ? '/sys' : directory;
}

describe('createFileBlobStore', () => {
  it('keeps the object `a/b/c` in the file <directory>/a/b/c, mode 0600, directories 0700', async () => {
    const store = createFileBlobStore({ directory: scratch });
    const bytes = new Uint8Array(randomBytes(100));
    await store.put('proj_1/ses_1/00000001', bytes);
    const file = path.join(scratch, 'proj_1', 'ses_1', '00000001');
    expect(Buffer.compare(await readFile(file), bytes)).toBe(0);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(scratch, 'proj_1'))).mode & 0o777).toBe(0o700);
    expect(await readdir(path.join(scratch, 'proj_1', 'ses_1'))).toEqual(['00000001']); // no temporary file left
    await store.close();
  });

  it('ignores a temporary file left by a crash: invisible to get, harmless to later puts', async () => {
    const store = createFileBlobStore({ directory: scratch });
    const key = 'proj_1/ses_1/00000001';
    const first = new Uint8Array(randomBytes(1000));
    await store.put(key, first);
    // A crash between "write the temporary file" and "rename it": a partial new version.
    const leftover = path.join(scratch, 'proj_1', 'ses_1', '.tmp~0123456789abcdef');
    await writeFile(leftover, randomBytes(10));

    expect(Buffer.compare(Buffer.from((await store.get(key)) ?? []), first)).toBe(0);
    expect((await rejection(store.get('proj_1/ses_1/.tmp~0123456789abcdef'))).code).toBe('invalid_key');

    const second = new Uint8Array(randomBytes(2000));
    await store.put(key, second);
    expect(Buffer.compare(Buffer.from((await store.get(key)) ?? []), second)).toBe(0);
    await store.put('proj_1/ses_1/00000002', first);
    expect(Buffer.compare(Buffer.from((await store.get('proj_1/ses_1/00000002')) ?? []), first)).toBe(0);
    await store.close();
  });

  it('refuses an invalid key without touching the disk', async () => {
    const directory = path.join(scratch, 'not-yet');
    const store = createFileBlobStore({ directory });
    expect((await rejection(store.put('../escaped', new Uint8Array([1])))).code).toBe('invalid_key');
    expect((await rejection(store.get('/etc/passwd'))).code).toBe('invalid_key');
    expect((await rejection(store.delete('a/../../escaped'))).code).toBe('invalid_key');
    await expect(stat(directory)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(path.join(scratch, 'escaped'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('creates a missing directory and its parents on first use', async () => {
    const directory = path.join(scratch, 'data', 'blobs');
    const store = createFileBlobStore({ directory });
    await store.check();
    expect((await stat(directory)).isDirectory()).toBe(true);
    await store.close();
  });

  it('fails check() with unavailable on a missing directory when told not to create it', async () => {
    const directory = path.join(scratch, 'missing');
    const store = createFileBlobStore({ directory, createDirectory: false });
    const error = await rejection(store.check());
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain(`The blob directory ${directory} does not exist`);
    expect(error.message).toContain('ENOENT');
    expect((await rejection(store.put('a', new Uint8Array([1])))).code).toBe('unavailable');
    expect((await rejection(store.get('a'))).code).toBe('unavailable');
    await expect(stat(directory)).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('does not re-create its directory once used: a vanished directory (unmounted volume) is unavailable', async () => {
    const directory = path.join(scratch, 'volume');
    const store = createFileBlobStore({ directory });
    await store.put('a/b', new Uint8Array([1]));
    await rm(directory, { recursive: true });
    expect((await rejection(store.check())).code).toBe('unavailable');
    const error = await rejection(store.put('a/b', new Uint8Array([2])));
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain('does not exist');
    // A missing object would be null; a missing store is an error.
    expect((await rejection(store.get('a/b'))).code).toBe('unavailable');
    await expect(stat(directory)).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('fails check() with unavailable when the directory is a file', async () => {
    const file = path.join(scratch, 'a-file');
    await writeFile(file, 'x');
    const error = await rejection(createFileBlobStore({ directory: file }).check());
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain('is not a directory');
  });

  it('fails check() with unavailable when the directory is not writable', async () => {
    const directory = await unwritableDirectory();
    const store = createFileBlobStore({ directory });
    const error = await rejection(store.check());
    expect(error.code).toBe('unavailable');
    expect(error.message).toBe(`The blob directory ${directory} is not writable (EACCES)`);
    expect((await rejection(store.put('a', new Uint8Array([1])))).code).toBe('unavailable');
  });

  it('refuses a key whose path is a directory of other keys, or under an object, with key_conflict', async () => {
    const store = createFileBlobStore({ directory: scratch });
    await store.put('object', new Uint8Array([1]));
    expect((await rejection(store.put('object/child', new Uint8Array([2])))).code).toBe('key_conflict');
    await store.put('folder/child', new Uint8Array([3]));
    expect((await rejection(store.put('folder', new Uint8Array([4])))).code).toBe('key_conflict');
    // Neither object was harmed, and no temporary file was left behind.
    expect(await store.get('object')).toEqual(new Uint8Array([1]));
    expect(await store.get('folder/child')).toEqual(new Uint8Array([3]));
    expect(await store.get('folder')).toBeNull();
    expect(await store.get('object/child')).toBeNull();
    expect((await readdir(scratch)).sort()).toEqual(['folder', 'object']);
    expect(await readdir(path.join(scratch, 'folder'))).toEqual(['child']);
    await store.close();
  });

  it('removes the directories a delete leaves empty, and only those', async () => {
    const store = createFileBlobStore({ directory: scratch });
    await store.put('proj_1/ses_1/00000001', new Uint8Array([1]));
    await store.put('proj_1/ses_2/00000001', new Uint8Array([2]));
    await store.delete('proj_1/ses_1/00000001');
    expect(await readdir(path.join(scratch, 'proj_1'))).toEqual(['ses_2']);
    await store.delete('proj_1/ses_2/00000001');
    expect(await readdir(scratch)).toEqual([]);
    // The folder is free again for an object of that name.
    await store.put('proj_1', new Uint8Array([3]));
    expect(await store.get('proj_1')).toEqual(new Uint8Array([3]));
    await store.close();
  });

  it('re-creates folders removed behind its back, for new and known folders, in both put modes', async () => {
    const store = createFileBlobStore({ directory: scratch });
    for (const writeOnce of [false, true]) {
      await store.put('proj_1/sessions/ses_1/0', new Uint8Array([1]), { writeOnce });
      // Another process (or an operator) removes a folder the store knows.
      await rm(path.join(scratch, 'proj_1'), { recursive: true });
      // A new session's folder under it, then the known session folder itself.
      await store.put('proj_1/sessions/ses_2/0', new Uint8Array([2]), { writeOnce });
      await store.put('proj_1/sessions/ses_1/1', new Uint8Array([3]), { writeOnce });
      expect(await store.get('proj_1/sessions/ses_2/0')).toEqual(new Uint8Array([2]));
      expect(await store.get('proj_1/sessions/ses_1/1')).toEqual(new Uint8Array([3]));
      expect((await readdir(path.join(scratch, 'proj_1', 'sessions'))).sort()).toEqual(['ses_1', 'ses_2']);
      await rm(path.join(scratch, 'proj_1'), { recursive: true });
    }
    await store.close();
  });

  it('keeps puts working while deletes remove the same folder concurrently', async () => {
    const store = createFileBlobStore({ directory: scratch });
    for (let round = 0; round < 20; round += 1) {
      await store.put('proj_1/ses_1/old', new Uint8Array([0]));
      await Promise.all([
        store.delete('proj_1/ses_1/old'),
        store.put('proj_1/ses_1/new', new Uint8Array([round])),
      ]);
      expect(await store.get('proj_1/ses_1/new')).toEqual(new Uint8Array([round]));
      await store.delete('proj_1/ses_1/new');
    }
    await store.close();
  });

  it('close() waits for puts in flight, then refuses operations with closed', async () => {
    const store = createFileBlobStore({ directory: scratch });
    let stored = false;
    const put = store.put('big', new Uint8Array(4 * 1024 * 1024)).then(() => {
      stored = true;
    });
    await store.close();
    expect(stored).toBe(true);
    await put;
    expect((await rejection(store.get('big'))).code).toBe('closed');
    expect((await rejection(store.put('big', new Uint8Array([1])))).code).toBe('closed');
    expect((await stat(path.join(scratch, 'big'))).size).toBe(4 * 1024 * 1024);
  });

  it('refuses an empty directory option', () => {
    expect(() => createFileBlobStore({ directory: '' })).toThrow(TypeError);
  });
});
