/**
 * Where the server keeps chunk bytes: a directory of files on one machine, or an S3-compatible
 * bucket when several processes share the data. Both implementations pass the same contract
 * tests (`blob-store.test.ts`).
 *
 * @example
 * ```ts
 * import { createFileBlobStore } from './blob-store/index.ts';
 *
 * const store: BlobStore = createFileBlobStore({ directory: './data/blobs' });
 * await store.put('proj_1/ses_1/00000001', sealed);
 * const bytes = await store.get('proj_1/ses_1/00000001'); // Uint8Array | null
 * ```
 */
export interface BlobStore {
  /**
   * Stores `bytes` under `key`, replacing any previous object. Resolves only once the bytes are
   * durable (file store: written, fsynced, renamed into place, directory fsynced; S3: PutObject
   * succeeded). A failure or crash before that leaves the previous object (or none), never a
   * partial one.
   */
  put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void>;
  /** The bytes stored under `key`, or `null` when there is no such object. */
  get(key: string): Promise<Uint8Array | null>;
  /** Removes the object; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Throws a {@link BlobStoreError} `unavailable` when the store is not reachable or not writable. */
  check(): Promise<void>;
  /** Waits for operations in flight, then releases resources; later calls throw `closed`. */
  close(): Promise<void>;
  /** Which implementation this is, for logs and `/readyz`. */
  readonly kind: 'file' | 's3';
}

/**
 * Why a blob store operation failed:
 *
 * - `invalid_key`: the key is not `[A-Za-z0-9_.-]` segments joined by `/` (see
 *   {@link isValidBlobKey}); refused before any disk or network access;
 * - `key_conflict` (file store only): the key's path is taken by a directory of other keys, or
 *   one of its prefixes is an object (`a` and `a/b` cannot both exist on a file system);
 * - `unavailable`: the store cannot be reached, read or written (missing or read-only
 *   directory, full disk, S3 endpoint down, access denied, missing bucket);
 * - `closed`: the store was closed.
 *
 * @example
 * ```ts
 * const retryable = (code: BlobStoreErrorCode) => code === 'unavailable';
 * ```
 */
export type BlobStoreErrorCode = 'invalid_key' | 'key_conflict' | 'unavailable' | 'closed';

const marker = Symbol.for('@svc/api.BlobStoreError');

/**
 * The error every {@link BlobStore} operation throws. `message` names the key and the store
 * (directory or bucket), never credentials; `cause` carries the underlying I/O or SDK error.
 *
 * @example
 * ```ts
 * try {
 *   await store.put(key, bytes);
 * } catch (error) {
 *   if (BlobStoreError.isInstance(error) && error.code === 'unavailable') reply.status(503);
 *   throw error;
 * }
 * ```
 */
export class BlobStoreError extends Error {
  /** Brand checked by {@link BlobStoreError.isInstance}; `Symbol.for`, so it survives duplicated copies. */
  readonly [marker] = true;

  /** Why the operation failed. */
  readonly code: BlobStoreErrorCode;

  /**
   * @example
   * ```ts
   * throw new BlobStoreError({ code: 'invalid_key', message: 'Invalid blob key "../x"' });
   * ```
   */
  constructor({ code, message, cause }: { code: BlobStoreErrorCode; message: string; cause?: unknown }) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'BlobStoreError';
    this.code = code;
  }

  /**
   * Whether `error` is a `BlobStoreError`, also across duplicated copies of this module.
   *
   * @example
   * ```ts
   * if (BlobStoreError.isInstance(error)) console.warn(error.code);
   * ```
   */
  static isInstance(error: unknown): error is BlobStoreError {
    return typeof error === 'object' && error !== null && marker in error && error[marker] === true;
  }
}

/**
 * The longest accepted key, in characters (= bytes: keys are ASCII). S3's own limit is 1024 bytes.
 *
 * @example
 * ```ts
 * isValidBlobKey('a'.repeat(MAX_BLOB_KEY_LENGTH + 1)); // false
 * ```
 */
const MAX_BLOB_KEY_LENGTH = 1024;

/**
 * The longest accepted segment: 255 is the file name limit of common file systems.
 *
 * @example
 * ```ts
 * isValidBlobKey(`proj_1/${'x'.repeat(MAX_BLOB_KEY_SEGMENT_LENGTH)}`); // true
 * ```
 */
const MAX_BLOB_KEY_SEGMENT_LENGTH = 255;

const segmentPattern = /^[A-Za-z0-9_.-]+$/;

/**
 * Whether `key` is a valid blob key: one or more segments of `[A-Za-z0-9_.-]` joined by `/`, no
 * empty segment (so no leading, trailing or doubled `/`), no `.` or `..` segment, at most
 * {@link MAX_BLOB_KEY_LENGTH} characters and {@link MAX_BLOB_KEY_SEGMENT_LENGTH} per segment.
 * Such a key is a safe relative path on every file system and a plain S3 key.
 *
 * @example
 * ```ts
 * isValidBlobKey('proj_1/ses_2/00000003'); // true
 * isValidBlobKey('../etc/passwd'); // false
 * isValidBlobKey('a//b'); // false
 * ```
 */
export function isValidBlobKey(key: string): boolean {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_BLOB_KEY_LENGTH) return false;
  for (const segment of key.split('/')) {
    if (segment.length > MAX_BLOB_KEY_SEGMENT_LENGTH || !segmentPattern.test(segment)) return false;
    if (segment === '.' || segment === '..') return false;
  }
  return true;
}

/**
 * Throws {@link BlobStoreError} `invalid_key` unless {@link isValidBlobKey}; the stores call it
 * first in every operation.
 *
 * @example
 * ```ts
 * assertValidBlobKey('proj_1/ses_2/00000003'); // returns
 * assertValidBlobKey('/etc/passwd'); // throws BlobStoreError invalid_key
 * ```
 */
function assertValidBlobKey(key: string): void {
  if (isValidBlobKey(key)) return;
  const shown = typeof key === 'string' ? JSON.stringify(key.slice(0, 80)) : typeof key;
  throw new BlobStoreError({
    code: 'invalid_key',
    message: `Invalid blob key ${shown}: expected segments of [A-Za-z0-9_.-] joined by "/", no empty, "." or ".." segment, at most ${MAX_BLOB_KEY_LENGTH} characters`,
  });
}

/**
 * Tracks operations in flight so `close()` can wait for them, and refuses new ones once closed.
 * Shared by both stores.
 *
 * @example
 * ```ts
 * const lifecycle = createOperationTracker('file blob store ./data/blobs');
 * await lifecycle.run(() => write());
 * await lifecycle.close();
 * ```
 */
function createOperationTracker(description: string): {
  run<T>(operation: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
} {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  return {
    run(operation) {
      if (closed) {
        return Promise.reject(
          new BlobStoreError({ code: 'closed', message: `The ${description} is closed` }),
        );
      }
      const promise = operation();
      inFlight.add(promise);
      const forget = () => inFlight.delete(promise);
      promise.then(forget, forget);
      return promise;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** Options of {@link BlobStore.put}. */
export interface PutOptions {
  /**
   * The caller made `key` unique and never writes it again, and it only records the key (in an
   * index) after `put` resolved. The file store then writes the file in place instead of through
   * a temporary file and a rename, and flushes the file, then its directory, on one of its writer
   * threads. Durability on
   * success is the same; a crash before `put` resolves may leave a partial object under the key,
   * which nothing references. A key that exists already is a `key_conflict` on the file store.
   * S3 ignores the option: PutObject is atomic anyway.
   */
  writeOnce?: boolean;
}

/** What a store implements; {@link createBlobStore} adds the checks and the lifecycle. */
export interface BlobStoreOperations {
  put(key: string, bytes: Uint8Array, options?: PutOptions): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
  remove(key: string): Promise<void>;
  check(): Promise<void>;
  /** Runs after every operation in flight has finished. */
  close?(): void | Promise<void>;
}

/**
 * A {@link BlobStore} around a store's raw operations, the same for both stores: every key is
 * validated and every byte argument checked before the store is touched, operations are tracked
 * so `close()` waits for them, and operations after `close()` are refused with `closed`.
 *
 * @example
 * ```ts
 * return createBlobStore('file', `file blob store at ${root}`, { put, get, remove, check });
 * ```
 */
export function createBlobStore(
  kind: BlobStore['kind'],
  description: string,
  operations: BlobStoreOperations,
): BlobStore {
  const tracker = createOperationTracker(description);
  return {
    kind,
    async put(key, bytes, options) {
      assertValidBlobKey(key);
      assertBytes(bytes);
      return tracker.run(() => operations.put(key, bytes, options));
    },
    async get(key) {
      assertValidBlobKey(key);
      return tracker.run(() => operations.get(key));
    },
    async delete(key) {
      assertValidBlobKey(key);
      return tracker.run(() => operations.remove(key));
    },
    async check() {
      return tracker.run(() => operations.check());
    },
    async close() {
      await tracker.close();
      await operations.close?.();
    },
  };
}

/**
 * Throws a `TypeError` unless `bytes` is a `Uint8Array` (a `Buffer` is one).
 *
 * @example
 * ```ts
 * assertBytes(new Uint8Array(4)); // returns
 * ```
 */
function assertBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError('BlobStore.put: `bytes` must be a Uint8Array');
  }
}
