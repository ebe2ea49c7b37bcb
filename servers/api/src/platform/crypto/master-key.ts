import { randomBytes } from 'node:crypto';
import { type FileHandle, link, mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { EncryptionError } from './encryption-error.ts';
import { KEY_LENGTH, type MasterKey, masterKeyFromBytes, withPreviousMasterKeys } from './keys.ts';

/**
 * Name of the key file inside the data directory.
 *
 * @example
 * ```ts
 * const keyFile = path.join(dataDirectory, MASTER_KEY_FILE_NAME); // <data>/master.key
 * ```
 */
export const MASTER_KEY_FILE_NAME = 'master.key';

/**
 * Name of the file that keeps the replaced key during `svc rotate-master-key`, beside
 * {@link MASTER_KEY_FILE_NAME}; removed once every data key is re-wrapped.
 *
 * @example
 * ```ts
 * const previousFile = path.join(dataDirectory, PREVIOUS_MASTER_KEY_FILE_NAME); // <data>/master.key.previous
 * ```
 */
const PREVIOUS_MASTER_KEY_FILE_NAME = 'master.key.previous';

/** 32 bytes in base64: 43 characters and one `=` of padding, which may be left out. */
const base64Key = /^[A-Za-z0-9+/]{43}=?$/;
const checkPermissions = process.platform !== 'win32';
const generateHint = 'e.g. from `openssl rand -base64 32`';

/**
 * Options of {@link loadMasterKey}.
 *
 * @example
 * ```ts
 * const options: LoadMasterKeyOptions = { masterKey: process.env.SVC_MASTER_KEY, dataDirectory: './data' };
 * ```
 */
export interface LoadMasterKeyOptions {
  /** The value of `SVC_MASTER_KEY`: base64 of 32 bytes. When set, the key file is not used. */
  masterKey?: string;
  /** Where the key file `master.key` lives (created on first use when `masterKey` is not set). */
  dataDirectory: string;
  /**
   * The value of `SVC_MASTER_KEY_PREVIOUS`: master keys being rotated out, base64, separated by
   * commas or spaces. Data keys they wrapped still unwrap; nothing new is wrapped by them.
   */
  previousMasterKeys?: string;
}

/**
 * The master key, from `SVC_MASTER_KEY` when set, else from the key file
 * `<dataDirectory>/master.key`, which is created on first use.
 *
 * - `SVC_MASTER_KEY` must be the base64 of exactly 32 bytes (44 characters; the final `=` and
 *   surrounding whitespace may be left out). Use it when several processes share the data (PostgreSQL + S3).
 * - The key file holds the same base64 text (so it can be moved into `SVC_MASTER_KEY` later). It
 *   is created atomically with mode 0600 (also when two processes start at once) and must stay
 *   readable by its owner only: a key file with any group or other permission is refused.
 *
 * @throws {EncryptionError} `invalid_master_key`, with a message that says how to fix it and
 *   never contains the key.
 * @example
 * ```ts
 * const master = await loadMasterKey({ masterKey: process.env.SVC_MASTER_KEY, dataDirectory: './data' });
 * ```
 */
export async function loadMasterKey(options: LoadMasterKeyOptions): Promise<MasterKey> {
  const { masterKey, dataDirectory } = options;
  const previous = parsePreviousKeys(options.previousMasterKeys);
  if (masterKey !== undefined) {
    if (masterKey.trim() === '') {
      throw invalid(
        `SVC_MASTER_KEY is set but empty: set it to the base64 of 32 random bytes (${generateHint}), or unset it to use the key file in the data directory`,
      );
    }
    return withPreviousMasterKeys(parseKey(masterKey, 'SVC_MASTER_KEY'), previous);
  }
  if (typeof dataDirectory !== 'string' || dataDirectory === '') {
    throw new TypeError('loadMasterKey: `dataDirectory` must be a non-empty path');
  }
  const file = path.resolve(dataDirectory, MASTER_KEY_FILE_NAME);
  // A rotation that did not finish left the replaced key beside the current one.
  const replaced = await readKeyFile(path.resolve(dataDirectory, PREVIOUS_MASTER_KEY_FILE_NAME));
  const current = (await readKeyFile(file)) ?? (await createKeyFile(file));
  return withPreviousMasterKeys(current, replaced === null ? previous : [...previous, replaced]);
}

/** The keys of `SVC_MASTER_KEY_PREVIOUS`, each checked like `SVC_MASTER_KEY`. */
function parsePreviousKeys(value: string | undefined): MasterKey[] {
  if (value === undefined) return [];
  const keys = value.split(/[\s,]+/).filter((part) => part !== '');
  return keys.map((key, index) =>
    parseKey(
      key,
      keys.length === 1 ? 'SVC_MASTER_KEY_PREVIOUS' : `SVC_MASTER_KEY_PREVIOUS (key ${index + 1})`,
    ),
  );
}

/**
 * The file steps of a master key rotation on the key file: the current `master.key` is kept as
 * `master.key.previous` and a new random `master.key` is created, each step fsynced. Returns the
 * new key with the old one attached as {@link MasterKey.previous}, to re-wrap the data keys with;
 * {@link finishMasterKeyRotation} removes the old key once that is done. A crash at any point
 * leaves both keys loadable by {@link loadMasterKey}.
 *
 * @throws {EncryptionError} `invalid_master_key` when there is no key file, or a rotation is
 *   unfinished (`master.key.previous` exists).
 * @example
 * ```ts
 * const master = await rotateMasterKeyFile('./data');
 * await rewrapDataKeys(database, master);
 * await finishMasterKeyRotation('./data');
 * ```
 */
export async function rotateMasterKeyFile(dataDirectory: string): Promise<MasterKey> {
  const directory = path.resolve(dataDirectory);
  const file = path.join(directory, MASTER_KEY_FILE_NAME);
  const previousFile = path.join(directory, PREVIOUS_MASTER_KEY_FILE_NAME);
  const replaced = await readKeyFile(file);
  if (replaced === null) throw invalid(`There is no master key file ${file} to rotate`);
  if ((await readKeyFile(previousFile)) !== null) {
    throw invalid(
      `A master key rotation is unfinished (${previousFile} exists): run \`svc rewrap-data-keys\` to finish it first`,
    );
  }
  // link() keeps the complete old file under its new name, and fails if that name exists.
  await link(file, previousFile);
  await syncDirectory(directory);
  await unlink(file);
  const current = await createKeyFile(file);
  return withPreviousMasterKeys(current, [replaced]);
}

/**
 * Removes `master.key.previous` once no data key needs it (after `svc rewrap-data-keys`).
 * `false` when there was none.
 *
 * @example
 * ```ts
 * await finishMasterKeyRotation('./data');
 * ```
 */
export async function finishMasterKeyRotation(dataDirectory: string): Promise<boolean> {
  const directory = path.resolve(dataDirectory);
  try {
    await unlink(path.join(directory, PREVIOUS_MASTER_KEY_FILE_NAME));
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  await syncDirectory(directory);
  return true;
}

/** The key in `file`, or `null` when there is no such file. */
async function readKeyFile(file: string): Promise<MasterKey | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw invalid(`Cannot read the master key file ${file} (${errorCode(error) ?? String(error)})`, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw invalid(`The master key file ${file} is not a regular file`);
    if (checkPermissions && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0');
      throw invalid(
        `The master key file ${file} is accessible by group or others (mode ${mode}): run \`chmod 600 ${file}\``,
      );
    }
    if (stats.size > 1024) {
      throw invalid(
        `The master key file ${file} is ${stats.size} bytes: it should hold the base64 of 32 bytes (44 characters)`,
      );
    }
    return parseKey(await handle.readFile('utf8'), `The master key file ${file}`);
  } finally {
    await handle.close();
  }
}

/** Creates `file` with a new random key, atomically: a concurrent creator's key wins if it was first. */
async function createKeyFile(file: string): Promise<MasterKey> {
  const directory = path.dirname(file);
  const bytes = randomBytes(KEY_LENGTH);
  const text = Buffer.from(`${bytes.toString('base64')}\n`);
  const temporary = path.join(directory, `.${MASTER_KEY_FILE_NAME}~${randomBytes(8).toString('hex')}`);
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // link() publishes the complete file under its name, and fails if it already exists.
    await link(temporary, file).catch(async (error: unknown) => {
      const code = errorCode(error);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
      // A file system without hard links: create the file exclusively instead.
      const direct = await open(file, 'wx', 0o600);
      try {
        await direct.writeFile(text);
        await direct.sync();
      } finally {
        await direct.close();
      }
    });
    await syncDirectory(directory);
  } catch (error) {
    bytes.fill(0);
    if (errorCode(error) === 'EEXIST') {
      // Another process created it in the meantime: use theirs.
      const existing = await readKeyFile(file);
      if (existing !== null) return existing;
    }
    throw invalid(`Cannot create the master key file ${file} (${errorCode(error) ?? String(error)})`, error);
  } finally {
    text.fill(0);
    await unlink(temporary).catch(() => {});
  }
  return masterKeyFromBytes(bytes);
}

function parseKey(value: string, source: string): MasterKey {
  const trimmed = value.trim();
  if (!base64Key.test(trimmed)) {
    const decoded = /^[A-Za-z0-9+/]*={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64').byteLength
      : undefined;
    const what =
      decoded === undefined
        ? `is not base64 (${trimmed.length} characters)`
        : `decodes to ${decoded} bytes (${trimmed.length} characters)`;
    throw invalid(
      `${source} ${what}: a master key is the base64 of exactly 32 random bytes, 44 characters (${generateHint})`,
    );
  }
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.every((byte) => byte === bytes[0])) {
    bytes.fill(0);
    throw invalid(`${source} is 32 identical bytes, a placeholder: use 32 random bytes (${generateHint})`);
  }
  return masterKeyFromBytes(bytes);
}

async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function invalid(message: string, cause?: unknown): EncryptionError {
  return new EncryptionError({ code: 'invalid_master_key', message, cause });
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
