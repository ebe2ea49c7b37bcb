import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import { personOf } from '../../platform/http/authentication.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { countPasskeys } from '../passkeys/index.ts';
import { listIdentities, unlinkIdentity } from './repository.ts';

/** A linked identity as `GET /v1/me/identities` lists it. */
const identityViewSchema = z.object({
  id: z.string(),
  provider: z.enum(['google', 'microsoft', 'github']),
  email: z.string().optional().describe('The address the provider gave at the last sign-in'),
  createdAt: z.iso.datetime().describe('When it was linked'),
  lastUsedAt: z.iso.datetime().optional().describe('Its last sign-in'),
});

/** `/v1/me/identities`: the signed-in person's linked Google, Microsoft and GitHub identities. */
export default async function identityRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authenticateCaller);
  // An account without a password of its own keeps its last identity unless it has a passkey.

  routes.get(
    '/',
    {
      config: { personOnly: true },
      schema: {
        summary: "The signed-in person's linked identities (Google, Microsoft, GitHub), oldest first",
        response: {
          200: z.object({ items: z.array(identityViewSchema) }),
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request) => {
      const person = personOf(request);
      const rows = await listIdentities(database, person.userId);
      return {
        items: rows.map((row) => ({
          id: row.id,
          provider: row.provider,
          ...(row.email === null ? {} : { email: row.email }),
          createdAt: row.created_at.toISOString(),
          ...(row.last_used_at === null ? {} : { lastUsedAt: row.last_used_at.toISOString() }),
        })),
      };
    },
  );

  routes.delete(
    '/:id',
    {
      config: { personOnly: true },
      schema: {
        summary: 'Unlink one of the signed-in person’s identities',
        description:
          'With `X-Service-CSRF`. 204; 404 when it is not theirs; 409 when it is their last way in (no password of their own, no other identity or passkey): set a password first.',
        params: z.object({ id: z.string().max(64) }),
        response: {
          204: z.null().describe('Unlinked'),
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      const result = await unlinkIdentity(database, {
        userId: person.userId,
        identityId: request.params.id,
        otherWaysIn: countPasskeys,
      });
      if (result === 'not_found') throw notFound(`No linked identity ${request.params.id}`);
      if (result === 'last_way_in')
        throw new ApiError({
          status: 409,
          code: 'invalid',
          message:
            'This is your only way to sign in: set a password first (Forgot your password? on the sign-in page e-mails you a link), then unlink it',
        });
      await recordPersonAudit(database, person.userId, auditOrigin(request), {
        action: 'user.identity_unlinked',
        target: { type: 'identity', id: result.id },
        details: { provider: result.provider, email: result.email },
      });
      return reply.code(204).send(null);
    },
  );
}
