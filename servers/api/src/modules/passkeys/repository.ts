import { createHash } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Passkey } from '../../platform/database/tables/passkeys.table.ts';
import { createId } from '../../platform/ids.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** How long a registration or sign-in challenge may be answered: 5 minutes. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

/** A person may keep this many passkeys. */
export const MAX_PASSKEYS_PER_PERSON = 20;

function hashChallenge(challenge: string): Uint8Array {
  return createHash('sha256').update(challenge, 'utf8').digest();
}

/**
 * Keeps a challenge (hashed) for 5 minutes: `userId` for a registration (whose passkey it will
 * be), none for a sign-in. Challenges past their end are deleted on the way.
 */
export async function saveChallenge(
  database: Executor,
  challenge: string,
  kind: 'registration' | 'authentication',
  userId: string | null,
): Promise<void> {
  await database.deleteFrom('passkey_challenges').where('expires_at', '<', sql<Date>`now()`).execute();
  await database
    .insertInto('passkey_challenges')
    .values({
      challenge_hash: hashChallenge(challenge),
      kind,
      user_id: userId,
      expires_at: new Date(Date.now() + CHALLENGE_TTL_MS),
    })
    .execute();
}

/**
 * Uses a challenge once: deletes it and answers whether it was live, of `kind` and (for a
 * registration) `userId`'s. A challenge is gone after its first use, whatever the answer.
 */
export async function useChallenge(
  database: Executor,
  challenge: string,
  kind: 'registration' | 'authentication',
  userId: string | null,
): Promise<boolean> {
  const row = await database
    .deleteFrom('passkey_challenges')
    .where('challenge_hash', '=', hashChallenge(challenge))
    .returning(['kind', 'user_id', 'expires_at'])
    .executeTakeFirst();
  return (
    row !== undefined && row.kind === kind && row.user_id === userId && row.expires_at.getTime() > Date.now()
  );
}

/** A person's passkeys, oldest first. */
export function listPasskeys(database: Executor, userId: string): Promise<Passkey[]> {
  return database
    .selectFrom('passkeys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** How many passkeys the person has (a way in besides a password and linked identities). */
export async function countPasskeys(database: Executor, userId: string): Promise<number> {
  const row = await database
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The passkey of a credential id, whoever's it is (sign-in). */
export function findPasskeyByCredentialId(
  database: Executor,
  credentialId: string,
): Promise<Passkey | undefined> {
  return database
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
}

export interface NewPasskey {
  userId: string;
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  name: string;
}

/** Stores a verified credential; undefined when the credential id is registered already. */
export async function insertPasskey(database: Executor, passkey: NewPasskey): Promise<Passkey | undefined> {
  return database
    .insertInto('passkeys')
    .values({
      id: createId('pk'),
      user_id: passkey.userId,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: JSON.stringify(passkey.transports),
      device_type: passkey.deviceType,
      backed_up: passkey.backedUp,
      name: passkey.name,
    })
    .onConflict((conflict) => conflict.column('credential_id').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Renames one of the person's passkeys; undefined when they have no such passkey. */
export function renamePasskey(
  database: Executor,
  userId: string,
  id: string,
  name: string,
): Promise<Passkey | undefined> {
  return database
    .updateTable('passkeys')
    .set({ name })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes one of the person's passkeys; the deleted row, or undefined when they have no such passkey. */
export function deletePasskey(database: Executor, userId: string, id: string): Promise<Passkey | undefined> {
  return database
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Records a sign-in with the passkey: the new counter and the time. The update happens only if
 * the counter still is `previous` (two sign-ins racing with one assertion: one wins).
 */
export async function recordPasskeyUse(
  database: Executor,
  id: string,
  previous: number,
  counter: number,
): Promise<boolean> {
  const updated = await database
    .updateTable('passkeys')
    .set({ counter, last_used_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('counter', '=', previous)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}
