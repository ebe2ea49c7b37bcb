import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { User } from '../../platform/database/tables/accounts.table.ts';
import { magicLinkLink, passwordResetLink } from './emails.ts';
import { checkPassword, hashPassword } from './passwords.ts';
import {
  changePassword,
  createMagicLinkToken,
  createPasswordResetToken,
  findUserByEmail,
  insertUser,
} from './repository.ts';

// What the operator does from the command line and the first start: make an account without the
// sign-up mail round trip, hand out a one-time sign-in link, reset a password.

/** How long an operator's sign-in link works: long enough to copy from a terminal. */
const OPERATOR_LINK_LIFETIME_MS = 60 * 60_000;

/** Why an operator's account change did not happen: a sentence for the terminal. */
export interface Refusal {
  problem: string;
}

/**
 * Creates a verified account (the operator vouches for the address). With `password` (checked by
 * the password policy), the person signs in with it; without, the account's password is random
 * and unknown, and the person signs in with a one-time link, then sets one with a reset link.
 *
 * A refusal when the address has an account or the password breaks a rule.
 */
export async function createVerifiedUser(
  database: Kysely<Database>,
  options: { email: string; name?: string | undefined; password?: string | undefined },
): Promise<{ user: User } | Refusal> {
  if (options.password !== undefined) {
    const problem = checkPassword(options.password);
    if (problem !== undefined) return { problem };
  }
  const passwordHash = await hashPassword(options.password ?? randomBytes(32).toString('base64url'));
  const user = await insertUser(database, {
    email: options.email,
    name: options.name,
    passwordHash,
    emailVerified: true,
  });
  if (user === undefined) return { problem: `${options.email} has an account already` };
  return { user };
}

/** A one-time sign-in link for the user (`<app>/magic-link?token=…`), valid one hour. */
export async function signInLink(
  database: Kysely<Database>,
  appUrl: string,
  user: Pick<User, 'id' | 'email'>,
): Promise<string> {
  const token = await createMagicLinkToken(database, user, new Date(), OPERATOR_LINK_LIFETIME_MS);
  return magicLinkLink(appUrl, token);
}

/**
 * Resets the password of the account with this address: with `password`, sets it and ends every
 * session of the account; without, answers a one-time link to set one (valid one hour; the
 * sessions end when it is used).
 *
 * A refusal when no account has the address or the password breaks a rule.
 */
export async function resetPassword(
  database: Kysely<Database>,
  appUrl: string,
  options: { email: string; password?: string | undefined },
): Promise<{ user: User; link?: string } | Refusal> {
  const user = await findUserByEmail(database, options.email);
  const unknown = { problem: `No account has the address ${options.email}` };
  if (user === undefined) return unknown;
  if (options.password === undefined) {
    const token = await createPasswordResetToken(database, user);
    return { user, link: passwordResetLink(appUrl, token) };
  }
  const problem = checkPassword(options.password);
  if (problem !== undefined) return { problem };
  const changed = await changePassword(database, {
    userId: user.id,
    passwordHash: await hashPassword(options.password),
  });
  return changed === undefined ? unknown : { user: changed };
}
