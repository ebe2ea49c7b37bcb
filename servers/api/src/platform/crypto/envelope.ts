import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { EncryptionError } from './encryption-error.ts';
import {
  type DataKey,
  dataKeyFromBytes,
  dataKeyObject,
  KEY_LENGTH,
  MASTER_KEY_ID_LENGTH,
  type MasterKey,
  masterKeyObject,
} from './keys.ts';
import { randomBytesFromPool } from './random-pool.ts';

const algorithm = 'aes-256-gcm';
const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;

/**
 * First byte of a sealed blob in the format {@link sealBlob} writes.
 *
 * @example
 * ```ts
 * sealBlob(dataKey, bytes, where)[0] === SEALED_BLOB_VERSION; // true
 * ```
 */
const SEALED_BLOB_VERSION = 1;

/**
 * First byte of a wrapped data key in the format {@link createDataKey} writes.
 *
 * @example
 * ```ts
 * createDataKey(master).wrappedKey[0] === WRAPPED_KEY_VERSION; // true
 * ```
 */
const WRAPPED_KEY_VERSION = 1;

/**
 * Bytes a sealed blob adds to its plaintext: version (1), nonce (12), tag (16).
 *
 * @example
 * ```ts
 * sealBlob(dataKey, new Uint8Array(100), where).byteLength === 100 + SEALED_BLOB_OVERHEAD; // true
 * ```
 */
export const SEALED_BLOB_OVERHEAD = 1 + NONCE_LENGTH + TAG_LENGTH;

/**
 * Length of a wrapped data key: version (1), master key id (8), nonce (12), encrypted key (32), tag (16).
 *
 * @example
 * ```ts
 * createDataKey(master).wrappedKey.byteLength === WRAPPED_KEY_LENGTH; // 69
 * ```
 */
export const WRAPPED_KEY_LENGTH = 1 + MASTER_KEY_ID_LENGTH + NONCE_LENGTH + KEY_LENGTH + TAG_LENGTH;

const wrappedKeyHeaderLength = 1 + MASTER_KEY_ID_LENGTH;
const wrappedKeyContext = new TextEncoder().encode('svc:data-key:v1');
const blobKeyContext = new TextEncoder().encode('svc:blob:v1\0');

/**
 * A new random data key for a project, and the same key wrapped (encrypted) by the master key,
 * to store in the projects table. Only the wrapped form is ever stored.
 *
 * Wrapped key format ({@link WRAPPED_KEY_LENGTH} = 69 bytes): version `1` | the master key's
 * 8-byte {@link MasterKey.id} | 12-byte random nonce | 32-byte AES-256-GCM ciphertext | 16-byte
 * tag, with the version and id authenticated as associated data together with `svc:data-key:v1`.
 *
 * @example
 * ```ts
 * const { dataKey, wrappedKey } = createDataKey(master);
 * await db.insertInto('projects').values({ id, wrappedKey }).execute();
 * ```
 */
export function createDataKey(master: MasterKey): { dataKey: DataKey; wrappedKey: Uint8Array } {
  const dataKey = dataKeyFromBytes(randomBytes(KEY_LENGTH));
  return { dataKey, wrappedKey: wrapDataKey(master, dataKey) };
}

/**
 * `dataKey` wrapped by `master`, in the format of {@link createDataKey}: how a rotation re-wraps a
 * project's existing data key under a new master key (the blobs it sealed stay as they are).
 *
 * @example
 * ```ts
 * const rewrapped = wrapDataKey(master, unwrapDataKey(master, project.wrapped_data_key));
 * ```
 */
export function wrapDataKey(master: MasterKey, dataKey: DataKey): Uint8Array {
  const masterKey = masterKeyObject(master);
  const header = new Uint8Array(wrappedKeyHeaderLength);
  header[0] = WRAPPED_KEY_VERSION;
  header.set(Buffer.from(master.id, 'hex'), 1);
  const bytes = dataKeyObject(dataKey).export();
  try {
    return seal(masterKey, header, bytes, wrappedKeyContext);
  } finally {
    bytes.fill(0);
  }
}

/**
 * The id of the master key that wrapped `wrappedKey` (16 hex digits), read from its header.
 *
 * @example
 * ```ts
 * if (wrappingKeyId(project.wrapped_data_key) !== master.id) rewrap(project);
 * ```
 */
export function wrappingKeyId(wrappedKey: Uint8Array): string {
  assertBytes(wrappedKey, 'wrappedKey');
  checkVersion(wrappedKey, WRAPPED_KEY_VERSION, 'wrapped data key');
  return Buffer.from(wrappedKey.subarray(1, wrappedKeyHeaderLength)).toString('hex');
}

/**
 * The data key inside `wrappedKey` (from {@link createDataKey}), unwrapped by `master` or, during a
 * rotation, by the previous master key that wrapped it ({@link MasterKey.previous}).
 *
 * @throws {EncryptionError} `wrong_key` when another master key wrapped it (the message names
 *   both key ids), `corrupt` when it is truncated or was modified, `unsupported_version` for an
 *   unknown format.
 * @example
 * ```ts
 * const dataKey = unwrapDataKey(master, project.wrappedKey);
 * ```
 */
export function unwrapDataKey(master: MasterKey, wrappedKey: Uint8Array): DataKey {
  const masterKey = masterKeyObject(master);
  assertBytes(wrappedKey, 'wrappedKey');
  checkVersion(wrappedKey, WRAPPED_KEY_VERSION, 'wrapped data key');
  if (wrappedKey.byteLength !== WRAPPED_KEY_LENGTH) {
    throw new EncryptionError({
      code: 'corrupt',
      message: `The wrapped data key is ${wrappedKey.byteLength} bytes instead of ${WRAPPED_KEY_LENGTH}: it was truncated or damaged`,
    });
  }
  const wrappedBy = Buffer.from(wrappedKey.subarray(1, wrappedKeyHeaderLength)).toString('hex');
  const wrapping =
    wrappedBy === master.id ? master : master.previous.find((previous) => previous.id === wrappedBy);
  if (wrapping === undefined) {
    const loaded = [master, ...master.previous].map((key) => key.id).join(', ');
    throw new EncryptionError({
      code: 'wrong_key',
      message: `The data key was wrapped by master key ${wrappedBy}, but the loaded master key${master.previous.length > 0 ? 's are' : ' is'} ${loaded}: start the server with the master key the data was written with (SVC_MASTER_KEY or <data directory>/master.key, or SVC_MASTER_KEY_PREVIOUS during a rotation)`,
    });
  }
  const bytes = open(
    wrapping === master ? masterKey : masterKeyObject(wrapping),
    wrappedKey,
    wrappedKeyHeaderLength,
    wrappedKeyContext,
    'wrapped data key',
  );
  return dataKeyFromBytes(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

/**
 * Encrypts and authenticates `plaintext` with the project's data key, bound to
 * `associatedData`: where the blob belongs, e.g. `proj_…/ses_…/<seq>`. Opening it under any other
 * associated data fails, so a blob copied to another session's key cannot be read.
 *
 * Format ({@link SEALED_BLOB_OVERHEAD} = 29 bytes more than the plaintext): version `1` | 12-byte
 * random nonce | AES-256-GCM ciphertext | 16-byte tag. The version byte and `associatedData` are
 * authenticated. The AES key is derived per location, HKDF-SHA256(data key, no salt, info =
 * `svc:blob:v1\0` + SHA-256(associatedData)), so random nonces never approach GCM's limit of
 * 2^32 messages per key, however many blobs a project has.
 *
 * @example
 * ```ts
 * const sealed = sealBlob(dataKey, chunkBytes, `${projectId}/${sessionId}/${seq}`);
 * await blobStore.put(`${projectId}/${sessionId}/${seq}`, sealed);
 * ```
 */
export function sealBlob(dataKey: DataKey, plaintext: Uint8Array, associatedData: string): Uint8Array {
  const key = blobKey(dataKey, associatedData);
  assertBytes(plaintext, 'plaintext');
  return seal(key, Uint8Array.of(SEALED_BLOB_VERSION), plaintext, new TextEncoder().encode(associatedData));
}

/**
 * The plaintext of a blob sealed by {@link sealBlob} with the same data key and associated data.
 *
 * @throws {EncryptionError} `corrupt` when the blob was modified or truncated, or the data key
 *   or associated data differ (AES-GCM cannot tell these apart); `unsupported_version` when the
 *   first byte is not a known format.
 * @example
 * ```ts
 * const chunkBytes = openBlob(dataKey, await blobStore.get(key), `${projectId}/${sessionId}/${seq}`);
 * ```
 */
export function openBlob(dataKey: DataKey, sealed: Uint8Array, associatedData: string): Uint8Array {
  const key = blobKey(dataKey, associatedData);
  assertBytes(sealed, 'sealed');
  checkVersion(sealed, SEALED_BLOB_VERSION, 'sealed blob');
  const plaintext = open(key, sealed, 1, new TextEncoder().encode(associatedData), 'sealed blob');
  return new Uint8Array(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength);
}

function blobKey(dataKey: DataKey, associatedData: string): KeyObject {
  const key = dataKeyObject(dataKey);
  if (typeof associatedData !== 'string' || associatedData.length === 0) {
    throw new TypeError('associatedData must be a non-empty string naming where the blob belongs');
  }
  // HKDF's info is limited to 1024 bytes, so it carries a hash of the associated data.
  const info = concat(blobKeyContext, createHash('sha256').update(associatedData, 'utf8').digest());
  const derived = hkdfSha256Expand(extractedKey(dataKey, key), info);
  try {
    return createSecretKey(derived);
  } finally {
    derived.fill(0);
  }
}

/** HKDF-Extract (RFC 5869) of each data key with no salt, computed once per key. */
const extractedKeys = new WeakMap<DataKey, KeyObject>();

/**
 * HKDF-SHA256's extract step, PRK = HMAC-SHA256(32 zero bytes, data key): the same for every blob
 * of a data key, so it is done once and kept beside the key. Every blob then costs one HMAC (the
 * expand step) instead of a whole `hkdfSync`, with byte-identical keys (tested against it).
 */
function extractedKey(dataKey: DataKey, key: KeyObject): KeyObject {
  let extracted = extractedKeys.get(dataKey);
  if (extracted === undefined) {
    const material = key.export();
    const pseudorandomKey = createHmac('sha256', Buffer.alloc(32)).update(material).digest();
    material.fill(0);
    extracted = createSecretKey(pseudorandomKey);
    pseudorandomKey.fill(0);
    extractedKeys.set(dataKey, extracted);
  }
  return extracted;
}

/** HKDF-Expand (RFC 5869) to 32 bytes: T(1) = HMAC-SHA256(PRK, info | 0x01). */
function hkdfSha256Expand(pseudorandomKey: KeyObject, info: Uint8Array): Buffer {
  return createHmac('sha256', pseudorandomKey).update(info).update(EXPAND_FIRST_BLOCK).digest();
}

const EXPAND_FIRST_BLOCK = Uint8Array.of(1);

/** header | nonce | ciphertext | tag, authenticating header + context. */
function seal(key: KeyObject, header: Uint8Array, plaintext: Uint8Array, context: Uint8Array): Uint8Array {
  const nonce = randomBytesFromPool(NONCE_LENGTH);
  const cipher = createCipheriv(algorithm, key, nonce, { authTagLength: TAG_LENGTH });
  cipher.setAAD(concat(header, context));
  const sealed = new Uint8Array(header.byteLength + NONCE_LENGTH + plaintext.byteLength + TAG_LENGTH);
  sealed.set(header, 0);
  sealed.set(nonce, header.byteLength);
  let offset = header.byteLength + NONCE_LENGTH;
  for (const part of [cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]) {
    sealed.set(part, offset);
    offset += part.byteLength;
  }
  return sealed;
}

function open(
  key: KeyObject,
  sealed: Uint8Array,
  headerLength: number,
  context: Uint8Array,
  what: string,
): Buffer {
  if (sealed.byteLength < headerLength + NONCE_LENGTH + TAG_LENGTH) {
    throw new EncryptionError({
      code: 'corrupt',
      message: `The ${what} is truncated: ${sealed.byteLength} bytes is shorter than its header, nonce and tag`,
    });
  }
  const nonce = sealed.subarray(headerLength, headerLength + NONCE_LENGTH);
  const ciphertext = sealed.subarray(headerLength + NONCE_LENGTH, sealed.byteLength - TAG_LENGTH);
  const tag = sealed.subarray(sealed.byteLength - TAG_LENGTH);
  const decipher = createDecipheriv(algorithm, key, nonce, { authTagLength: TAG_LENGTH });
  decipher.setAAD(concat(sealed.subarray(0, headerLength), context));
  decipher.setAuthTag(tag);
  const plaintext = decipher.update(ciphertext);
  try {
    // Nothing is returned unless the tag verifies. GCM's final() yields no further bytes.
    decipher.final();
    return plaintext;
  } catch (error) {
    plaintext.fill(0);
    throw new EncryptionError({
      code: 'corrupt',
      message: `The ${what} failed authentication: it was modified or truncated, or the key or associated data is not the one it was sealed with`,
      cause: error,
    });
  }
}

function checkVersion(bytes: Uint8Array, expected: number, what: string): void {
  if (bytes.byteLength === 0) {
    throw new EncryptionError({ code: 'corrupt', message: `The ${what} is empty` });
  }
  if (bytes[0] !== expected) {
    throw new EncryptionError({
      code: 'unsupported_version',
      message: `The ${what} has format version ${String(bytes[0])}; this server reads version ${expected}`,
    });
  }
}

function assertBytes(bytes: unknown, name: string): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array`);
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const result = new Uint8Array(first.byteLength + second.byteLength);
  result.set(first, 0);
  result.set(second, first.byteLength);
  return result;
}
