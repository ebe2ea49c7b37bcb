import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import { forPeopleOnly, personOf } from '../../platform/http/authentication.ts';
import { forbidden, invalid, unauthorized } from '../../platform/http/errors.ts';
import {
  disableMfa,
  enableMfa,
  enrollMfa,
  mfaEnabled,
  replaceRecoveryCodes,
  useSecondFactor,
  useTotpCode,
} from './mfa.ts';
import { verifyPassword } from './passwords.ts';
import { createLimiter, SIGN_IN_LIMITS } from './rate-limits.ts';
import { findUserById } from './repository.ts';

const codeSchema = z.string().min(1).max(32);
const passwordSchema = z.string().max(1024);
/** A signed-in person proving it is them again: a code (TOTP or recovery) or the password. */
const reauthenticationSchema = z.union([
  z.strictObject({ code: codeSchema }),
  z.strictObject({ password: passwordSchema }),
]);
const recoveryCodesSchema = z.object({
  recoveryCodes: z
    .array(z.string())
    .describe('10 single-use codes, each signs in once instead of a TOTP code'),
});

/**
 * `/v1/me/mfa`: two-factor sign-in with TOTP (cookie only, with `X-Service-CSRF`): enroll,
 * confirm with a first code (MFA on, recovery codes), disable, new recovery codes.
 */
export default async function mfaRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const masterKey = fastify.masterKey;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  await fastify.register(rateLimit, { global: false });
  const codeChecks = createLimiter(
    fastify,
    'me-mfa:account',
    SIGN_IN_LIMITS.signedInChecks.perAccount,
    'code and password checks for this account',
  );

  /** 403 unless `body` has a right code (TOTP, taken; or recovery, used) or the password. */
  async function checkReauthentication(userId: string, body: z.infer<typeof reauthenticationSchema>) {
    if ('code' in body) {
      if (!(await useSecondFactor(database, masterKey, userId, body.code)))
        throw forbidden('The code is wrong (or used already)');
      return;
    }
    const user = await findUserById(database, userId);
    if (user === undefined || !(await verifyPassword(user.password_hash, body.password)))
      throw forbidden('The password is wrong');
  }

  routes.post(
    '/enroll',
    {
      schema: {
        summary:
          'Start two-factor sign-in, with the password: a new TOTP secret (MFA stays off until confirmed)',
        description:
          '`otpauthUri` is for a QR code, `secret` (base32) to type into an authenticator app. The password is asked again, so that a session someone else got hold of cannot put its own second factor on the account. Enrolling again before confirming replaces the secret; 403 for a wrong password; 400 when MFA is on already.',
        body: z.strictObject({ password: passwordSchema }),
        response: {
          200: z.object({ otpauthUri: z.string(), secret: z.string() }),
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      await codeChecks(request, reply, person.userId);
      const user = await findUserById(database, person.userId);
      if (user === undefined)
        throw unauthorized('The session has ended (signed out or expired): sign in again');
      if (!(await verifyPassword(user.password_hash, request.body.password)))
        throw forbidden('The password is wrong');
      const enrolled = await enrollMfa(database, masterKey, user);
      if (enrolled === undefined) throw invalid('Two-factor sign-in is on already: disable it first');
      return enrolled;
    },
  );

  routes.post(
    '/confirm',
    {
      schema: {
        summary: 'Turn two-factor sign-in on with a first code of the enrolled secret: the recovery codes',
        description: '400 without an enrollment; 403 for a wrong code. The recovery codes are shown once.',
        body: z.strictObject({ code: codeSchema }),
        response: {
          200: recoveryCodesSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      await codeChecks(request, reply, person.userId);
      if (await mfaEnabled(database, person.userId)) throw invalid('Two-factor sign-in is on already');
      if (
        !(await useTotpCode(database, masterKey, person.userId, request.body.code.trim(), { pending: true }))
      )
        throw forbidden(
          'The code is wrong (or used already, or there is no enrollment: POST /v1/me/mfa/enroll)',
        );
      if (!(await enableMfa(database, person.userId))) throw invalid('Two-factor sign-in is on already');
      const recoveryCodes = await replaceRecoveryCodes(database, person.userId);
      await recordPersonAudit(database, person.userId, auditOrigin(request), { action: 'user.mfa_enabled' });
      return { recoveryCodes };
    },
  );

  routes.post(
    '/disable',
    {
      schema: {
        summary: 'Turn two-factor sign-in off, with a code (TOTP or recovery) or the password',
        description: '403 when the code or the password is wrong; 400 when MFA is off.',
        body: reauthenticationSchema,
        response: {
          204: z.null(),
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      await codeChecks(request, reply, person.userId);
      if (!(await mfaEnabled(database, person.userId))) throw invalid('Two-factor sign-in is off');
      await checkReauthentication(person.userId, request.body);
      await disableMfa(database, person.userId);
      await recordPersonAudit(database, person.userId, auditOrigin(request), { action: 'user.mfa_disabled' });
      return reply.code(204).send(null);
    },
  );

  routes.post(
    '/recovery-codes',
    {
      schema: {
        summary: 'A new set of recovery codes (the old ones stop working), with a code or the password',
        description:
          'A code (TOTP or recovery) or the password is asked again, so that a session someone else got hold of cannot mint codes of its own. 403 when wrong; 400 when two-factor sign-in is off. The codes are shown once.',
        body: reauthenticationSchema,
        response: {
          200: recoveryCodesSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      await codeChecks(request, reply, person.userId);
      if (!(await mfaEnabled(database, person.userId))) throw invalid('Two-factor sign-in is off');
      await checkReauthentication(person.userId, request.body);
      const recoveryCodes = await replaceRecoveryCodes(database, person.userId);
      await recordPersonAudit(database, person.userId, auditOrigin(request), {
        action: 'user.recovery_codes_replaced',
      });
      return { recoveryCodes };
    },
  );
}
