import { monotonicFactory } from 'ulid';
import { randomBytesFromPool } from './crypto/random-pool.ts';

/**
 * The id prefixes of PROTOCOL.md (plus server-side records: `shr_` share links, `usr_` users,
 * `sgn_` signed-in sessions, `inv_` invitations, `aud_` audit entries, `fnl_` funnels, `smf_` source map files,
 * `job_` AI jobs, `dig_` digests, `fb_` AI feedback, `era_` erasure requests, `dsar_` access
 * requests, `sso_` SSO connections, `dom_` claimed domains, `pk_` passkeys, `idn_` linked identities).
 */
export type IdPrefix =
  | 'org'
  | 'proj'
  | 'tok'
  | 'call'
  | 'cl'
  | 'evt'
  | 'dlv'
  | 'ch'
  | 'rule'
  | 'shr'
  | 'usr'
  | 'sgn'
  | 'inv'
  | 'aud'
  | 'fnl'
  | 'smf'
  | 'job'
  | 'dig'
  | 'fb'
  | 'era'
  | 'dsar'
  | 'sso'
  | 'dom'
  | 'pk'
  | 'idn';

// ulid's own PRNG calls `crypto.getRandomValues` once per character (16 calls, ~0.2 ms an id);
// the same CSPRNG bytes come from the pool.
const nextUlid = monotonicFactory(() => (randomBytesFromPool(1)[0] as number) / 256);

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
