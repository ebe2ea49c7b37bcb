import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import { SESSION_COOKIE } from '../../platform/http/authentication.ts';
import { ApiError, forbidden, invalid } from '../../platform/http/errors.ts';
import {
  checkPassword,
  createLimiter,
  findUserByEmail,
  findUserById,
  hashPassword,
  insertUser,
  prospectiveUser,
  refuseForeignOrigins,
  SIGN_IN_LIMITS,
  signedInViewSchema,
  signIn,
  toUserView,
} from '../accounts/index.ts';
import { acceptInvitation, findLiveInvitation, findMembership } from './repository.ts';
import { organizationViewSchema, toOrganizationView } from './views.ts';

const UNUSABLE =
  'This invitation does not work (already used, revoked, expired or unknown): ask for a new one';

/** 409: the invited address has an account, which must sign in to accept. */
function hasAccount(): ApiError {
  return new ApiError({
    status: 409,
    code: 'invalid',
    message: 'This address has an account: sign in, then accept the invitation',
  });
}

/**
 * `POST /auth/invitations/{token}/accept`: joins the invitation's organization with its role. A
 * person signed in (the session cookie, with `X-Service-CSRF`) joins with their account, which
 * must have the invited address; anyone else sends `{ name?, password }` and gets a new account
 * for the invited address (verified: the link came to it) and a session.
 */
export default async function invitationRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { publicUrl } = fastify.configuration;
  routes.addHook('onRequest', refuseForeignOrigins(fastify.configuration));
  await fastify.register(rateLimit, { global: false });
  const perAddress = createLimiter(
    fastify,
    'invitation:ip',
    SIGN_IN_LIMITS.invitationUse.perAddress,
    'invitation attempts from this address',
  );

  routes.post(
    '/:token/accept',
    {
      schema: {
        summary: 'Accept an invitation: join its organization with its role',
        description:
          'Signed in (the session cookie and `X-Service-CSRF`): joins with that account, which must have the invited e-mail address. Otherwise send `{ name?, password }`: a new account for the invited address, signed in (the session cookie is set). 409 when the address has an account already: sign in, then accept.',
        params: z.object({ token: z.string().min(1).max(128) }),
        body: z
          .strictObject({
            name: z.string().trim().min(1).max(200).optional(),
            password: z.string().max(1024),
          })
          .nullish(),
        response: {
          200: signedInViewSchema.extend({ organization: organizationViewSchema }),
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          409: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { token } = request.params;
      await perAddress(request, reply, request.ip);
      const invitation = await findLiveInvitation(database, token);
      if (invitation === undefined) throw invalid(UNUSABLE);
      const origin = auditOrigin(request);
      const joined = (transaction: Parameters<typeof recordAudit>[0], userId: string) =>
        recordAudit(transaction, invitation.organization_id, { type: 'user', id: userId }, origin, {
          action: 'member.joined',
          target: { type: 'user', id: userId },
          details: { role: invitation.role, invitationId: invitation.id },
        });

      const cookie = request.cookies[SESSION_COOKIE];
      if (cookie !== undefined && cookie !== '') {
        await fastify.authenticateCaller(request, reply);
        const person = request.person;
        if (person === null) throw forbidden('Sign in with the session cookie to accept');
        const user = await findUserById(database, person.userId);
        if (user === undefined || user.email.toLowerCase() !== invitation.email.toLowerCase())
          throw forbidden(
            'This invitation is for another e-mail address: sign in with the invited address, or ask for an invitation to yours',
          );
        const accepted = await database.transaction().execute(async (transaction) => {
          const taken = await acceptInvitation(transaction, token, user.id);
          if (taken !== undefined) await joined(transaction, user.id);
          return taken;
        });
        if (accepted === undefined) throw invalid(UNUSABLE);
        const membership = await findMembership(database, invitation.organization_id, user.id);
        if (membership === undefined) throw invalid(UNUSABLE);
        return {
          user: toUserView(user),
          csrfToken: person.csrfToken,
          organization: toOrganizationView(membership),
        };
      }

      const body = request.body;
      if (body === undefined || body === null)
        throw invalid('Send { name, password } to create your account, or sign in first and accept then');
      if ((await findUserByEmail(database, invitation.email)) !== undefined) throw hasAccount();
      // Asked before anything is written: an organization may require SSO for the invited address
      // (403). The person then signs in with SSO, which makes the account and takes this
      // invitation, with its role.
      await request.server.signInGate(prospectiveUser(invitation.email), 'invitation', { checkOnly: true });
      const problem = checkPassword(body.password);
      if (problem !== undefined) throw invalid(problem);
      const passwordHash = await hashPassword(body.password);
      const user = await database.transaction().execute(async (transaction) => {
        const created = await insertUser(transaction, {
          email: invitation.email,
          name: body.name,
          passwordHash,
          emailVerified: true,
        });
        // Created meanwhile by a sign-up of the same address: as above.
        if (created === undefined) throw hasAccount();
        if ((await acceptInvitation(transaction, token, created.id)) === undefined) throw invalid(UNUSABLE);
        await joined(transaction, created.id);
        return created;
      });
      const signedIn = await signIn(database, publicUrl, request, reply, user, 'invitation');
      const membership = await findMembership(database, invitation.organization_id, user.id);
      if (membership === undefined) throw invalid(UNUSABLE);
      return { ...signedIn, organization: toOrganizationView(membership) };
    },
  );
}
