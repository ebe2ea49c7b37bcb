import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type BlobStore, BlobStoreError, createBlobStore, isValidBlobKey } from './blob-store.ts';

/**
 * Options of {@link createS3BlobStore}.
 *
 * @example
 * ```ts
 * const options: S3BlobStoreOptions = {
 *   bucket: 'svc-blobs',
 *   region: 'us-east-1',
 *   endpoint: 'http://127.0.0.1:9000',
 *   forcePathStyle: true,
 *   prefix: 'production',
 * };
 * ```
 */
export interface S3BlobStoreOptions {
  /** The bucket; it must exist. */
  bucket: string;
  /** The endpoint URL of an S3-compatible service (MinIO, R2, s3rver); omit for AWS S3. */
  endpoint?: string;
  /** The region, e.g. `us-east-1` (S3-compatible services usually accept `us-east-1`). */
  region: string;
  /** With `secretAccessKey`; when both are omitted the AWS SDK's default credential chain applies. */
  accessKeyId?: string;
  /** With `accessKeyId`. */
  secretAccessKey?: string;
  /** Address buckets as `<endpoint>/<bucket>` instead of `<bucket>.<endpoint>`; most self-hosted services need it. */
  forcePathStyle?: boolean;
  /** A key prefix (folder) inside the bucket, e.g. `svc` → objects at `svc/<key>`. Same rules as keys. */
  prefix?: string;
}

/** The object `check()` writes and deletes: `~` cannot occur in a blob key, so it never collides with one. */
const probeKey = '~readiness-check';

/**
 * A {@link BlobStore} in an S3-compatible bucket: the object `a/b/c` is `<prefix>/a/b/c`.
 *
 * `put` sends the bytes in one `PutObject` (a `Uint8Array` body with `ContentLength` and
 * `Content-MD5`, which S3 verifies before accepting) and resolves when S3 acknowledged it, which
 * S3 documents as durable. The SDK's own flexible checksums are only sent when an operation
 * requires them (`WHEN_REQUIRED`): S3-compatible services that do not understand them (or that
 * store `aws-chunked` stream framing verbatim, like s3rver) then keep the bytes unchanged.
 * `check` writes and deletes a probe object, so it also catches read-only credentials.
 *
 * The credentials need `s3:PutObject`, `s3:GetObject`, `s3:DeleteObject` and `s3:ListBucket`
 * (without ListBucket, S3 answers 403 instead of 404 for a missing key, and `get` throws
 * `unavailable` instead of returning `null`).
 *
 * @example
 * ```ts
 * const store = createS3BlobStore({ bucket: 'svc-blobs', region: 'eu-west-1' });
 * await store.check();
 * await store.put('proj_1/ses_1/00000001', sealed);
 * await store.close();
 * ```
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { bucket, region, endpoint, accessKeyId, secretAccessKey } = options ?? {};
  if (typeof bucket !== 'string' || bucket.length === 0) {
    throw new TypeError('createS3BlobStore: `bucket` must be a non-empty string');
  }
  if (typeof region !== 'string' || region.length === 0) {
    throw new TypeError('createS3BlobStore: `region` must be a non-empty string');
  }
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new TypeError('createS3BlobStore: set both `accessKeyId` and `secretAccessKey`, or neither');
  }
  const prefix = normalizePrefix(options.prefix);
  const location = `s3://${bucket}/${prefix}${endpoint === undefined ? '' : ` at ${endpoint}`}`;

  const client = new S3Client({
    region,
    endpoint,
    forcePathStyle: options.forcePathStyle ?? false,
    credentials:
      accessKeyId !== undefined && secretAccessKey !== undefined
        ? { accessKeyId, secretAccessKey }
        : undefined,
    // Default checksums send stream bodies aws-chunked, which some S3-compatible services
    // (s3rver) store verbatim, framing included.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Without a timeout a stalled endpoint would hold an ingest request forever.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });

  function failure(action: string, key: string, cause: unknown): BlobStoreError {
    return new BlobStoreError({
      code: 'unavailable',
      message: `Cannot ${action} blob ${key} in ${location} (${describe(cause)})`,
      cause,
    });
  }

  async function put(key: string, bytes: Uint8Array): Promise<void> {
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: prefix + key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          // S3 (and most compatible services) reject the upload if the bytes arrive altered.
          ContentMD5: createHash('md5').update(bytes).digest('base64'),
          ContentType: 'application/octet-stream',
        }),
      );
    } catch (error) {
      throw failure('store', key, error);
    }
  }

  async function get(key: string): Promise<Uint8Array | null> {
    try {
      const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: prefix + key }));
      if (response.Body === undefined) return new Uint8Array(0);
      return await response.Body.transformToByteArray();
    } catch (error) {
      if (isMissingKey(error)) return null;
      throw failure('read', key, error);
    }
  }

  async function remove(key: string): Promise<void> {
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: prefix + key }));
    } catch (error) {
      if (isMissingKey(error)) return;
      throw failure('delete', key, error);
    }
  }

  async function check(): Promise<void> {
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: prefix + probeKey,
          Body: new Uint8Array([111, 107]),
          ContentLength: 2,
        }),
      );
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: prefix + probeKey }));
    } catch (error) {
      throw new BlobStoreError({
        code: 'unavailable',
        message: `The S3 blob store ${location} is not reachable or not writable (${describe(error)})`,
        cause: error,
      });
    }
  }

  return createBlobStore('s3', `S3 blob store ${location}`, {
    put,
    get,
    remove,
    check,
    close: () => client.destroy(),
  });
}

function normalizePrefix(prefix: string | undefined): string {
  if (prefix === undefined || prefix === '' || prefix === '/') return '';
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  if (!isValidBlobKey(trimmed)) {
    throw new TypeError(
      `createS3BlobStore: invalid \`prefix\` ${JSON.stringify(prefix)}: use segments of [A-Za-z0-9_.-] joined by "/"`,
    );
  }
  return `${trimmed}/`;
}

/** NoSuchKey, or another 404 that is not about the bucket. */
function isMissingKey(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const name = 'name' in error ? error.name : undefined;
  if (name === 'NoSuchKey') return true;
  if (name === 'NoSuchBucket') return false;
  const metadata = '$metadata' in error ? error.$metadata : undefined;
  return (
    typeof metadata === 'object' &&
    metadata !== null &&
    'httpStatusCode' in metadata &&
    metadata.httpStatusCode === 404
  );
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status =
    '$metadata' in error &&
    typeof error.$metadata === 'object' &&
    error.$metadata !== null &&
    'httpStatusCode' in error.$metadata &&
    error.$metadata.httpStatusCode !== undefined
      ? `HTTP ${String(error.$metadata.httpStatusCode)} `
      : '';
  return `${status}${error.name}: ${error.message}`;
}
