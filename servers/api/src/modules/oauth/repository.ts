import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { OAuthIdentity, OAuthProviderId } from '../../platform/database/tables/oauth.table.ts';
import { createId } from '../../platform/ids.ts';
import { hashSecret } from '../../platform/secrets.ts';

// The flows under way and the linked identities. A flow's row holds only hashes: of the `state`
// sent to the provider and of the browser's flow cookie (which carries the PKCE verifier and the
// nonce), so the table alone cannot finish anyone's sign-in.

type Executor = Kysely<Database> | Transaction<Database>;

/** How long a sign-in started at a provider may take to come back. */
const FLOW_LIFETIME_MS = 10 * 60_000;

/** Records a flow started by the browser holding `browserSecret` (the flow cookie's value). */
export async function createFlow(
  database: Executor,
  flow: { state: string; browserSecret: string; provider: OAuthProviderId; returnTo: string | undefined },
): Promise<void> {
  // Flows never finished are deleted as new ones start (there are few: one per sign-in attempt).
  await database
    .deleteFrom('oauth_flows')
    .where('expires_at', '<', sql<Date>`now() - interval '1 hour'`)
    .execute();
  await database
    .insertInto('oauth_flows')
    .values({
      state_hash: hashSecret(flow.state),
      browser_hash: hashSecret(flow.browserSecret),
      provider: flow.provider,
      return_to: flow.returnTo ?? null,
      expires_at: new Date(Date.now() + FLOW_LIFETIME_MS),
    })
    .execute();
}

/**
 * Uses the flow of `state`, once, if it is live and was started by the browser holding
 * `browserSecret` for `provider`: answers its `returnTo` (`null` for none); undefined otherwise (unknown,
 * used, expired, another browser's or another provider's: a callback URL made in an attacker's
 * browser does not work in the victim's). One statement: of two uses at once, one wins.
 */
export async function useFlow(
  database: Executor,
  flow: { state: string; browserSecret: string; provider: OAuthProviderId },
): Promise<{ returnTo: string | null } | undefined> {
  const row = await database
    .updateTable('oauth_flows')
    .set({ used_at: sql`now()` })
    .where('state_hash', '=', hashSecret(flow.state))
    .where('browser_hash', '=', hashSecret(flow.browserSecret))
    .where('provider', '=', flow.provider)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('return_to')
    .executeTakeFirst();
  return row === undefined ? undefined : { returnTo: row.return_to };
}

/** The identity `subject` at `provider`, marked used now; undefined when none is linked. */
export async function useIdentity(
  database: Executor,
  identity: { provider: OAuthProviderId; subject: string; email: string | undefined },
): Promise<OAuthIdentity | undefined> {
  return database
    .updateTable('oauth_identities')
    .set({
      last_used_at: sql`now()`,
      ...(identity.email === undefined ? {} : { email: identity.email }),
    })
    .where('provider', '=', identity.provider)
    .where('subject', '=', identity.subject)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Links an identity to the user (used now). Undefined when that identity is linked already (to
 * anyone: two callbacks at once link it once).
 */
export async function linkIdentity(
  database: Executor,
  identity: { userId: string; provider: OAuthProviderId; subject: string; email: string | undefined },
): Promise<OAuthIdentity | undefined> {
  return database
    .insertInto('oauth_identities')
    .values({
      id: createId('idn'),
      user_id: identity.userId,
      provider: identity.provider,
      subject: identity.subject,
      email: identity.email ?? null,
      last_used_at: new Date(),
    })
    .onConflict((conflict) => conflict.columns(['provider', 'subject']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The user's linked identities, oldest first. */
export async function listIdentities(database: Executor, userId: string): Promise<OAuthIdentity[]> {
  return database
    .selectFrom('oauth_identities')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Remembers that an identity made this account, with the unknown password it was given. */
export async function recordCreatedAccount(
  database: Executor,
  account: { userId: string; passwordHash: string },
): Promise<void> {
  await database
    .insertInto('oauth_created_accounts')
    .values({ user_id: account.userId, initial_password_hash: account.passwordHash })
    .execute();
}

/**
 * Whether the user has a password of their own: any account not made by an identity, or one
 * whose password changed since (a reset or a change sets a new hash).
 */
async function hasOwnPassword(database: Executor, userId: string): Promise<boolean> {
  const row = await database
    .selectFrom('users')
    .leftJoin('oauth_created_accounts', 'oauth_created_accounts.user_id', 'users.id')
    .select(['users.password_hash', 'oauth_created_accounts.initial_password_hash'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  return row !== undefined && row.password_hash !== row.initial_password_hash;
}

/** Why an identity was not unlinked. */
export type UnlinkRefusal = 'not_found' | 'last_way_in';

/**
 * Unlinks one of the user's identities, unless it is their last way in: an account without a
 * password of its own keeps its last identity unless `otherWaysIn` (passkeys) has one. The user's
 * row is locked meanwhile, so two unlinks at once leave one identity, never none.
 */
export async function unlinkIdentity(
  database: Kysely<Database>,
  options: {
    userId: string;
    identityId: string;
    otherWaysIn: (database: Transaction<Database>, userId: string) => Promise<number>;
  },
): Promise<OAuthIdentity | UnlinkRefusal> {
  return database.transaction().execute(async (transaction) => {
    await transaction
      .selectFrom('users')
      .select('id')
      .where('id', '=', options.userId)
      .forUpdate()
      .executeTakeFirst();
    const identities = await listIdentities(transaction, options.userId);
    const identity = identities.find((candidate) => candidate.id === options.identityId);
    if (identity === undefined) return 'not_found';
    if (
      identities.length === 1 &&
      !(await hasOwnPassword(transaction, options.userId)) &&
      (await options.otherWaysIn(transaction, options.userId)) === 0
    )
      return 'last_way_in';
    await transaction
      .deleteFrom('oauth_identities')
      .where('id', '=', identity.id)
      .where('user_id', '=', options.userId)
      .execute();
    return identity;
  });
}
