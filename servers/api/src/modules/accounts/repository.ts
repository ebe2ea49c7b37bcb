import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { User } from '../../platform/database/tables/accounts.table.ts';
import type { SignedInPerson } from '../../platform/http/authentication.ts';
import { createId } from '../../platform/ids.ts';
import { createCsrfToken, createLinkToken, createSessionSecret, hashSecret } from '../../platform/secrets.ts';

// Users, e-mail verification links and dashboard sessions. Secrets (a session cookie's value, a
// link's token) are stored as SHA-256 only; lookups go through the hash's unique index.

type Executor = Kysely<Database> | Transaction<Database>;

/** How long an e-mail verification link works. */
const VERIFICATION_LINK_LIFETIME_MS = 24 * 3_600_000;
/** A session not used for this long has ended (idle expiry). */
const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
/** A session ends this long after sign-in, however active (absolute expiry). */
const SESSION_LIFETIME_MS = 30 * 24 * 3_600_000;
/** `last_seen_at` is written at most this often per session (reads stay reads in between). */
const LAST_SEEN_GRANULARITY_MS = 60_000;

/** The user with this address, whatever its case. */
export async function findUserByEmail(database: Executor, email: string): Promise<User | undefined> {
  return database
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function findUserById(database: Executor, id: string): Promise<User | undefined> {
  return database.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Creates a user, or answers undefined when the address (in any case) is taken: one statement,
 * so two sign-ups of one address at once make one user.
 */
export async function insertUser(
  database: Executor,
  values: { email: string; name: string | undefined; passwordHash: string; emailVerified?: boolean },
): Promise<User | undefined> {
  return database
    .insertInto('users')
    .values({
      id: createId('usr'),
      email: values.email,
      name: values.name ?? null,
      password_hash: values.passwordHash,
      // An address proven otherwise (an invitation's link was followed from it) is verified.
      email_verified_at: values.emailVerified === true ? new Date() : null,
    })
    .onConflict((conflict) => conflict.expression(sql`lower(email)`).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Replaces a user's password hash (a re-hash with today's parameters). */
export async function updatePasswordHash(database: Executor, userId: string, passwordHash: string) {
  await database
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: new Date() })
    .where('id', '=', userId)
    .execute();
}

/** Changes the user's profile; undefined when the user is gone. */
export async function updateUser(
  database: Executor,
  userId: string,
  changes: { name?: string | null },
): Promise<User | undefined> {
  if (changes.name === undefined) return findUserById(database, userId);
  return database
    .updateTable('users')
    .set({ name: changes.name, updated_at: new Date() })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/** A new e-mail verification link's token for the user's current address (stored hashed). */
export function createVerificationToken(
  database: Executor,
  user: Pick<User, 'id' | 'email'>,
  now = new Date(),
): Promise<string> {
  return insertLinkToken(database, 'email_verification_tokens', user, VERIFICATION_LINK_LIFETIME_MS, now);
}

/**
 * Uses a verification link's token: once, before it expires, and only while the user's address
 * is still the one it was sent to. Marks the address verified and answers the user; undefined
 * when the token is unknown, used, expired or for an old address. Atomic: of two uses at once,
 * one succeeds.
 */
export function useVerificationToken(database: Kysely<Database>, token: string): Promise<User | undefined> {
  return database.transaction().execute(async (transaction) => {
    const used = await takeLinkToken(transaction, 'email_verification_tokens', token);
    return used === undefined ? undefined : verifiedUser(transaction, used);
  });
}

/** A new session: its secret (for the cookie, shown once) and CSRF token. */
export interface NewSession {
  id: string;
  secret: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * Signs a user in: a new session with a new random secret (never one the browser brought, so a
 * session id planted before sign-in is worthless), ending after {@link SESSION_LIFETIME_MS}.
 */
export async function createSession(
  database: Executor,
  options: { userId: string; ip: string | undefined; userAgent: string | undefined; now?: Date },
): Promise<NewSession> {
  const now = options.now ?? new Date();
  const session: NewSession = {
    id: createId('sgn'),
    secret: createSessionSecret(),
    csrfToken: createCsrfToken(),
    expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
  };
  await database
    .insertInto('user_sessions')
    .values({
      id: session.id,
      user_id: options.userId,
      token_hash: hashSecret(session.secret),
      csrf_token: session.csrfToken,
      created_at: now,
      last_seen_at: now,
      expires_at: session.expiresAt,
      ip: options.ip?.slice(0, 64) ?? null,
      user_agent: options.userAgent?.slice(0, 512) ?? null,
    })
    .execute();
  return session;
}

/**
 * The live session of a cookie's secret: not past its absolute end and used within the idle
 * window; marks it used (at most once a minute). Undefined otherwise.
 */
export async function findLiveSession(
  database: Executor,
  secret: string,
): Promise<SignedInPerson | undefined> {
  const row = await database
    .selectFrom('user_sessions')
    .select(['id', 'user_id', 'csrf_token', 'last_seen_at'])
    .where('token_hash', '=', hashSecret(secret))
    .where('expires_at', '>', sql<Date>`now()`)
    .where('last_seen_at', '>', sql<Date>`now() - ${`${SESSION_IDLE_MS / 1000} seconds`}::interval`)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  if (Date.now() - row.last_seen_at.getTime() > LAST_SEEN_GRANULARITY_MS) {
    await database
      .updateTable('user_sessions')
      .set({ last_seen_at: sql`now()` })
      .where('id', '=', row.id)
      .execute();
  }
  return { sessionId: row.id, userId: row.user_id, csrfToken: row.csrf_token };
}

/** Ends the session of a cookie's secret (sign-out); whether there was one. */
export async function deleteSessionBySecret(database: Executor, secret: string): Promise<boolean> {
  const deleted = await database
    .deleteFrom('user_sessions')
    .where('token_hash', '=', hashSecret(secret))
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** How long a password reset link works. */
const PASSWORD_RESET_LINK_LIFETIME_MS = 3_600_000;

/** A new password reset link's token for the user's current address (stored hashed). */
export async function createPasswordResetToken(
  database: Executor,
  user: Pick<User, 'id' | 'email'>,
  now = new Date(),
): Promise<string> {
  return insertLinkToken(database, 'password_reset_tokens', user, PASSWORD_RESET_LINK_LIFETIME_MS, now);
}

/**
 * Uses a password reset link's token: once, within its hour, and only while the user's address
 * is still the one it was sent to. Sets the new password hash, marks the address verified (the
 * link proved it), ends every session of the user and every other reset link of theirs. Answers the user; undefined when the token
 * is unknown, used, expired or for an old address. Atomic: of two uses at once, one succeeds.
 */
export async function usePasswordResetToken(
  database: Kysely<Database>,
  token: string,
  passwordHash: string,
): Promise<User | undefined> {
  return database.transaction().execute(async (transaction) => {
    const used = await takeLinkToken(transaction, 'password_reset_tokens', token);
    if (used === undefined) return undefined;
    const user = await verifiedUser(transaction, used, { password_hash: passwordHash });
    if (user === undefined) return undefined;
    await transaction.deleteFrom('user_sessions').where('user_id', '=', user.id).execute();
    // The user's other reset links, asked for before, stop working too.
    await transaction
      .updateTable('password_reset_tokens')
      .set({ used_at: sql`now()` })
      .where('user_id', '=', user.id)
      .where('used_at', 'is', null)
      .execute();
    return user;
  });
}

/**
 * Changes a signed-in user's password and ends their other sessions (not `keepSessionId`, the
 * one that asked). Answers the user; undefined when the user is gone.
 */
export async function changePassword(
  database: Kysely<Database>,
  options: { userId: string; passwordHash: string; keepSessionId?: string | undefined },
): Promise<User | undefined> {
  return database.transaction().execute(async (transaction) => {
    const user = await transaction
      .updateTable('users')
      .set({ password_hash: options.passwordHash, updated_at: new Date() })
      .where('id', '=', options.userId)
      .returningAll()
      .executeTakeFirst();
    if (user === undefined) return undefined;
    let ended = transaction.deleteFrom('user_sessions').where('user_id', '=', user.id);
    if (options.keepSessionId !== undefined) ended = ended.where('id', '!=', options.keepSessionId);
    await ended.execute();
    return user;
  });
}

/** A live session of a user, as `GET /v1/me/sessions` lists it (never its secret). */
export interface SessionRow {
  id: string;
  created_at: Date;
  last_seen_at: Date;
  ip: string | null;
  user_agent: string | null;
}

/** The user's live sessions (not past their absolute end nor idle too long), latest used first. */
export async function listLiveSessions(database: Executor, userId: string): Promise<SessionRow[]> {
  return database
    .selectFrom('user_sessions')
    .select(['id', 'created_at', 'last_seen_at', 'ip', 'user_agent'])
    .where('user_id', '=', userId)
    .where('expires_at', '>', sql<Date>`now()`)
    .where('last_seen_at', '>', sql<Date>`now() - ${`${SESSION_IDLE_MS / 1000} seconds`}::interval`)
    .orderBy('last_seen_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Ends one session of the user; whether there was one (another user's session is not found). */
export async function deleteUserSession(database: Executor, userId: string, id: string): Promise<boolean> {
  const deleted = await database
    .deleteFrom('user_sessions')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** Ends every session of the user but `keepSessionId`; how many ended. */
export async function deleteOtherSessions(
  database: Executor,
  userId: string,
  keepSessionId: string,
): Promise<number> {
  const deleted = await database
    .deleteFrom('user_sessions')
    .where('user_id', '=', userId)
    .where('id', '!=', keepSessionId)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

/** How long a magic (sign-in) link works. */
const MAGIC_LINK_LIFETIME_MS = 15 * 60_000;

/** A new magic link's token for the user's current address (stored hashed). */
export function createMagicLinkToken(
  database: Executor,
  user: Pick<User, 'id' | 'email'>,
  now = new Date(),
  lifetimeMs = MAGIC_LINK_LIFETIME_MS,
): Promise<string> {
  return insertLinkToken(database, 'magic_link_tokens', user, lifetimeMs, now);
}

/**
 * Uses a magic link's token: once, within its 15 minutes, and only while the user's address is
 * still the one it was sent to; marks the address verified (the link proved it). Answers the
 * user; undefined when the token is unknown, used, expired or for an old address. Atomic.
 */
export function useMagicLinkToken(database: Kysely<Database>, token: string): Promise<User | undefined> {
  return database.transaction().execute(async (transaction) => {
    const used = await takeLinkToken(transaction, 'magic_link_tokens', token);
    return used === undefined ? undefined : verifiedUser(transaction, used);
  });
}

/** The tables of one-time link tokens: the same columns, one table per purpose. */
type LinkTokenTable = 'email_verification_tokens' | 'password_reset_tokens' | 'magic_link_tokens';

/** A new link token of `table` for the user's current address, stored hashed; answers the token. */
async function insertLinkToken(
  database: Executor,
  table: LinkTokenTable,
  user: Pick<User, 'id' | 'email'>,
  lifetimeMs: number,
  now: Date,
): Promise<string> {
  const token = createLinkToken();
  await database
    .insertInto(table)
    .values({
      token_hash: hashSecret(token),
      user_id: user.id,
      email: user.email,
      expires_at: new Date(now.getTime() + lifetimeMs),
      used_at: null,
    })
    .execute();
  return token;
}

/**
 * Takes a link token of `table`: once (of two takes at once, one gets it) and before it expires.
 * Answers whom it was for and the address it was sent to; undefined when unknown, used or expired.
 */
function takeLinkToken(transaction: Transaction<Database>, table: LinkTokenTable, token: string) {
  return transaction
    .updateTable(table)
    .set({ used_at: sql`now()` })
    .where('token_hash', '=', hashSecret(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['user_id', 'email'])
    .executeTakeFirst();
}

/**
 * The user a taken link was for, their address marked verified (the link proved it) with `also`
 * set; undefined when the user's address is no longer the one the link was sent to.
 */
function verifiedUser(
  transaction: Transaction<Database>,
  used: { user_id: string; email: string },
  also: { password_hash?: string } = {},
): Promise<User | undefined> {
  return transaction
    .updateTable('users')
    .set({ ...also, email_verified_at: sql`coalesce(email_verified_at, now())`, updated_at: new Date() })
    .where('id', '=', used.user_id)
    .where(sql<string>`lower(email)`, '=', used.email.toLowerCase())
    .returningAll()
    .executeTakeFirst();
}

/** When a live session signed in (to judge a "recent sign-in"), or undefined when it is gone. */
export async function sessionStartedAt(database: Executor, sessionId: string): Promise<Date | undefined> {
  const row = await database
    .selectFrom('user_sessions')
    .select('created_at')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row?.created_at;
}
