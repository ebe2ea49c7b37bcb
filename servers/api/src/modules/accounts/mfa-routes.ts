import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { forbidden, invalid, unauthorized } from '../../platform/http/errors.ts';
import { personOf } from './me-routes.ts';
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
  await fastify.register(rateLimit, { global: false });
  const codeChecks = createLimiter(
    fastify,
    'me-mfa:account',
    SIGN_IN_LIMITS.signedInChecks.perAccount,
    'code and password checks for this account',
  );

  routes.post(
    '/enroll',
    {
      schema: {
        summary: 'Start two-factor sign-in: a new TOTP secret (MFA stays off until confirmed)',
        description:
          '`otpauthUri` is for a QR code, `secret` (base32) to type into an authenticator app. Enrolling again before confirming replaces the secret; 400 when MFA is on already.',
        response: {
          200: z.object({ otpauthUri: z.string(), secret: z.string() }),
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request) => {
      const person = personOf(request);
      const user = await findUserById(database, person.userId);
      if (user === undefined)
        throw unauthorized('The session has ended (signed out or expired): sign in again');
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
      return { recoveryCodes: await replaceRecoveryCodes(database, person.userId) };
    },
  );

  routes.post(
    '/disable',
    {
      schema: {
        summary: 'Turn two-factor sign-in off, with a code (TOTP or recovery) or the password',
        description: '403 when the code or the password is wrong; 400 when MFA is off.',
        body: z.union([
          z.strictObject({ code: codeSchema }),
          z.strictObject({ password: z.string().max(1024) }),
        ]),
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
      const body = request.body;
      if ('code' in body) {
        if (!(await useSecondFactor(database, masterKey, person.userId, body.code)))
          throw forbidden('The code is wrong (or used already)');
      } else {
        const user = await findUserById(database, person.userId);
        if (user === undefined || !(await verifyPassword(user.password_hash, body.password)))
          throw forbidden('The password is wrong');
      }
      await disableMfa(database, person.userId);
      return reply.code(204).send(null);
    },
  );

  routes.post(
    '/recovery-codes',
    {
      schema: {
        summary: 'A new set of recovery codes (the old ones stop working)',
        description: '400 when two-factor sign-in is off. The codes are shown once.',
        response: {
          200: recoveryCodesSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request) => {
      const person = personOf(request);
      if (!(await mfaEnabled(database, person.userId))) throw invalid('Two-factor sign-in is off');
      return { recoveryCodes: await replaceRecoveryCodes(database, person.userId) };
    },
  );
}
