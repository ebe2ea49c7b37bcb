import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFileBlobStore } from './file-blob-store.ts';

// Records the file system calls the store makes (they still happen, on a real directory), to
// pin down the order that makes a put crash-safe.
const recorder = vi.hoisted(() => ({ calls: [] as string[], root: '' }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const show = (target: unknown) =>
    path
      .relative(recorder.root, String(target))
      .replace(/\.tmp~[0-9a-f]{16}$/, '<temporary>')
      .replace(/^$/, '.');
  const record = (entry: string) => {
    if (recorder.root !== '') recorder.calls.push(entry);
  };
  return {
    ...actual,
    mkdir: async (target: string, options?: Parameters<typeof actual.mkdir>[1]) => {
      record(`mkdir ${show(target)}`);
      return actual.mkdir(target, options);
    },
    rename: async (from: string, to: string) => {
      record(`rename ${show(from)} ${show(to)}`);
      return actual.rename(from, to);
    },
    open: async (target: string, flags?: string, mode?: number) => {
      const handle = await actual.open(target, flags, mode);
      const name = show(target);
      record(`open ${name} ${flags ?? 'r'}`);
      const { writeFile, sync, close } = handle;
      handle.writeFile = (...parameters: Parameters<typeof writeFile>) => {
        record(`write ${name}`);
        return writeFile.apply(handle, parameters);
      };
      handle.sync = () => {
        record(`fsync ${name}`);
        return sync.apply(handle);
      };
      handle.close = () => {
        record(`close ${name}`);
        return close.apply(handle);
      };
      return handle;
    },
  };
});

describe('file blob store durability', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'svc-durable-blobs-'));
    recorder.calls = [];
  });

  afterEach(async () => {
    recorder.root = '';
    await rm(directory, { recursive: true, force: true });
  });

  it('writes a temporary file, fsyncs it, renames it over the target, then fsyncs the directories', async () => {
    const store = createFileBlobStore({ directory });
    await store.check(); // prepares the root
    recorder.root = directory;
    await store.put('proj_1/ses_1/00000001', new Uint8Array([1, 2, 3]));
    expect(recorder.calls).toEqual([
      'mkdir proj_1',
      'mkdir proj_1/ses_1',
      'open proj_1/ses_1/<temporary> wx',
      'write proj_1/ses_1/<temporary>',
      'fsync proj_1/ses_1/<temporary>',
      'close proj_1/ses_1/<temporary>',
      'rename proj_1/ses_1/<temporary> proj_1/ses_1/00000001',
      // The new directory entry, then the entries of the (possibly new) parent directories.
      'open proj_1/ses_1 r',
      'fsync proj_1/ses_1',
      'close proj_1/ses_1',
      'open proj_1 r',
      'fsync proj_1',
      'close proj_1',
      'open . r',
      'fsync .',
      'close .',
    ]);
    await store.close();
  });

  it('fsyncs the parents of a blob directory it creates', async () => {
    const root = path.join(directory, 'data', 'blobs');
    recorder.root = directory;
    const store = createFileBlobStore({ directory: root });
    await store.check();
    expect(recorder.calls.slice(0, 6)).toEqual([
      'mkdir data/blobs',
      'open . r',
      'fsync .',
      'close .',
      'open data r',
      'fsync data',
    ]);
    await store.close();
  });
});
