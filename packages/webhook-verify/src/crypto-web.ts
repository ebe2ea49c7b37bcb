/**
 * The HMAC of the WebCrypto build (browsers, Cloudflare Workers, Deno, Bun, edge runtimes):
 * `crypto.subtle`, with the imported `CryptoKey` cached per secret. Signatures are checked with
 * `crypto.subtle.verify`, which compares in constant time.
 */
import type { SignatureCrypto } from './verify.ts';

/** How many secrets' keys are kept (a worker verifies with one or two). */
const MAX_CACHED_KEYS = 64;
/** Typed from `globalThis.crypto`, so the same code typechecks with the DOM library or Node's types. */
type Subtle = typeof globalThis.crypto.subtle;
type Key = Awaited<ReturnType<Subtle['importKey']>>;

const keys = new Map<string, Promise<Key>>();
const encoder = new TextEncoder();
const algorithm = { name: 'HMAC', hash: 'SHA-256' } as const;

function subtle(): Subtle {
  const value = globalThis.crypto?.subtle;
  if (value === undefined) {
    throw new TypeError(
      'crypto.subtle is not available: this build needs the WebCrypto API (a secure context in browsers).',
    );
  }
  return value;
}

function keyFor(secret: string): Promise<Key> {
  const cached = keys.get(secret);
  if (cached !== undefined) return cached;
  const key = subtle().importKey('raw', encoder.encode(secret), algorithm, false, ['sign', 'verify']);
  // A failed import is not cached: the next call tries again.
  key.catch(() => keys.delete(secret));
  if (keys.size >= MAX_CACHED_KEYS) {
    const oldest = keys.keys().next();
    if (oldest.done !== true) keys.delete(oldest.value);
  }
  keys.set(secret, key);
  return key;
}

/** The signed bytes: `<timestamp>.` then the body (a string body as UTF-8). */
function signedBytes(timestamp: string, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return encoder.encode(`${timestamp}.${body}`);
  // `timestamp` is ASCII digits: one byte per character.
  const bytes = new Uint8Array(timestamp.length + 1 + body.byteLength);
  encoder.encodeInto(`${timestamp}.`, bytes);
  bytes.set(body, timestamp.length + 1);
  return bytes;
}

/** 64 lowercase hex digits (validated by the header parser) as 32 bytes. */
function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let index = 0; index < bytes.length; index++) {
    bytes[index] = Number.parseInt(hex.slice(index * 2, index * 2 + 2), 16);
  }
  return bytes;
}

const hexDigits = Array.from({ length: 256 }, (_, value) => value.toString(16).padStart(2, '0'));

function bytesToHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += hexDigits[byte];
  return hex;
}

/** WebCrypto HMAC-SHA256; comparison by `crypto.subtle.verify`. */
export const webCrypto: SignatureCrypto = {
  async matches(secrets, timestamp, body, signatures) {
    const message = signedBytes(timestamp, body);
    const provided = signatures.map(hexToBytes);
    for (const secret of secrets) {
      const key = await keyFor(secret);
      for (const candidate of provided) {
        if (await subtle().verify('HMAC', key, candidate, message)) return true;
      }
    }
    return false;
  },
  async sign(secret, timestamp, body) {
    const key = await keyFor(secret);
    return bytesToHex(new Uint8Array(await subtle().sign('HMAC', key, signedBytes(timestamp, body))));
  },
};
