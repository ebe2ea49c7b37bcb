import { createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EncryptionError, type EncryptionErrorCode } from './encryption-error.ts';
import {
  createDataKey,
  openBlob,
  SEALED_BLOB_OVERHEAD,
  sealBlob,
  unwrapDataKey,
  WRAPPED_KEY_LENGTH,
} from './envelope.ts';
import { type DataKey, dataKeyFromBytes, masterKeyFromBytes } from './keys.ts';

const where = 'proj_01/ses_01/00000001';
const master = masterKeyFromBytes(randomBytes(32));
const { dataKey, wrappedKey } = createDataKey(master);

function thrown(operation: () => unknown): EncryptionError {
  try {
    operation();
  } catch (error) {
    if (EncryptionError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an EncryptionError');
}

function expectCode(operation: () => unknown, code: EncryptionErrorCode): void {
  expect(thrown(operation).code).toBe(code);
}

describe('sealBlob / openBlob', () => {
  it.each([0, 1, 15, 16, 17, 1000, 5 * 1024 * 1024])('round-trips %i bytes', (size) => {
    const plaintext = new Uint8Array(randomBytes(size));
    const sealed = sealBlob(dataKey, plaintext, where);
    expect(sealed).toBeInstanceOf(Uint8Array);
    expect(sealed.byteLength).toBe(size + SEALED_BLOB_OVERHEAD);
    const opened = openBlob(dataKey, sealed, where);
    expect(opened).toBeInstanceOf(Uint8Array);
    expect(Buffer.compare(opened, plaintext)).toBe(0);
  });

  /** Key bytes 0, 1, ..., 31: a fixed data key for known answers. */
  const countingKey = () => Uint8Array.from({ length: 32 }, (_, index) => index);
  const vectorPlace = 'svc:chunk:v1:proj_01/ses_01/7';

  it('opens a blob sealed by an earlier release (format v1 is stable)', () => {
    // Sealed before the key derivation moved from hkdfSync to a cached extract step.
    const sealed = Buffer.from(
      '0133ad236cebbcd725e9c60a3d031ab93e9ef3ee9b087482fd36256aa18421e4edeb8697f0c93cb750c9a16e',
      'hex',
    );
    const opened = openBlob(dataKeyFromBytes(countingKey()), sealed, vectorPlace);
    expect(new TextDecoder().decode(opened)).toBe('{"v":1,"seq":7}');
  });

  it('derives each blob key exactly as documented: HKDF-SHA256(data key, no salt, context + SHA-256(place))', () => {
    const key = countingKey();
    for (const place of [vectorPlace, 'p/s/1', 'x'.repeat(5000)]) {
      const plaintext = new Uint8Array(randomBytes(100));
      const sealed = sealBlob(dataKeyFromBytes(countingKey()), plaintext, place);
      // An independent opening with Node's own HKDF and AES-GCM, following the format's docs.
      const info = Buffer.concat([
        Buffer.from('svc:blob:v1\0'),
        createHash('sha256').update(place, 'utf8').digest(),
      ]);
      const derived = Buffer.from(hkdfSync('sha256', key, new Uint8Array(0), info, 32));
      const decipher = createDecipheriv('aes-256-gcm', derived, sealed.subarray(1, 13), {
        authTagLength: 16,
      });
      decipher.setAAD(Buffer.concat([sealed.subarray(0, 1), Buffer.from(place, 'utf8')]));
      decipher.setAuthTag(sealed.subarray(sealed.byteLength - 16));
      const opened = Buffer.concat([
        decipher.update(sealed.subarray(13, sealed.byteLength - 16)),
        decipher.final(),
      ]);
      expect(Buffer.compare(opened, plaintext)).toBe(0);
    }
  });

  it('writes version 1, then a 12-byte nonce, the ciphertext and a 16-byte tag', () => {
    const plaintext = new TextEncoder().encode('hello, chunk');
    const sealed = sealBlob(dataKey, plaintext, where);
    expect(sealed[0]).toBe(1);
    expect(sealed.byteLength).toBe(1 + 12 + plaintext.byteLength + 16);
    expect(Buffer.from(sealed).includes(Buffer.from(plaintext))).toBe(false);
  });

  it('seals the same plaintext differently every time (random nonce)', () => {
    const plaintext = new Uint8Array(64);
    const first = sealBlob(dataKey, plaintext, where);
    const second = sealBlob(dataKey, plaintext, where);
    expect(Buffer.compare(first.subarray(1, 13), second.subarray(1, 13))).not.toBe(0);
    expect(Buffer.compare(first, second)).not.toBe(0);
    expect(openBlob(dataKey, second, where)).toEqual(plaintext);
  });

  it('detects a change to any byte: version, nonce, ciphertext or tag', () => {
    const sealed = sealBlob(dataKey, new Uint8Array(randomBytes(40)), where);
    for (let index = 0; index < sealed.byteLength; index += 1) {
      const tampered = sealed.slice();
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expectCode(() => openBlob(dataKey, tampered, where), index === 0 ? 'unsupported_version' : 'corrupt');
    }
  });

  it('detects truncation and extension', () => {
    const sealed = sealBlob(dataKey, new Uint8Array(randomBytes(40)), where);
    for (const length of [0, 1, 13, 28, sealed.byteLength - 1]) {
      expectCode(() => openBlob(dataKey, sealed.subarray(0, length), where), 'corrupt');
    }
    const extended = new Uint8Array(sealed.byteLength + 1);
    extended.set(sealed);
    expectCode(() => openBlob(dataKey, extended, where), 'corrupt');
  });

  it('refuses another data key', () => {
    const sealed = sealBlob(dataKey, new Uint8Array([1, 2, 3]), where);
    const other = createDataKey(master).dataKey;
    expectCode(() => openBlob(other, sealed, where), 'corrupt');
  });

  it('refuses other associated data: a blob copied to another session does not open', () => {
    const sealed = sealBlob(dataKey, new Uint8Array([1, 2, 3]), where);
    for (const elsewhere of [
      'proj_01/ses_02/00000001',
      'proj_01/ses_01/00000002',
      `${where} `,
      'proj_02/ses_01/00000001',
    ]) {
      const error = thrown(() => openBlob(dataKey, sealed, elsewhere));
      expect(error.code).toBe('corrupt');
      expect(error.message).toContain('failed authentication');
    }
  });

  it('refuses an unknown format version', () => {
    const sealed = sealBlob(dataKey, new Uint8Array([1, 2, 3]), where);
    sealed[0] = 2;
    const error = thrown(() => openBlob(dataKey, sealed, where));
    expect(error.code).toBe('unsupported_version');
    expect(error.message).toContain('version 2');
  });

  it('accepts long associated data (beyond HKDF info limits)', () => {
    const long = 'x'.repeat(5000);
    expect(openBlob(dataKey, sealBlob(dataKey, new Uint8Array([7]), long), long)).toEqual(
      new Uint8Array([7]),
    );
  });

  it('refuses programming mistakes with a TypeError', () => {
    expect(() => sealBlob(dataKey, new Uint8Array(1), '')).toThrow(TypeError);
    expect(() => sealBlob(dataKey, 'text' as unknown as Uint8Array, where)).toThrow(TypeError);
    expect(() => sealBlob(randomBytes(32) as unknown as DataKey, new Uint8Array(1), where)).toThrow(
      TypeError,
    );
    expect(() => openBlob(dataKey, sealBlob(dataKey, new Uint8Array(1), where), '')).toThrow(TypeError);
  });
});

describe('createDataKey / unwrapDataKey', () => {
  it(`wraps a data key into ${WRAPPED_KEY_LENGTH} bytes that unwrap to the same key`, () => {
    expect(wrappedKey).toBeInstanceOf(Uint8Array);
    expect(wrappedKey.byteLength).toBe(WRAPPED_KEY_LENGTH);
    expect(wrappedKey[0]).toBe(1);
    expect(Buffer.from(wrappedKey.subarray(1, 9)).toString('hex')).toBe(master.id);
    const unwrapped = unwrapDataKey(master, wrappedKey);
    const sealed = sealBlob(dataKey, new Uint8Array([4, 5, 6]), where);
    expect(openBlob(unwrapped, sealed, where)).toEqual(new Uint8Array([4, 5, 6]));
  });

  it('creates a different key each time', () => {
    const first = createDataKey(master);
    const second = createDataKey(master);
    const sealed = sealBlob(first.dataKey, new Uint8Array([1]), where);
    expectCode(() => openBlob(second.dataKey, sealed, where), 'corrupt');
    expect(Buffer.compare(first.wrappedKey, second.wrappedKey)).not.toBe(0);
  });

  it('reports wrong_key, naming both key ids, when another master key wrapped it', () => {
    const otherMaster = masterKeyFromBytes(randomBytes(32));
    const error = thrown(() => unwrapDataKey(otherMaster, wrappedKey));
    expect(error.code).toBe('wrong_key');
    expect(error.message).toContain(master.id);
    expect(error.message).toContain(otherMaster.id);
  });

  it('reports corrupt for a modified wrapped key, unsupported_version for an unknown format', () => {
    for (let index = 9; index < wrappedKey.byteLength; index += 1) {
      const tampered = wrappedKey.slice();
      tampered[index] = (tampered[index] ?? 0) ^ 0x80;
      expectCode(() => unwrapDataKey(master, tampered), 'corrupt');
    }
    const otherId = wrappedKey.slice();
    otherId[3] = (otherId[3] ?? 0) ^ 0x01;
    expectCode(() => unwrapDataKey(master, otherId), 'wrong_key');
    const version = wrappedKey.slice();
    version[0] = 9;
    expectCode(() => unwrapDataKey(master, version), 'unsupported_version');
    expectCode(() => unwrapDataKey(master, wrappedKey.subarray(0, 40)), 'corrupt');
    expectCode(() => unwrapDataKey(master, new Uint8Array(0)), 'corrupt');
  });

  it('keeps keys out of JSON, strings and inspect output', () => {
    const unwrapped = unwrapDataKey(master, wrappedKey);
    for (const key of [master, dataKey, unwrapped]) {
      expect(JSON.stringify({ key })).toBe('{"key":"[redacted]"}');
      expect(String(key)).toBe('[redacted]');
      expect(`${key}`).toBe('[redacted]');
      expect(inspect(key)).toBe('[redacted]');
      expect(inspect({ nested: { key } }, { depth: 5, showHidden: true })).toContain('[redacted]');
      expect(Object.keys(key)).toEqual([]);
    }
    expect(master.id).toMatch(/^[0-9a-f]{16}$/);
  });
});
