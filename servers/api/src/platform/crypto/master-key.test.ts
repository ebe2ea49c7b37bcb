import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EncryptionError } from './encryption-error.ts';
import { createDataKey, openBlob, sealBlob, unwrapDataKey, wrapDataKey, wrappingKeyId } from './envelope.ts';
import type { MasterKey } from './keys.ts';
import { finishMasterKeyRotation, loadMasterKey, rotateMasterKeyFile } from './master-key.ts';

let dataDirectory: string;

beforeEach(async () => {
  dataDirectory = await mkdtemp(path.join(tmpdir(), 'svc-master-key-'));
});

afterEach(async () => {
  await rm(dataDirectory, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<EncryptionError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!EncryptionError.isInstance(error))
    throw new Error(`expected an EncryptionError, got ${String(error)}`);
  return error;
}

/** Whether data wrapped under `first` opens under `second`: the same key. */
function sameKey(first: MasterKey, second: MasterKey): boolean {
  const { dataKey, wrappedKey } = createDataKey(first);
  const sealed = sealBlob(dataKey, new Uint8Array([1, 2, 3]), 'proj_1/ses_1/1');
  try {
    return openBlob(unwrapDataKey(second, wrappedKey), sealed, 'proj_1/ses_1/1').byteLength === 3;
  } catch (error) {
    if (EncryptionError.isInstance(error) && error.code === 'wrong_key') return false;
    throw error;
  }
}

describe('loadMasterKey from SVC_MASTER_KEY', () => {
  it('accepts the base64 of 32 bytes, ignoring surrounding whitespace, and creates no key file', async () => {
    const encoded = randomBytes(32).toString('base64');
    const first = await loadMasterKey({ masterKey: encoded, dataDirectory });
    const second = await loadMasterKey({ masterKey: ` ${encoded}\n`, dataDirectory });
    const unpadded = await loadMasterKey({ masterKey: encoded.replace(/=$/, ''), dataDirectory });
    expect(sameKey(first, second)).toBe(true);
    expect(first.id).toBe(second.id);
    expect(unpadded.id).toBe(first.id);
    expect(await readdir(dataDirectory)).toEqual([]);
  });

  it.each([
    ['31 bytes', randomBytes(31).toString('base64'), 'decodes to 31 bytes'],
    ['33 bytes', randomBytes(33).toString('base64'), 'decodes to 33 bytes'],
    ['64 bytes', randomBytes(64).toString('base64'), 'decodes to 64 bytes'],
    ['hex instead of base64', randomBytes(32).toString('hex'), 'decodes to 48 bytes'],
    ['base64url characters', `${randomBytes(32).toString('base64').slice(0, 41)}-_=`, 'is not base64'],
    ['not base64 at all', 'correct horse battery staple!', 'is not base64'],
    ['a placeholder', Buffer.alloc(32).toString('base64'), 'placeholder'],
  ])('refuses %s with a clear message that does not echo the value', async (_, value, expected) => {
    const error = await rejection(loadMasterKey({ masterKey: value, dataDirectory }));
    expect(error.code).toBe('invalid_master_key');
    expect(error.message).toContain('SVC_MASTER_KEY');
    expect(error.message).toContain(expected);
    expect(error.message).toContain('32');
    expect(error.message).not.toContain(value);
  });

  it('refuses an empty value instead of silently using the key file', async () => {
    const error = await rejection(loadMasterKey({ masterKey: '  ', dataDirectory }));
    expect(error.code).toBe('invalid_master_key');
    expect(error.message).toContain('set but empty');
    expect(await readdir(dataDirectory)).toEqual([]);
  });
});

describe('loadMasterKey from the key file', () => {
  it('creates <dataDirectory>/master.key with mode 0600 on first use, and reuses it', async () => {
    const first = await loadMasterKey({ dataDirectory });
    const file = path.join(dataDirectory, 'master.key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(await readdir(dataDirectory)).toEqual(['master.key']); // no temporary file left

    const second = await loadMasterKey({ dataDirectory });
    expect(second.id).toBe(first.id);
    // A blob sealed with a data key wrapped by the first load opens after unwrapping with the second.
    const { dataKey, wrappedKey } = createDataKey(first);
    const sealed = sealBlob(dataKey, new Uint8Array([9, 8, 7]), 'proj_1/ses_1/1');
    expect(openBlob(unwrapDataKey(second, wrappedKey), sealed, 'proj_1/ses_1/1')).toEqual(
      new Uint8Array([9, 8, 7]),
    );
  });

  it('creates the data directory when it does not exist', async () => {
    const nested = path.join(dataDirectory, 'a', 'data');
    await loadMasterKey({ dataDirectory: nested });
    expect((await stat(path.join(nested, 'master.key'))).mode & 0o777).toBe(0o600);
  });

  it('holds the same text SVC_MASTER_KEY takes, so a deployment can move the key into the environment', async () => {
    const fromFile = await loadMasterKey({ dataDirectory });
    const text = await readFile(path.join(dataDirectory, 'master.key'), 'utf8');
    const fromEnvironment = await loadMasterKey({ masterKey: text, dataDirectory: '/nonexistent' });
    expect(sameKey(fromFile, fromEnvironment)).toBe(true);
  });

  it('gives every concurrent first start the same key', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadMasterKey({ dataDirectory })));
    expect(new Set(keys.map((key) => key.id)).size).toBe(1);
    expect(await readdir(dataDirectory)).toEqual(['master.key']);
  });

  it.each([0o644, 0o640, 0o604, 0o660, 0o620].map((mode) => [`0${mode.toString(8)}`, mode] as const))(
    'refuses a key file with mode %s',
    async (_, mode) => {
      await loadMasterKey({ dataDirectory });
      const file = path.join(dataDirectory, 'master.key');
      const content = await readFile(file, 'utf8');
      await chmod(file, mode);
      const error = await rejection(loadMasterKey({ dataDirectory }));
      expect(error.code).toBe('invalid_master_key');
      expect(error.message).toContain(`mode 0${mode.toString(8)}`);
      expect(error.message).toContain(`chmod 600 ${file}`);
      expect(error.message).not.toContain(content.trim());
    },
  );

  it.each([
    ['empty', ''],
    ['16 bytes', `${randomBytes(16).toString('base64')}\n`],
    ['raw binary', randomBytes(32)],
    ['too large', 'A'.repeat(5000)],
  ])('refuses a key file that is %s, without overwriting it', async (_, content) => {
    const file = path.join(dataDirectory, 'master.key');
    await writeFile(file, content, { mode: 0o600 });
    const error = await rejection(loadMasterKey({ dataDirectory }));
    expect(error.code).toBe('invalid_master_key');
    expect(error.message).toContain(file);
    expect(Buffer.compare(await readFile(file), Buffer.from(content))).toBe(0);
  });

  it('refuses a directory in place of the key file', async () => {
    await mkdir(path.join(dataDirectory, 'master.key'));
    const error = await rejection(loadMasterKey({ dataDirectory }));
    expect(error.code).toBe('invalid_master_key');
    expect(error.message).toContain('not a regular file');
  });

  it('never shows the key in errors, logs or JSON', async () => {
    const master = await loadMasterKey({ dataDirectory });
    const encoded = (await readFile(path.join(dataDirectory, 'master.key'), 'utf8')).trim();
    const otherMaster = await loadMasterKey({ masterKey: randomBytes(32).toString('base64'), dataDirectory });
    const error = await rejection(
      Promise.resolve().then(() => unwrapDataKey(otherMaster, createDataKey(master).wrappedKey)),
    );
    expect(error.code).toBe('wrong_key');
    for (const text of [
      error.message,
      String(error.stack),
      inspect(error),
      inspect(master),
      JSON.stringify({ master }),
    ]) {
      expect(text).not.toContain(encoded);
      expect(text).not.toContain(Buffer.from(encoded, 'base64').toString('hex'));
    }
  });
});

describe('master keys being rotated out', () => {
  const base64 = () => randomBytes(32).toString('base64');

  it('unwraps what a previous key wrapped, wraps only with the current one, and reports every id when none fits', async () => {
    const [oldText, otherText, currentText] = [base64(), base64(), base64()];
    const old = await loadMasterKey({ masterKey: oldText, dataDirectory });
    const { dataKey, wrappedKey } = createDataKey(old);
    const sealed = sealBlob(dataKey, new Uint8Array([7]), 'proj_1/ses_1/1');

    const current = await loadMasterKey({
      masterKey: currentText,
      previousMasterKeys: ` ${otherText} ,\n${oldText} `,
      dataDirectory,
    });
    expect(current.previous.map((key) => key.id)).toEqual([
      (await loadMasterKey({ masterKey: otherText, dataDirectory })).id,
      old.id,
    ]);
    expect(openBlob(unwrapDataKey(current, wrappedKey), sealed, 'proj_1/ses_1/1')).toEqual(
      new Uint8Array([7]),
    );
    const rewrapped = wrapDataKey(current, unwrapDataKey(current, wrappedKey));
    expect(wrappingKeyId(rewrapped)).toBe(current.id);
    const alone = await loadMasterKey({ masterKey: currentText, dataDirectory });
    expect(openBlob(unwrapDataKey(alone, rewrapped), sealed, 'proj_1/ses_1/1')).toEqual(new Uint8Array([7]));

    const error = await rejection(
      (async () =>
        unwrapDataKey(
          await loadMasterKey({ masterKey: currentText, previousMasterKeys: otherText, dataDirectory }),
          wrappedKey,
        ))(),
    );
    expect(error.code).toBe('wrong_key');
    expect(error.message).toContain(old.id);
    expect(error.message).toContain(current.id);
    expect(error.message).toContain(current.previous[0]?.id);
  });

  it('ignores a previous key equal to the current one, and refuses a malformed one by position', async () => {
    const text = base64();
    expect(
      (await loadMasterKey({ masterKey: text, previousMasterKeys: text, dataDirectory })).previous,
    ).toEqual([]);
    const error = await rejection(
      loadMasterKey({ masterKey: text, previousMasterKeys: `${base64()},short`, dataDirectory }),
    );
    expect(error.code).toBe('invalid_master_key');
    expect(error.message).toMatch(/SVC_MASTER_KEY_PREVIOUS \(key 2\)/);
  });

  it('rotates the key file in steps that each leave both keys loadable', async () => {
    const before = await loadMasterKey({ dataDirectory });
    const { wrappedKey } = createDataKey(before);
    const rotated = await rotateMasterKeyFile(dataDirectory);
    expect(rotated.id).not.toBe(before.id);
    expect(rotated.previous.map((key) => key.id)).toEqual([before.id]);
    // Until it finishes, loading gives the new key with the old one as previous.
    const reloaded = await loadMasterKey({ dataDirectory });
    expect(reloaded.id).toBe(rotated.id);
    expect(reloaded.previous.map((key) => key.id)).toEqual([before.id]);
    expect(sameKey(reloaded, reloaded)).toBe(true);
    expect(() => unwrapDataKey(reloaded, wrappedKey)).not.toThrow();
    expect((await stat(path.join(dataDirectory, 'master.key.previous'))).mode & 0o777).toBe(0o600);
    // A second rotation waits for the first to finish.
    expect((await rejection(rotateMasterKeyFile(dataDirectory))).message).toMatch(/unfinished/);
    expect(await finishMasterKeyRotation(dataDirectory)).toBe(true);
    expect(await finishMasterKeyRotation(dataDirectory)).toBe(false);
    expect((await loadMasterKey({ dataDirectory })).previous).toEqual([]);
    expect((await rejection(rotateMasterKeyFile(path.join(dataDirectory, 'missing')))).message).toMatch(
      /no master key file/,
    );
  });
});
