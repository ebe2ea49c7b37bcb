import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';

/**
 * Key length of AES-256, in bytes: master keys and data keys.
 *
 * @example
 * ```ts
 * const master = masterKeyFromBytes(randomBytes(KEY_LENGTH));
 * ```
 */
export const KEY_LENGTH = 32;

const redacted = '[redacted]';

/**
 * Length of {@link MasterKey.id} in bytes, as stored in wrapped keys.
 *
 * @example
 * ```ts
 * master.id.length === 2 * MASTER_KEY_ID_LENGTH; // hex
 * ```
 */
export const MASTER_KEY_ID_LENGTH = 8;

/**
 * What both key types print as, whatever prints them (`JSON.stringify`, `String()`,
 * `util.inspect`/`console.log`): never their bytes.
 */
abstract class RedactedKey {
  /** `[redacted]`. */
  toJSON(): string {
    return redacted;
  }

  /** `[redacted]`. */
  toString(): string {
    return redacted;
  }

  /** `[redacted]`, for `console.log` and `util.inspect`. */
  [inspect.custom](): string {
    return redacted;
  }
}

let masterKeyMaterial: (key: MasterKey) => KeyObject;
let constructMasterKey: (bytes: Uint8Array) => MasterKey;
let attachPreviousKeys: (key: MasterKey, previous: readonly MasterKey[]) => void;
let dataKeyMaterial: (key: DataKey) => KeyObject;
let constructDataKey: (bytes: Uint8Array) => DataKey;

/**
 * The server's master key: it wraps (encrypts) the per-project data keys. Opaque: the key bytes
 * live in a private field as a `KeyObject`, and `JSON.stringify`, `String()` and
 * `util.inspect`/`console.log` show `[redacted]`, so it cannot end up in a log by accident.
 * Get one from `loadMasterKey`.
 *
 * @example
 * ```ts
 * const master = await loadMasterKey({ masterKey: process.env.SVC_MASTER_KEY, dataDirectory: './data' });
 * log.info({ masterKeyId: master.id }, 'master key loaded'); // never the key itself
 * ```
 */
export class MasterKey extends RedactedKey {
  readonly #key: KeyObject;
  readonly #id: Uint8Array;
  #previous: readonly MasterKey[] = [];

  private constructor(bytes: Uint8Array) {
    super();
    this.#key = createSecretKey(bytes);
    this.#id = new Uint8Array(
      createHmac('sha256', this.#key)
        .update('svc:master-key-id:v1')
        .digest()
        .subarray(0, MASTER_KEY_ID_LENGTH),
    );
  }

  static {
    masterKeyMaterial = (key) => key.#key;
    constructMasterKey = (bytes) => new MasterKey(bytes);
    attachPreviousKeys = (key, previous) => {
      key.#previous = previous.filter((each) => each.id !== key.id);
    };
  }

  /**
   * Master keys this one replaced, during a rotation: data keys they wrapped still unwrap, and
   * new ones are wrapped by this key only (see `svc rotate-master-key`).
   */
  get previous(): readonly MasterKey[] {
    return this.#previous;
  }

  /**
   * A public fingerprint of the key (16 hex digits of an HMAC of it): safe to log, and stored in
   * every wrapped data key, so a wrong master key is reported as such.
   */
  get id(): string {
    return Buffer.from(this.#id).toString('hex');
  }
}

/**
 * A project's data key: it seals that project's blobs. Opaque like {@link MasterKey}. Get one
 * from `createDataKey` (new project) or `unwrapDataKey` (the stored wrapped key).
 *
 * @example
 * ```ts
 * const dataKey = unwrapDataKey(master, project.wrappedKey);
 * const sealed = sealBlob(dataKey, chunkBytes, `${project.id}/${sessionId}/${seq}`);
 * ```
 */
export class DataKey extends RedactedKey {
  readonly #key: KeyObject;

  private constructor(bytes: Uint8Array) {
    super();
    this.#key = createSecretKey(bytes);
  }

  static {
    dataKeyMaterial = (key) => key.#key;
    constructDataKey = (bytes) => new DataKey(bytes);
  }
}

/**
 * A {@link MasterKey} from 32 key bytes, which it then overwrites with zeros. Internal: the
 * public way is `loadMasterKey`.
 *
 * @example
 * ```ts
 * const master = masterKeyFromBytes(randomBytes(32));
 * ```
 */
export function masterKeyFromBytes(bytes: Uint8Array): MasterKey {
  return fromBytes(bytes, constructMasterKey);
}

/**
 * `master` with `previous` master keys attached: what it replaced during a rotation (a key equal
 * to `master` is left out). Internal: `loadMasterKey` does this.
 *
 * @example
 * ```ts
 * const master = withPreviousMasterKeys(current, [old]);
 * ```
 */
export function withPreviousMasterKeys(master: MasterKey, previous: readonly MasterKey[]): MasterKey {
  attachPreviousKeys(master, previous);
  return master;
}

/**
 * A {@link DataKey} from 32 key bytes, which it then overwrites with zeros. Internal.
 *
 * @example
 * ```ts
 * const dataKey = dataKeyFromBytes(randomBytes(32));
 * ```
 */
export function dataKeyFromBytes(bytes: Uint8Array): DataKey {
  return fromBytes(bytes, constructDataKey);
}

function fromBytes<T>(bytes: Uint8Array, construct: (bytes: Uint8Array) => T): T {
  if (bytes.byteLength !== KEY_LENGTH) throw new RangeError(`A key is ${KEY_LENGTH} bytes`);
  try {
    return construct(bytes);
  } finally {
    bytes.fill(0);
  }
}

/**
 * The `KeyObject` inside a {@link MasterKey}; a `TypeError` for anything else. Internal.
 *
 * @example
 * ```ts
 * const cipher = createCipheriv('aes-256-gcm', masterKeyObject(master), nonce);
 * ```
 */
export function masterKeyObject(key: MasterKey): KeyObject {
  if (!(key instanceof MasterKey)) throw new TypeError('Expected a MasterKey from loadMasterKey()');
  return masterKeyMaterial(key);
}

/**
 * The `KeyObject` inside a {@link DataKey}; a `TypeError` for anything else. Internal.
 *
 * @example
 * ```ts
 * const cipher = createCipheriv('aes-256-gcm', dataKeyObject(dataKey), nonce);
 * ```
 */
export function dataKeyObject(key: DataKey): KeyObject {
  if (!(key instanceof DataKey))
    throw new TypeError('Expected a DataKey from createDataKey() or unwrapDataKey()');
  return dataKeyMaterial(key);
}
