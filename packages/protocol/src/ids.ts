import { z } from 'zod';

/**
 * Identifier prefixes of protocol v1, by what they identify. An identifier is the prefix, an
 * underscore and a ULID (26 Crockford base32 characters, uppercase), so identifiers sort by
 * creation time.
 *
 * @example
 * ```ts
 * import { ID_PREFIXES } from '@svc/protocol';
 *
 * const sessionId = `${ID_PREFIXES.session}_01JD2S5V8Q8C4Y3K2W9T7N6M5H`;
 * ```
 */
export const ID_PREFIXES = {
  session: 'ses',
  visit: 'vis',
  peerConnection: 'pc',
  call: 'call',
  organization: 'org',
  project: 'proj',
  cluster: 'cl',
  event: 'evt',
  delivery: 'dlv',
  channel: 'ch',
  rule: 'rule',
  token: 'tok',
} as const;

/**
 * One identifier prefix: `ses`, `vis`, `pc`, `call`, `org`, `proj`, `cl`, `evt`, `dlv`, `ch`,
 * `rule` or `tok`.
 *
 * @example
 * ```ts
 * const prefix: IdPrefix = 'ses';
 * ```
 */
export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

/**
 * The ULID part of an identifier: 26 uppercase Crockford base32 characters (no I, L, O, U), the
 * first one 0-7 because a ULID's 48-bit time part does not fill its 10 characters.
 *
 * @example
 * ```ts
 * ULID_PATTERN.test('01JD2S5V8Q8C4Y3K2W9T7N6M5H'); // true
 * ```
 */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

const knownPrefixes = new Set<string>(Object.values(ID_PREFIXES));
const idSchemas = new Map<IdPrefix, z.ZodString>();

/**
 * The schema of an identifier with `prefix`: `<prefix>_` and a ULID. The same schema instance is
 * returned for the same prefix. Throws a `TypeError` for a prefix that is not in
 * {@link ID_PREFIXES} (a programming error, not an input condition).
 *
 * @example
 * ```ts
 * import { idSchema } from '@svc/protocol';
 *
 * idSchema('ses').parse('ses_01JD2S5V8Q8C4Y3K2W9T7N6M5H'); // ok
 * idSchema('ses').safeParse('vis_01JD2S5V8Q8C4Y3K2W9T7N6M5H').success; // false
 * ```
 */
export function idSchema(prefix: IdPrefix): z.ZodString {
  if (!knownPrefixes.has(prefix)) throw new TypeError(`Unknown identifier prefix: ${String(prefix)}`);
  let schema = idSchemas.get(prefix);
  if (schema === undefined) {
    schema = z.string().regex(new RegExp(`^${prefix}_[0-7][0-9A-HJKMNP-TV-Z]{25}$`), {
      message: `Expected an identifier "${prefix}_" followed by a ULID (26 uppercase Crockford base32 characters)`,
    });
    idSchemas.set(prefix, schema);
  }
  return schema;
}

/**
 * Whether `value` is an identifier with `prefix`.
 *
 * @example
 * ```ts
 * isId('pc', 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H'); // true
 * ```
 */
export function isId(prefix: IdPrefix, value: unknown): value is string {
  return idSchema(prefix).safeParse(value).success;
}
