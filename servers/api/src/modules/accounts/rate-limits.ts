import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../platform/http/errors.ts';

/** One limit: at most `max` requests per key in `windowMs`. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/**
 * The limits of the sign-in routes, per client address and per account (the e-mail address in
 * the body, whatever its case). Per account, so that guessing one person's password from many
 * addresses is slow too; per address, so that one client trying many accounts is. The counters
 * live in this process (`@fastify/rate-limit`'s local store): behind several server processes,
 * each allows the rate.
 */
export const SIGN_IN_LIMITS = {
  /** Password guesses: 10 per account per 15 minutes, 30 per client address. */
  login: { perAddress: { max: 30, windowMs: 15 * 60_000 }, perAccount: { max: 10, windowMs: 15 * 60_000 } },
  /** Sign-ups (each sends an e-mail): 3 per address per hour, 10 per client address. */
  signup: { perAddress: { max: 10, windowMs: 3_600_000 }, perAccount: { max: 3, windowMs: 3_600_000 } },
  /** Verification links tried: 30 per client address per 15 minutes. */
  verifyEmail: { perAddress: { max: 30, windowMs: 15 * 60_000 } },
  /** Password reset links asked for (each sends an e-mail): as sign-ups. */
  forgotPassword: {
    perAddress: { max: 10, windowMs: 3_600_000 },
    perAccount: { max: 3, windowMs: 3_600_000 },
  },
  /** Password reset tokens tried: 30 per client address per 15 minutes. */
  resetPassword: { perAddress: { max: 30, windowMs: 15 * 60_000 } },
  /** Sign-in links asked for (each sends an e-mail): as sign-ups. */
  magicLink: {
    perAddress: { max: 10, windowMs: 3_600_000 },
    perAccount: { max: 3, windowMs: 3_600_000 },
  },
  /** Sign-in link tokens tried: 30 per client address per 15 minutes. */
  magicLinkUse: { perAddress: { max: 30, windowMs: 15 * 60_000 } },
  /** Invitation links tried (`POST /auth/invitations/{token}/accept`): as sign-in links. */
  invitationUse: { perAddress: { max: 30, windowMs: 15 * 60_000 } },
  /** Invitations sent (each sends an e-mail): 50 per organization per hour. */
  invitations: { perOrganization: { max: 50, windowMs: 3_600_000 } },
  /**
   * Signed-in password and code checks (`POST /v1/me/password`, `/v1/me/mfa/confirm` and
   * `/disable`), per person: a stolen session does not make guessing fast.
   */
  signedInChecks: { perAccount: { max: 10, windowMs: 15 * 60_000 } },
  /** Two-factor codes tried at sign-in: 10 per account per 15 minutes, 30 per client address. */
  mfa: { perAddress: { max: 30, windowMs: 15 * 60_000 }, perAccount: { max: 10, windowMs: 15 * 60_000 } },
} as const;

/** Checks a request against a limit, counting it; a request over the limit is a 429. */
export type Limiter = (request: FastifyRequest, reply: FastifyReply, key: string) => Promise<void>;

/**
 * A limiter on `fastify` (which must have `@fastify/rate-limit` registered): over the limit it
 * answers 429 `invalid` with `Retry-After` (seconds) and `what` in the message.
 *
 * @example
 * ```ts
 * const perAccount = createLimiter(fastify, 'login:account', { max: 10, windowMs: 900_000 }, 'sign-in attempts for this account');
 * await perAccount(request, reply, email.toLowerCase());
 * ```
 */
export function createLimiter(
  fastify: FastifyInstance,
  name: string,
  limit: RateLimit,
  what: string,
): Limiter {
  const keys = new WeakMap<FastifyRequest, string>();
  const check = fastify.createRateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (request) => `${name}:${keys.get(request) ?? ''}`,
  });
  return async (request, reply, key) => {
    keys.set(request, key);
    const result = await check(request);
    if (result.isAllowed || !result.isExceeded) return;
    const seconds = Math.max(1, result.ttlInSeconds);
    reply.header('retry-after', String(seconds));
    throw invalid(`Too many ${what}: retry after ${seconds} s`, 429);
  };
}
