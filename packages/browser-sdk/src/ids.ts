const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A new `<prefix>_<ULID>` id (PROTOCOL.md: 26 Crockford base32 characters, 48 bits of time then
 * 80 random bits from `crypto.getRandomValues`), so ids sort by creation time.
 *
 * @example
 * ```ts
 * createId('ses'); // 'ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H'
 * ```
 */
export function createId(prefix: 'ses' | 'vis' | 'pc', now: number = Date.now()): string {
  let time = '';
  let value = Math.max(0, Math.floor(now));
  for (let index = 0; index < 10; index += 1) {
    time = CROCKFORD[value % 32] + time;
    value = Math.floor(value / 32);
  }
  const random = crypto.getRandomValues(new Uint8Array(16));
  let tail = '';
  for (let index = 0; index < 16; index += 1) tail += CROCKFORD[(random[index] as number) % 32];
  return `${prefix}_${time}${tail}`;
}
