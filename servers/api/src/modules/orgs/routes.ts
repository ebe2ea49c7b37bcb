import rateLimit from '@fastify/rate-limit';
import { errorBodySchema, listPageSchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type AuditRecord, auditOrigin, recordAudit } from '../../platform/audit.ts';
import { forPeopleOnly, personOf } from '../../platform/http/authentication.ts';
import { decodeRecordCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { ApiError, forbidden, notFound } from '../../platform/http/errors.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { checkTimeRange, integerParameter, textParameter, timeParameter } from '../../platform/http/query.ts';
import { createLimiter, SIGN_IN_LIMITS } from '../accounts/index.ts';
import { checkMembership, membershipOf } from './access.ts';
import { findAuditPage } from './audit-repository.ts';
import { invitationLink, invitationMessage } from './emails.ts';
import { lockOrganization, planLimitReached, seatsTaken } from './plan-limits.ts';
import {
  changeMemberRole,
  createInvitation,
  createOrganizationWithOwner,
  INVITATION_LIFETIME_DAYS,
  isMemberEmail,
  listMembers,
  listMemberships,
  listPendingInvitations,
  type MembershipRefusal,
  removeMember,
  renameOrganization,
  revokeInvitation,
} from './repository.ts';
import { administers } from './roles.ts';
import {
  auditEntryViewSchema,
  invitationViewSchema,
  invitedRoleSchema,
  memberViewSchema,
  organizationViewSchema,
  roleSchema,
  toAuditEntryView,
  toInvitationView,
  toMemberView,
  toOrganizationView,
} from './views.ts';

const orgParams = z.object({ orgId: z.string().max(64) });
const memberParams = orgParams.extend({ userId: z.string().max(64) });
const nameSchema = z.string().trim().min(1).max(200);

function refused(refusal: MembershipRefusal, userId: string): ApiError {
  if (refusal === 'not_found') return notFound(`No member ${userId}`);
  return new ApiError({
    status: 409,
    code: 'invalid',
    message: 'An organization keeps at least one owner: make another member an owner first',
  });
}

/**
 * `/v1/orgs`: the organizations of the signed-in person, their members, invitations and audit
 * trail. For people (the session cookie) only: an API token acts for one project. A person who is
 * no member of an organization gets 404 for it (its existence is not theirs to know); a member
 * whose role does not allow a change gets 403 (servers/api/README.md, Roles).
 */
export default async function organizationRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { appUrl } = fastify.configuration;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);
  await fastify.register(rateLimit, { global: false });
  const invitationsPerOrganization = createLimiter(
    fastify,
    'invitations:organization',
    SIGN_IN_LIMITS.invitations.perOrganization,
    'invitations from this organization',
  );

  function audit(request: FastifyRequest, organizationId: string, record: AuditRecord) {
    const person = personOf(request);
    return (executor: Parameters<typeof recordAudit>[0]) =>
      recordAudit(
        executor,
        organizationId,
        { type: 'user', id: person.userId },
        auditOrigin(request),
        record,
      );
  }

  routes.get(
    '/',
    {
      schema: {
        summary: 'The organizations the signed-in person belongs to, with their role',
        response: { 200: z.object({ items: z.array(organizationViewSchema) }), 403: errorBodySchema },
      },
    },
    async (request) => {
      const person = personOf(request);
      return { items: (await listMemberships(database, person.userId)).map(toOrganizationView) };
    },
  );

  routes.post(
    '/',
    {
      schema: {
        summary: 'Create an organization; the signed-in person is its owner',
        body: z.strictObject({ name: nameSchema }),
        response: { 201: organizationViewSchema, 400: errorBodySchema, 403: errorBodySchema },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      const organization = await createOrganizationWithOwner(database, {
        name: request.body.name,
        userId: person.userId,
      });
      await audit(request, organization.id, {
        action: 'organization.created',
        target: { type: 'organization', id: organization.id },
        details: { name: organization.name },
      })(database);
      return reply.code(201).send(toOrganizationView({ organization, role: 'owner' }));
    },
  );

  routes.get(
    '/:orgId',
    {
      schema: {
        summary: 'One organization, with the caller’s role in it',
        params: orgParams,
        response: { 200: organizationViewSchema, 404: errorBodySchema },
      },
    },
    async (request) => toOrganizationView(membershipOf(request)),
  );

  routes.patch(
    '/:orgId',
    {
      config: { administer: true },
      schema: {
        summary: 'Rename the organization (admins and owners)',
        params: orgParams,
        body: z.strictObject({ name: nameSchema }),
        response: { 200: organizationViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const current = membershipOf(request);
      const organization = await database.transaction().execute(async (transaction) => {
        const renamed = await renameOrganization(transaction, orgId, request.body.name);
        if (renamed !== undefined)
          await audit(request, orgId, {
            action: 'organization.renamed',
            target: { type: 'organization', id: orgId },
            details: { from: current.organization.name, to: renamed.name },
          })(transaction);
        return renamed;
      });
      if (organization === undefined) throw notFound(`No organization ${orgId}`);
      return toOrganizationView({ organization, role: current.role });
    },
  );

  // Members -------------------------------------------------------------------------------------

  routes.get(
    '/:orgId/members',
    {
      schema: {
        summary: "The organization's members and their roles (any member)",
        params: orgParams,
        querystring: z.object({
          limit: integerParameter(1, 500).optional(),
          cursor: z.string().max(200).optional(),
        }),
        response: { 200: listPageSchema(memberViewSchema), 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const { limit = 100, cursor } = request.query;
      const rows = await listMembers(database, orgId, {
        limit: limit + 1,
        after: cursor === undefined ? undefined : decodeRecordCursor(cursor, 'usr'),
      });
      const { page, more } = keysetPage(rows, limit);
      return {
        items: page.map(toMemberView),
        nextCursor: more === undefined ? undefined : encodeIdCursor(more.user_id),
      };
    },
  );

  routes.patch(
    '/:orgId/members/:userId',
    {
      config: { administer: true },
      schema: {
        summary: "Change a member's role (admins; only owners make or unmake owners)",
        description: 'The last owner cannot be demoted (409): make another member an owner first.',
        params: memberParams,
        body: z.strictObject({ role: roleSchema }),
        response: {
          200: memberViewSchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { orgId, userId } = request.params;
      const { role } = request.body;
      const caller = membershipOf(request);
      if (role === 'owner' && caller.role !== 'owner')
        throw forbidden('Only an owner makes another member an owner');
      const result = await changeMemberRole(database, orgId, userId, role, {
        authorize(previous) {
          if (previous === 'owner' && caller.role !== 'owner')
            throw forbidden("Only an owner changes an owner's role");
        },
        record: (transaction, previous) =>
          audit(request, orgId, {
            action: 'member.role_changed',
            target: { type: 'user', id: userId },
            details: { from: previous, to: role },
          })(transaction),
      });
      if (typeof result === 'string') throw refused(result, userId);
      const member = (await listMembers(database, orgId, { limit: 1, after: undefined, only: userId }))[0];
      if (member === undefined) throw notFound(`No member ${userId}`);
      return toMemberView(member);
    },
  );

  routes.delete(
    '/:orgId/members/:userId',
    {
      schema: {
        summary: 'Remove a member (admins; owners only by owners), or leave (any member, their own id)',
        description: 'The last owner cannot leave (409). Answers 204.',
        params: memberParams,
        response: { 204: z.null(), 403: errorBodySchema, 404: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { orgId, userId } = request.params;
      const caller = membershipOf(request);
      const leaving = userId === caller.person.userId;
      if (!leaving && !administers(caller.role))
        throw forbidden(`Your role (${caller.role}) does not allow this: it takes an admin or an owner`);
      const result = await removeMember(database, orgId, userId, {
        authorize(previous) {
          if (!leaving && previous === 'owner' && caller.role !== 'owner')
            throw forbidden('Only an owner removes another owner');
        },
        record: (transaction, previous) =>
          audit(request, orgId, {
            action: leaving ? 'member.left' : 'member.removed',
            target: { type: 'user', id: userId },
            details: { role: previous },
          })(transaction),
      });
      if (typeof result === 'string') throw refused(result, userId);
      return reply.code(204).send(null);
    },
  );

  // Invitations ---------------------------------------------------------------------------------

  routes.post(
    '/:orgId/invitations',
    {
      config: { administer: true },
      schema: {
        summary: 'Invite a person by e-mail with a role (admins and owners)',
        description: `Sends an e-mail with a one-time link (valid ${INVITATION_LIFETIME_DAYS} days). A new invitation of the same address replaces the pending one. 409 when the address is a member already.`,
        params: orgParams,
        body: z.strictObject({ email: z.email().max(254), role: invitedRoleSchema.default('member') }),
        response: {
          201: invitationViewSchema,
          400: errorBodySchema,
          402: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { orgId } = request.params;
      const { email, role } = request.body;
      const caller = membershipOf(request);
      await invitationsPerOrganization(request, reply, orgId);
      if (await isMemberEmail(database, orgId, email))
        throw new ApiError({ status: 409, code: 'invalid', message: `${email} is a member already` });
      // Read before the transaction: on the embedded store it holds the one connection.
      const { seats } = await fastify.planSeatsAndProjects(orgId);
      const { invitation, token } = await database.transaction().execute(async (transaction) => {
        if (seats !== null) {
          await lockOrganization(transaction, orgId);
          if ((await seatsTaken(transaction, orgId)) >= seats) throw planLimitReached('seats', seats);
        }
        const created = await createInvitation(transaction, {
          organizationId: orgId,
          email,
          role,
          invitedBy: caller.person.userId,
        });
        await audit(request, orgId, {
          action: 'invitation.created',
          target: { type: 'invitation', id: created.invitation.id },
          details: { email, role },
        })(transaction);
        return created;
      });
      const inviter = await database
        .selectFrom('users')
        .select(['email', 'name'])
        .where('id', '=', caller.person.userId)
        .executeTakeFirst();
      await fastify.mailer.send(
        invitationMessage({
          to: email,
          organizationName: caller.organization.name,
          invitedBy: inviter?.name ?? inviter?.email ?? 'A member',
          role,
          link: invitationLink(appUrl, token),
          expiresInDays: INVITATION_LIFETIME_DAYS,
        }),
      );
      return reply.code(201).send(toInvitationView(invitation));
    },
  );

  routes.get(
    '/:orgId/invitations',
    {
      config: { administer: true },
      schema: {
        summary: 'The pending invitations (admins and owners); expired ones say so',
        params: orgParams,
        response: {
          200: z.object({ items: z.array(invitationViewSchema) }),
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      const invitations = await listPendingInvitations(database, request.params.orgId);
      const now = new Date();
      return { items: invitations.map((invitation) => toInvitationView(invitation, now)) };
    },
  );

  routes.delete(
    '/:orgId/invitations/:invitationId',
    {
      config: { administer: true },
      schema: {
        summary: 'Revoke a pending invitation: its link stops working (admins and owners)',
        params: orgParams.extend({ invitationId: z.string().max(64) }),
        response: { 204: z.null(), 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { orgId, invitationId } = request.params;
      const revoked = await database.transaction().execute(async (transaction) => {
        const invitation = await revokeInvitation(transaction, orgId, invitationId);
        if (invitation !== undefined)
          await audit(request, orgId, {
            action: 'invitation.revoked',
            target: { type: 'invitation', id: invitationId },
            details: { email: invitation.email },
          })(transaction);
        return invitation;
      });
      if (revoked === undefined) throw notFound(`No pending invitation ${invitationId}`);
      return reply.code(204).send(null);
    },
  );

  // Audit ---------------------------------------------------------------------------------------

  routes.get(
    '/:orgId/audit',
    {
      config: { administer: true },
      schema: {
        summary: "The organization's audit trail, newest first (admins and owners)",
        description:
          'Every security-relevant action: who (actor), what (action), on what (target), when, from which address and user agent. Sign-ins and account changes of its members are included.',
        params: orgParams,
        querystring: z
          .object({
            action: textParameter(100).optional(),
            actorId: textParameter(64).optional(),
            targetId: textParameter(64).optional(),
            from: timeParameter.optional(),
            to: timeParameter.optional(),
            limit: integerParameter(1, 500).optional(),
            cursor: z.string().max(200).optional(),
          })
          .check(checkTimeRange),
        response: { 200: listPageSchema(auditEntryViewSchema), 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const { limit = 50, cursor, ...filters } = request.query;
      const rows = await findAuditPage(database, orgId, filters, {
        limit: limit + 1,
        before: cursor === undefined ? undefined : decodeRecordCursor(cursor, 'aud'),
      });
      const { page, more } = keysetPage(rows, limit);
      return {
        items: page.map(toAuditEntryView),
        nextCursor: more === undefined ? undefined : encodeIdCursor(more.id),
      };
    },
  );
}
