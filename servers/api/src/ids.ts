import { monotonicFactory } from 'ulid';

/** The id prefixes of PROTOCOL.md (plus `shr_` for share links, a server-side record). */
export type IdPrefix = 'org' | 'proj' | 'tok' | 'call' | 'cl' | 'evt' | 'dlv' | 'ch' | 'rule' | 'shr';

const nextUlid = monotonicFactory();

/**
 * A new `<prefix>_<ULID>` id: 26 Crockford base32 characters that sort by creation time, and
 * strictly increase within this process.
 *
 * @example
 * ```ts
 * createId('proj'); // 'proj_01JD2S5V8Q8C4Y3K2W9T7N6M5H'
 * ```
 */
export function createId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid()}`;
}
