import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import { personOf, type SignedInPerson } from '../../platform/http/authentication.ts';
import { forbidden, invalid, unauthorized } from '../../platform/http/errors.ts';
import { mfaEnabled } from './mfa.ts';
import { checkPassword, hashPassword, verifyPassword } from './passwords.ts';
import { createLimiter, SIGN_IN_LIMITS } from './rate-limits.ts';
import {
  changePassword,
  deleteOtherSessions,
  deleteUserSession,
  findUserById,
  listLiveSessions,
  updateUser,
} from './repository.ts';
import { signedInViewSchema, toUserView } from './views.ts';

/** What `GET /v1/me` answers for an API token: a token is no person. */
const tokenViewSchema = z.object({
  token: z.object({
    id: z.string(),
    projectId: z.string(),
    organizationId: z.string(),
    scopes: z.array(z.string()),
  }),
});

/** A signed-in session as `GET /v1/me/sessions` lists it: never its secret. */
const sessionViewSchema = z.object({
  id: z.string(),
  createdAt: z.string().describe('When it signed in'),
  lastSeenAt: z.string().describe('Its last request (to the minute)'),
  userAgent: z.string().optional(),
  ip: z.string().optional().describe('The client address it signed in from'),
  current: z.boolean().describe("Whether it is this request's session"),
});

/** `/v1/me`: the signed-in person (with the session cookie), or the API token's own description. */
export default async function meRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authenticateCaller);
  await fastify.register(rateLimit, { global: false });
  const passwordChecks = createLimiter(
    fastify,
    'me-password:account',
    SIGN_IN_LIMITS.signedInChecks.perAccount,
    'password checks for this account',
  );

  async function currentUser(person: SignedInPerson) {
    const user = await findUserById(database, person.userId);
    // The session's user is gone (deleted meanwhile): as good as signed out.
    if (user === undefined)
      throw unauthorized('The session has ended (signed out or expired): sign in again');
    return user;
  }

  routes.get(
    '/',
    {
      schema: {
        summary: 'Who is calling: the signed-in person and the CSRF token, or the API token',
        description:
          'With the session cookie: `{ user, csrfToken, mfaEnabled }` (send the token in `X-Service-CSRF` on state-changing requests). With an API token: `{ token }`, which is bound to a project, not a person.',
        response: {
          200: z.union([
            signedInViewSchema.extend({
              mfaEnabled: z.boolean().describe('Whether two-factor sign-in is on'),
            }),
            tokenViewSchema,
          ]),
          401: errorBodySchema,
        },
      },
    },
    async (request) => {
      if (request.person === null) {
        const { caller, project, organizationId, scopes } = request.auth;
        return {
          token: { id: caller.id, projectId: project.id, organizationId, scopes: [...scopes].sort() },
        };
      }
      const user = await currentUser(request.person);
      return {
        user: toUserView(user),
        csrfToken: request.person.csrfToken,
        mfaEnabled: await mfaEnabled(database, user.id),
      };
    },
  );

  routes.patch(
    '/',
    {
      config: { personOnly: true },
      schema: {
        summary: "Change the signed-in person's name (`null` removes it)",
        body: z.strictObject({ name: z.string().trim().min(1).max(200).nullable().optional() }),
        response: { 200: signedInViewSchema, 401: errorBodySchema, 403: errorBodySchema },
      },
    },
    async (request) => {
      const person = personOf(request);
      const user = await updateUser(database, person.userId, { name: request.body.name });
      if (user === undefined)
        throw unauthorized('The session has ended (signed out or expired): sign in again');
      return { user: toUserView(user), csrfToken: person.csrfToken };
    },
  );

  routes.post(
    '/password',
    {
      config: { personOnly: true },
      schema: {
        summary: "Change the signed-in person's password; ends their other sessions",
        description:
          'Cookie only (with `X-Service-CSRF`). 403 when `currentPassword` is wrong; the new password follows the sign-up rules (400). This session stays; every other session of the person ends.',
        body: z.strictObject({
          currentPassword: z.string().max(1024),
          newPassword: z.string().max(1024),
        }),
        response: {
          200: signedInViewSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      await passwordChecks(request, reply, person.userId);
      const { currentPassword, newPassword } = request.body;
      const user = await currentUser(person);
      if (!(await verifyPassword(user.password_hash, currentPassword)))
        throw forbidden('The current password is wrong');
      const problem = checkPassword(newPassword);
      if (problem !== undefined) throw invalid(problem);
      const changed = await changePassword(database, {
        userId: user.id,
        passwordHash: await hashPassword(newPassword),
        keepSessionId: person.sessionId,
      });
      if (changed === undefined)
        throw unauthorized('The session has ended (signed out or expired): sign in again');
      await recordPersonAudit(database, person.userId, auditOrigin(request), {
        action: 'user.password_changed',
      });
      return { user: toUserView(changed), csrfToken: person.csrfToken };
    },
  );

  routes.get(
    '/sessions',
    {
      schema: {
        summary: "The signed-in person's live sessions (devices signed in), latest used first",
        description:
          '`current` marks the session of this request. Never a session secret. An API token has no sign-in sessions: `{ sessions: [] }`.',
        response: {
          200: z.object({ sessions: z.array(sessionViewSchema) }),
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request) => {
      const person = request.person;
      if (person === null) return { sessions: [] };
      const rows = await listLiveSessions(database, person.userId);
      return {
        sessions: rows.map((row) => ({
          id: row.id,
          createdAt: row.created_at.toISOString(),
          lastSeenAt: row.last_seen_at.toISOString(),
          ...(row.user_agent === null ? {} : { userAgent: row.user_agent }),
          ...(row.ip === null ? {} : { ip: row.ip }),
          current: row.id === person.sessionId,
        })),
      };
    },
  );

  routes.delete(
    '/sessions/:id',
    {
      schema: {
        summary: 'Sign out one session of the signed-in person (this one too, if asked)',
        description:
          "With `X-Service-CSRF`. Idempotent: 204 also when there is no such session of theirs (ended already, or another person's, which is left alone). An API token has no sign-in sessions: 204, nothing happens.",
        params: z.object({ id: z.string().max(64) }),
      },
    },
    async (request, reply) => {
      const person = request.person;
      if (person !== null) await deleteUserSession(database, person.userId, request.params.id);
      return reply.code(204).send();
    },
  );

  routes.delete(
    '/sessions',
    {
      schema: {
        summary: 'Sign out every other session of the signed-in person; this one stays',
        description:
          'With `X-Service-CSRF`. Answers how many sessions ended. An API token has no sign-in sessions: `{ ended: 0 }`.',
        response: { 200: z.object({ ended: z.number().int() }), 401: errorBodySchema, 403: errorBodySchema },
      },
    },
    async (request) => {
      const person = request.person;
      if (person === null) return { ended: 0 };
      return { ended: await deleteOtherSessions(database, person.userId, person.sessionId) };
    },
  );
}
