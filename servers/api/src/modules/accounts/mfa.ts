import { type Kysely, sql } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import {
  createDataKey,
  type MasterKey,
  openBlob,
  sealBlob,
  unwrapDataKey,
} from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import { createLinkToken, hashSecret } from '../../platform/secrets.ts';

// Two-factor sign-in with TOTP (RFC 6238: SHA-1, 6 digits, 30 s steps, what every authenticator
// app reads), recovery codes and the sign-in challenge between password and code. The TOTP
// secret is kept sealed (AES-256-GCM) with a data key of the person's own, wrapped by the master
// key: the envelope encryption of projects' data (README, Encryption at rest).

/** The issuer shown by authenticator apps. */
const ISSUER = 'Service';
/** Codes of the step before and after the server's clock are accepted too (clock drift). */
const WINDOW = 1;
const STEP_SECONDS = 30;
/** How many recovery codes a set has. */
const RECOVERY_CODE_COUNT = 10;
/** How long the `mfaToken` of a sign-in works. */
const CHALLENGE_LIFETIME_MS = 5 * 60_000;

function associatedData(userId: string): string {
  return `users/${userId}/totp-secret`;
}

function totp(secret: Secret, label: string): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: STEP_SECONDS, secret });
}

/**
 * Starts (or starts again) enrolling: a new TOTP secret, stored sealed, MFA still off until a
 * code confirms it. Answers the otpauth URI (for a QR code) and the base32 secret (to type in);
 * undefined when MFA is already on (nothing changes).
 */
export async function enrollMfa(
  database: Kysely<Database>,
  masterKey: MasterKey,
  user: { id: string; email: string },
): Promise<{ otpauthUri: string; secret: string } | undefined> {
  const secret = new Secret({ size: 20 });
  const { dataKey, wrappedKey } = createDataKey(masterKey);
  const sealed = sealBlob(dataKey, Buffer.from(secret.base32, 'utf8'), associatedData(user.id));
  const written = await database
    .insertInto('user_mfa')
    .values({
      user_id: user.id,
      wrapped_key: wrappedKey,
      sealed_secret: sealed,
      enabled_at: null,
      last_step: null,
    })
    .onConflict((conflict) =>
      conflict
        .column('user_id')
        .doUpdateSet({ wrapped_key: wrappedKey, sealed_secret: sealed, last_step: null })
        .where('user_mfa.enabled_at', 'is', null),
    )
    .returning('user_id')
    .executeTakeFirst();
  if (written === undefined) return undefined;
  return { otpauthUri: totp(secret, user.email).toString(), secret: secret.base32 };
}

/** Whether the user has MFA on (confirmed). */
export async function mfaEnabled(database: Kysely<Database>, userId: string): Promise<boolean> {
  const row = await database
    .selectFrom('user_mfa')
    .select('enabled_at')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.enabled_at != null;
}

/**
 * Checks a TOTP code against the user's secret (enabled, or pending when `pending`), within ±1
 * step, and takes its step: a code (or an older one) is never accepted twice. Whether it was
 * accepted.
 */
export async function useTotpCode(
  database: Kysely<Database>,
  masterKey: MasterKey,
  userId: string,
  code: string,
  options: { pending: boolean; now?: number },
): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const row = await database
    .selectFrom('user_mfa')
    .selectAll()
    .where('user_id', '=', userId)
    .where('enabled_at', options.pending ? 'is' : 'is not', null)
    .executeTakeFirst();
  if (row === undefined) return false;
  const base32 = Buffer.from(
    openBlob(unwrapDataKey(masterKey, row.wrapped_key), row.sealed_secret, associatedData(userId)),
  ).toString('utf8');
  const now = options.now ?? Date.now();
  const delta = totp(Secret.fromBase32(base32), userId).validate({
    token: code,
    timestamp: now,
    window: WINDOW,
  });
  if (delta === null) return false;
  const step = Math.floor(now / 1000 / STEP_SECONDS) + delta;
  const taken = await database
    .updateTable('user_mfa')
    .set({ last_step: step })
    .where('user_id', '=', userId)
    .where((where) => where.or([where('last_step', 'is', null), where('last_step', '<', step)]))
    .executeTakeFirst();
  return taken.numUpdatedRows > 0n;
}

/** A new recovery code: 50 random bits as `xxxxx-xxxxx` (Crockford base32). */
function createRecoveryCode(): string {
  const text = createLinkToken().slice(0, 10);
  return `${text.slice(0, 5)}-${text.slice(5)}`;
}

function normalizeRecoveryCode(code: string): string {
  return code.trim().toLowerCase().replaceAll('-', '');
}

/** Replaces the user's recovery codes with a new set (stored as SHA-256 only); answers them. */
export async function replaceRecoveryCodes(database: Kysely<Database>, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, createRecoveryCode);
  await database.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
    await transaction
      .insertInto('mfa_recovery_codes')
      .values(
        codes.map((code) => ({
          code_hash: hashSecret(normalizeRecoveryCode(code)),
          user_id: userId,
          used_at: null,
        })),
      )
      .execute();
  });
  return codes;
}

/** Turns MFA on (a confirmed enrollment); whether there was a pending one. */
export async function enableMfa(database: Kysely<Database>, userId: string): Promise<boolean> {
  const updated = await database
    .updateTable('user_mfa')
    .set({ enabled_at: sql`now()` })
    .where('user_id', '=', userId)
    .where('enabled_at', 'is', null)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** Turns MFA off: the secret and the recovery codes go. */
export async function disableMfa(database: Kysely<Database>, userId: string): Promise<void> {
  await database.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
    await transaction.deleteFrom('user_mfa').where('user_id', '=', userId).execute();
  });
}

/** Uses one of the user's recovery codes, once; whether it was one. */
async function useRecoveryCode(database: Kysely<Database>, userId: string, code: string): Promise<boolean> {
  const normalized = normalizeRecoveryCode(code);
  if (!/^[0-9a-z]{10}$/.test(normalized)) return false;
  const used = await database
    .updateTable('mfa_recovery_codes')
    .set({ used_at: sql`now()` })
    .where('code_hash', '=', hashSecret(normalized))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return used.numUpdatedRows > 0n;
}

/** A TOTP code or, failing that, a recovery code of the user (MFA on); whether one was accepted. */
export async function useSecondFactor(
  database: Kysely<Database>,
  masterKey: MasterKey,
  userId: string,
  code: string,
): Promise<boolean> {
  if (await useTotpCode(database, masterKey, userId, code.trim(), { pending: false })) return true;
  return useRecoveryCode(database, userId, code);
}

/** A new sign-in challenge (the `mfaToken` after a right password), stored hashed, 5 minutes. */
export async function createMfaChallenge(database: Kysely<Database>, userId: string): Promise<string> {
  const token = createLinkToken();
  await database
    .insertInto('mfa_challenges')
    .values({
      token_hash: hashSecret(token),
      user_id: userId,
      expires_at: new Date(Date.now() + CHALLENGE_LIFETIME_MS),
      used_at: null,
    })
    .execute();
  return token;
}

/** The user of a live (unused, unexpired) challenge; undefined otherwise. */
export async function findMfaChallenge(
  database: Kysely<Database>,
  token: string,
): Promise<string | undefined> {
  const row = await database
    .selectFrom('mfa_challenges')
    .select('user_id')
    .where('token_hash', '=', hashSecret(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return row?.user_id;
}

/** Uses a challenge, once; whether it was live. */
export async function useMfaChallenge(database: Kysely<Database>, token: string): Promise<boolean> {
  const used = await database
    .updateTable('mfa_challenges')
    .set({ used_at: sql`now()` })
    .where('token_hash', '=', hashSecret(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return used.numUpdatedRows > 0n;
}
