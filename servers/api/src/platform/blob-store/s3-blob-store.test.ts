import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobStoreError } from './blob-store.ts';
import { createS3BlobStore } from './s3-blob-store.ts';
import { startS3rver } from './s3rver-fixture.ts';

let server: Awaited<ReturnType<typeof startS3rver>>;

beforeAll(async () => {
  server = await startS3rver();
});

afterAll(async () => {
  await server.stop();
});

async function rejection(promise: Promise<unknown>): Promise<BlobStoreError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!BlobStoreError.isInstance(error)) throw new Error(`expected a BlobStoreError, got ${String(error)}`);
  return error;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  await new Promise((resolve) => listener.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('createS3BlobStore', () => {
  it('stores exactly the bytes in the bucket (no aws-chunked framing)', async () => {
    const store = createS3BlobStore(server.options);
    const bytes = randomBytes(5 * 1024 * 1024 + 1);
    await store.put('proj_1/ses_raw/00000001', bytes);
    const onDisk = await readFile(
      path.join(server.directory, 'svc-test', 'proj_1', 'ses_raw', '00000001._S3rver_object'),
    );
    expect(onDisk.byteLength).toBe(bytes.byteLength);
    expect(Buffer.compare(onDisk, bytes)).toBe(0);
    await store.close();
  });

  it('keeps objects under the prefix, and stores with other prefixes do not see them', async () => {
    const production = createS3BlobStore({ ...server.options, prefix: 'production/' });
    const staging = createS3BlobStore({ ...server.options, prefix: '/staging' });
    await production.put('proj_1/ses_1/1', new Uint8Array([1]));
    await staging.put('proj_1/ses_1/1', new Uint8Array([2]));
    expect(await production.get('proj_1/ses_1/1')).toEqual(new Uint8Array([1]));
    expect(await staging.get('proj_1/ses_1/1')).toEqual(new Uint8Array([2]));
    const onDisk = await readFile(
      path.join(server.directory, 'svc-test', 'production', 'proj_1', 'ses_1', '1._S3rver_object'),
    );
    expect([...onDisk]).toEqual([1]);
    await production.delete('proj_1/ses_1/1');
    expect(await staging.get('proj_1/ses_1/1')).toEqual(new Uint8Array([2]));
    await production.close();
    await staging.close();
  });

  it('check() leaves no probe object behind', async () => {
    const store = createS3BlobStore({ ...server.options, prefix: 'probe-test' });
    await store.check();
    await store.check();
    const left = await readdir(path.join(server.directory, 'svc-test', 'probe-test')).catch(() => []);
    expect(left.filter((name) => name.endsWith('._S3rver_object'))).toEqual([]);
    await store.close();
  });

  it('is unavailable, not empty, when the bucket does not exist', async () => {
    const store = createS3BlobStore({ ...server.options, bucket: 'no-such-bucket' });
    const checkError = await rejection(store.check());
    expect(checkError.code).toBe('unavailable');
    expect(checkError.message).toContain('s3://no-such-bucket/');
    expect(checkError.message).toContain('NoSuchBucket');
    expect((await rejection(store.get('proj_1/ses_1/1'))).code).toBe('unavailable');
    expect((await rejection(store.put('proj_1/ses_1/1', new Uint8Array([1])))).code).toBe('unavailable');
    await store.close();
  });

  it('is unavailable when the endpoint does not answer, and refuses invalid keys before any request', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const store = createS3BlobStore({ ...server.options, endpoint });
    const error = await rejection(store.check());
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain(endpoint);
    expect(error.message).not.toContain('S3RVER'); // no credentials in messages
    expect((await rejection(store.put('a/b', new Uint8Array([1])))).code).toBe('unavailable');
    expect((await rejection(store.put('../a', new Uint8Array([1])))).code).toBe('invalid_key');
    await store.close();
  });

  it('close() refuses later operations with closed', async () => {
    const store = createS3BlobStore(server.options);
    await store.put('proj_1/ses_close/1', new Uint8Array([1]));
    await store.close();
    expect((await rejection(store.get('proj_1/ses_close/1'))).code).toBe('closed');
  });

  it('refuses invalid options with a TypeError', () => {
    expect(() => createS3BlobStore({ ...server.options, bucket: '' })).toThrow(TypeError);
    expect(() => createS3BlobStore({ ...server.options, region: '' })).toThrow(TypeError);
    expect(() => createS3BlobStore({ ...server.options, secretAccessKey: undefined })).toThrow(/both/);
    expect(() => createS3BlobStore({ ...server.options, prefix: '../up' })).toThrow(/prefix/);
    expect(() => createS3BlobStore({ ...server.options, prefix: 'a//b' })).toThrow(/prefix/);
  });
});
