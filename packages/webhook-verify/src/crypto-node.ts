/**
 * The HMAC of the Node build: `node:crypto`, with `timingSafeEqual` over the 32 digest bytes.
 * The key is the secret string itself (hashed as UTF-8): measured faster than a cached
 * `KeyObject` on Node 24.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SignatureCrypto } from './verify.ts';

function digest(secret: string, timestamp: string, body: string | Uint8Array): Buffer {
  // A string body is hashed as its UTF-8 bytes: the same bytes as the Uint8Array the sender wrote.
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
}

/** `node:crypto` HMAC-SHA256 with constant-time comparison. */
export const nodeCrypto: SignatureCrypto = {
  matches(secrets, timestamp, body, signatures) {
    const provided = signatures.map((signature) => Buffer.from(signature, 'hex'));
    for (const secret of secrets) {
      const expected = digest(secret, timestamp, body);
      for (const candidate of provided) {
        if (candidate.length === expected.length && timingSafeEqual(expected, candidate)) return true;
      }
    }
    return false;
  },
  sign(secret, timestamp, body) {
    return digest(secret, timestamp, body).toString('hex');
  },
};
