import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { User } from '../../platform/database/tables/accounts.table.ts';
import { SESSION_COOKIE } from '../../platform/http/authentication.ts';
import { forbidden } from '../../platform/http/errors.ts';
import { createSession, deleteSessionBySecret } from './repository.ts';
import { toUserView, type UserView } from './views.ts';

/** The session cookie's attributes (also to clear it: the same path and flags). */
export function sessionCookieOptions(publicUrl: string, expires?: Date): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: publicUrl.startsWith('https:'),
    ...(expires === undefined ? {} : { expires }),
  };
}

/** The ways into a session, as the audit trail and the sign-in gate name them. */
export type SignInMethod = 'password' | 'mfa' | 'magic_link' | 'invitation' | 'oauth' | 'passkey' | 'sso';

/**
 * Decides, once a person has proved who they are, whether this way in is open to them: it throws
 * an `ApiError` to refuse (an organization that requires SSO for its verified domains refuses the
 * other methods to its people) and may act on the sign-in (joining an organization by a verified
 * domain). Modules after accounts implement it; the composition sets `fastify.signInGate` (open by
 * default), and `signIn` asks it before every session starts. `checkOnly`: only whether the way is
 * open (asked before a second factor is asked for), nothing done.
 */
export type SignInGate = (
  user: User,
  method: SignInMethod,
  options?: { checkOnly?: boolean },
) => Promise<void>;

/**
 * A person about to get an account, as the sign-in gate sees them (no id, so no membership; the
 * address verified): asked before an account is made, so that a refused way in makes nothing.
 *
 * @example
 * ```ts
 * await request.server.signInGate(prospectiveUser('ada@corp.example'), 'oauth', { checkOnly: true });
 * ```
 */
export function prospectiveUser(email: string, now = new Date()): User {
  return {
    id: '',
    email,
    name: null,
    password_hash: '',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Asked by `signIn` before a session starts (see `SignInGate`). */
    signInGate: SignInGate;
  }
}

/**
 * Starts a session for the user (the cookie and `{ user, csrfToken }`): a new one at every
 * sign-in; the one the browser brought, if any, ends. `method` names the way in for the audit
 * trail and the sign-in gate, which is asked first (it may refuse).
 */
export async function signIn(
  database: Kysely<Database>,
  publicUrl: string,
  request: FastifyRequest,
  reply: FastifyReply,
  user: User,
  method: SignInMethod,
): Promise<{ user: UserView; csrfToken: string }> {
  await request.server.signInGate(user, method);
  const previous = request.cookies[SESSION_COOKIE];
  if (previous !== undefined && previous !== '' && previous.length <= 128)
    await deleteSessionBySecret(database, previous);
  const session = await createSession(database, {
    userId: user.id,
    ip: request.ip,
    userAgent: request.headers['user-agent'],
  });
  await recordPersonAudit(database, user.id, auditOrigin(request), {
    action: 'user.signed_in',
    details: { method },
  });
  reply.setCookie(SESSION_COOKIE, session.secret, sessionCookieOptions(publicUrl, session.expiresAt));
  return { user: toUserView(user), csrfToken: session.csrfToken };
}

/**
 * An onRequest hook for public sign-in routes: a page of another site must not sign its visitor
 * in (login CSRF: into an account of the attacker's, whose activity the attacker then reads) or
 * sign them up. Browsers send Origin with every POST, and only the server's and the dashboard's
 * own origins may post here. Requests without Origin (curl, scripts) do not come from a page.
 */
export function refuseForeignOrigins(configuration: { publicUrl: string; appUrl: string }) {
  const allowedOrigins = new Set([
    new URL(configuration.publicUrl).origin,
    new URL(configuration.appUrl).origin,
  ]);
  return async (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin))
      throw forbidden(
        `Sign-in requests from ${JSON.stringify(origin.slice(0, 200))} are not accepted: use the dashboard`,
      );
  };
}
