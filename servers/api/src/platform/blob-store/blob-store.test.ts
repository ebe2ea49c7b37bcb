import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BlobStore, BlobStoreError, isValidBlobKey } from './blob-store.ts';
import { createFileBlobStore } from './file-blob-store.ts';
import { createS3BlobStore } from './s3-blob-store.ts';
import { startS3rver } from './s3rver-fixture.ts';

/** The same contract, run against every implementation. */
const implementations: {
  kind: BlobStore['kind'];
  open(): Promise<{ store: BlobStore; stop(): Promise<void> }>;
}[] = [
  {
    kind: 'file',
    async open() {
      const directory = await mkdtemp(path.join(tmpdir(), 'svc-blobs-'));
      const store = createFileBlobStore({ directory });
      return {
        store,
        async stop() {
          await store.close();
          await rm(directory, { recursive: true, force: true });
        },
      };
    },
  },
  {
    kind: 's3',
    async open() {
      const server = await startS3rver();
      const store = createS3BlobStore(server.options);
      return {
        store,
        async stop() {
          await store.close();
          await server.stop();
        },
      };
    },
  },
];

const invalidKeys: [description: string, key: string][] = [
  ['empty', ''],
  ['parent traversal', '../x'],
  ['parent', '..'],
  ['current', '.'],
  ['absolute', '/abs'],
  ['empty segment', 'a//b'],
  ['dot segment', 'a/./b'],
  ['dot-dot segment', 'a/../b'],
  ['trailing slash', 'a/'],
  ['NUL', 'x\0y'],
  ['backslash', 'a\\b'],
  ['backslash traversal', '..\\x'],
  ['space', 'a b'],
  ['non-ASCII', '\u00e9'],
  ['tilde (temporary files)', 'a~b'],
  ['colon', 'a:b'],
  ['segment over 255 characters', 'x'.repeat(256)],
  ['key over 1024 characters', `${'a/'.repeat(512)}b`],
];

let counter = 0;
/** A fresh key per test, so tests do not see each other's objects. */
function uniqueKey(name = 'chunk'): string {
  counter += 1;
  return `proj_test/ses_${counter}_${randomBytes(4).toString('hex')}/${name}`;
}

function expectSameBytes(actual: Uint8Array | null, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(actual?.byteLength).toBe(expected.byteLength);
  // One comparison instead of an element-wise diff of megabytes.
  expect(Buffer.compare(Buffer.from(actual ?? []), Buffer.from(expected))).toBe(0);
}

describe('isValidBlobKey', () => {
  it.each(['proj_1/ses_2/00000003', 'a', 'a.b-c_D/9', '...', '.hidden/x', `${'x'.repeat(255)}/y`])(
    'accepts %j',
    (key) => {
      expect(isValidBlobKey(key)).toBe(true);
    },
  );

  it.each(invalidKeys)('refuses a key with %s', (_, key) => {
    expect(isValidBlobKey(key)).toBe(false);
  });

  it('bounds the whole key at 1024 characters', () => {
    const segments = (last: number) =>
      [200, 200, 200, 200, last].map((length) => 'a'.repeat(length)).join('/');
    expect(segments(220)).toHaveLength(1024);
    expect(isValidBlobKey(segments(220))).toBe(true);
    expect(isValidBlobKey(segments(221))).toBe(false);
  });

  it('refuses values that are not strings', () => {
    expect(isValidBlobKey(undefined as unknown as string)).toBe(false);
    expect(isValidBlobKey(42 as unknown as string)).toBe(false);
  });
});

describe.each(implementations)('$kind blob store contract', ({ kind, open }) => {
  let store: BlobStore;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ store, stop } = await open());
  });

  afterAll(async () => {
    await stop();
  });

  it(`is of kind ${kind}`, () => {
    expect(store.kind).toBe(kind);
  });

  it.each([0, 1, 1000, 65_537, 5 * 1024 * 1024 + 3])(
    'round-trips %i random bytes byte-identical',
    async (size) => {
      const key = uniqueKey();
      const bytes = new Uint8Array(randomBytes(size));
      await store.put(key, bytes);
      expectSameBytes(await store.get(key), bytes);
    },
  );

  it('round-trips every byte value, a Buffer, and a view into a larger buffer', async () => {
    const all = new Uint8Array(256).map((_, index) => index);
    const key = uniqueKey();
    await store.put(key, all);
    expectSameBytes(await store.get(key), all);

    await store.put(key, Buffer.from('buffer body'));
    expectSameBytes(await store.get(key), new TextEncoder().encode('buffer body'));

    const view = new Uint8Array(all.buffer, 10, 20);
    await store.put(key, view);
    expectSameBytes(await store.get(key), all.slice(10, 30));
  });

  it('stores write-once keys byte-identical, deep or not', async () => {
    for (const key of [uniqueKey(), `${uniqueKey('w')}/sessions/s/0000000001.ab12.chunk`]) {
      const bytes = new Uint8Array(randomBytes(70_000));
      await store.put(key, bytes, { writeOnce: true });
      expectSameBytes(await store.get(key), bytes);
      await store.delete(key);
      expect(await store.get(key)).toBeNull();
    }
  });

  it('stores keys of one and of many segments', async () => {
    const single = `single_${randomBytes(4).toString('hex')}`;
    const deep = `${uniqueKey('a')}/b/c/d`;
    await store.put(single, new Uint8Array([1]));
    await store.put(deep, new Uint8Array([2]));
    expectSameBytes(await store.get(single), new Uint8Array([1]));
    expectSameBytes(await store.get(deep), new Uint8Array([2]));
  });

  it('overwrites: the last put wins, also with fewer bytes', async () => {
    const key = uniqueKey();
    await store.put(key, new Uint8Array(randomBytes(10_000)));
    const second = new Uint8Array(randomBytes(10));
    await store.put(key, second);
    expectSameBytes(await store.get(key), second);
  });

  it('returns null for a missing key, also under a missing prefix', async () => {
    expect(await store.get(uniqueKey())).toBeNull();
    expect(await store.get(`missing_${randomBytes(4).toString('hex')}/deeper/key`)).toBeNull();
  });

  it('deletes, and deleting a missing key is not an error', async () => {
    const key = uniqueKey();
    await store.put(key, new Uint8Array([1, 2, 3]));
    await store.delete(key);
    expect(await store.get(key)).toBeNull();
    await expect(store.delete(key)).resolves.toBeUndefined();
    await expect(store.delete(uniqueKey())).resolves.toBeUndefined();
  });

  it('deletes only the key, not its neighbours', async () => {
    const key = uniqueKey('1');
    const neighbour = key.replace(/1$/, '2');
    await store.put(key, new Uint8Array([1]));
    await store.put(neighbour, new Uint8Array([2]));
    await store.delete(key);
    expectSameBytes(await store.get(neighbour), new Uint8Array([2]));
  });

  it.each(invalidKeys)('refuses a key with %s in put, get and delete', async (_, key) => {
    for (const operation of [
      () => store.put(key, new Uint8Array([1])),
      () => store.get(key),
      () => store.delete(key),
    ]) {
      const error = await operation().then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
      expect(BlobStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'invalid_key', name: 'BlobStoreError' });
    }
  });

  it('refuses bytes that are not a Uint8Array', async () => {
    await expect(store.put(uniqueKey(), 'text' as unknown as Uint8Array)).rejects.toThrow(TypeError);
  });

  it('handles concurrent puts to different keys', async () => {
    const entries = Array.from({ length: 24 }, () => ({
      key: uniqueKey(),
      bytes: new Uint8Array(randomBytes(32 * 1024)),
    }));
    await Promise.all(entries.map(({ key, bytes }) => store.put(key, bytes)));
    const read = await Promise.all(entries.map(({ key }) => store.get(key)));
    entries.forEach(({ bytes }, index) => {
      expectSameBytes(read[index] ?? null, bytes);
    });
  });

  it('handles concurrent puts to different keys of one session folder', async () => {
    const folder = uniqueKey('x').replace(/\/x$/, '');
    const entries = Array.from({ length: 16 }, (_, index) => ({
      key: `${folder}/${String(index).padStart(8, '0')}`,
      bytes: new Uint8Array(randomBytes(1024 + index)),
    }));
    await Promise.all(entries.map(({ key, bytes }) => store.put(key, bytes)));
    for (const { key, bytes } of entries) expectSameBytes(await store.get(key), bytes);
  });

  it('leaves one complete version after concurrent puts to the same key', async () => {
    const key = uniqueKey();
    const versions = Array.from({ length: 8 }, () => new Uint8Array(randomBytes(100_000)));
    await Promise.all(versions.map((bytes) => store.put(key, bytes)));
    const stored = Buffer.from((await store.get(key)) ?? []);
    expect(versions.some((bytes) => stored.equals(bytes))).toBe(true);
  });

  it('passes check()', async () => {
    await expect(store.check()).resolves.toBeUndefined();
  });
});
