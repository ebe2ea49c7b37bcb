import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** Random bytes as lowercase Crockford base32 (no padding): URL-, header- and shell-safe. */
function randomText(bytes: number): string {
  const buffer = randomBytes(bytes);
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of buffer) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += CROCKFORD[(value << (5 - bits)) & 31];
  return text;
}

/**
 * A new project key: public (it ships in pages) and only good for ingest. 128 random bits.
 *
 * @example
 * ```ts
 * createProjectKey(); // 'pk_7m3k...'
 * ```
 */
export function createProjectKey(): string {
  return `pk_${randomText(16)}`;
}

/**
 * A new API token: a 256-bit secret shown once; only its SHA-256 is stored.
 *
 * @example
 * ```ts
 * const token = createApiToken(); // 'svc_...'
 * ```
 */
export function createApiToken(): string {
  return `svc_${randomText(32)}`;
}

/**
 * A new share token for a public, read-only session link: a 256-bit secret; only its hash is
 * stored.
 */
export function createShareToken(): string {
  return randomText(32);
}

/** A new secret for a dashboard session's cookie: 256 random bits; only its hash is stored. */
export function createSessionSecret(): string {
  return randomText(32);
}

/**
 * A new token for a one-time link sent by e-mail (verifying an address, ...): 256 random bits;
 * only its hash is stored.
 */
export function createLinkToken(): string {
  return randomText(32);
}

/**
 * A new CSRF token for a dashboard session: 256 random bits, sent back in `X-Service-CSRF` by
 * the dashboard with every state-changing request.
 */
export function createCsrfToken(): string {
  return randomText(32);
}

/**
 * A new webhook signing secret: `whsec_` and 256 random bits. Receivers key HMAC-SHA256 with the
 * UTF-8 bytes of the whole string (PROTOCOL.md §6); the server keeps it sealed, never hashed,
 * because it signs with it.
 *
 * @example
 * ```ts
 * createWebhookSecret(); // 'whsec_...'
 * ```
 */
export function createWebhookSecret(): string {
  return `whsec_${randomText(32)}`;
}

/**
 * SHA-256 of a secret token. The tokens are 256-bit random values, so a fast hash is as good as
 * a password hash here and lets a lookup use an index.
 */
export function hashSecret(secret: string): Uint8Array {
  return createHash('sha256').update(secret, 'utf8').digest();
}
