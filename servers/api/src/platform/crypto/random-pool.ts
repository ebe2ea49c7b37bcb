import { randomFillSync } from 'node:crypto';

/** Bytes drawn from the system's CSPRNG at once; small requests are served from them. */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let position = POOL_SIZE;

/**
 * `size` fresh bytes from the CSPRNG, like `crypto.randomBytes(size)`, but requests of up to 256
 * bytes are cut from a pool filled 4 KiB at a time: one call into OpenSSL per few hundred nonces
 * instead of one each (Node does the same for `randomUUID`). Every byte is handed out once; the
 * pool is wiped as it is used.
 *
 * @example
 * ```ts
 * const nonce = randomBytesFromPool(12);
 * ```
 */
export function randomBytesFromPool(size: number): Buffer {
  if (!Number.isInteger(size) || size < 0) throw new RangeError('size must be a non-negative integer');
  if (size > 256) return randomFillSync(Buffer.alloc(size));
  if (position + size > POOL_SIZE) {
    randomFillSync(pool);
    position = 0;
  }
  const bytes = Buffer.from(pool.subarray(position, position + size));
  pool.fill(0, position, position + size);
  position += size;
  return bytes;
}
