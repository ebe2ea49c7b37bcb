import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import type { S3BlobStoreOptions } from './s3-blob-store.ts';

/**
 * A real s3rver on 127.0.0.1 and a free port, with one bucket, for tests. `options` are the
 * {@link S3BlobStoreOptions} that reach it; `directory` is where s3rver keeps its objects (the
 * object `k` of bucket `b` is the file `<directory>/b/k._S3rver_object`).
 *
 * @example
 * ```ts
 * const server = await startS3rver();
 * const store = createS3BlobStore(server.options);
 * // ...
 * await store.close();
 * await server.stop();
 * ```
 */
export async function startS3rver(bucket = 'svc-test'): Promise<{
  options: S3BlobStoreOptions;
  directory: string;
  stop(): Promise<void>;
}> {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const address = await server.run();
  return {
    options: {
      bucket,
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${address.port}`,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
    directory,
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
