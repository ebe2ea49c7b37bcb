import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { forPeopleOnly, isScope, SCOPES } from '../../platform/http/authentication.ts';
import { invalid, notFound } from '../../platform/http/errors.ts';
import { checkMembership, lockOrganization, membershipOf, planLimitReached } from '../orgs/index.ts';
import {
  type ApiTokenRow,
  createApiTokenRecord,
  listApiTokens,
  revokeApiToken,
  tokenScopes,
} from './api-tokens.ts';
import { createProject, findProjectById, listProjects } from './projects.ts';
import { projectViewSchema, toProjectView } from './routes.ts';

/** A token just created, as `security.token_created` describes it. */
export interface CreatedToken {
  id: string;
  name: string;
  scopes: string[];
  expiresAt?: string | undefined;
  /** Who created it: the person's e-mail address. */
  createdBy: string;
}

export interface OrganizationProjectRoutesOptions {
  /**
   * Called in the transaction that creates a token (the composition root sends
   * `security.token_created` through notifications, which come later in the module order).
   */
  onTokenCreated?(transaction: Transaction<Database>, project: Project, token: CreatedToken): Promise<void>;
}

const orgParams = z.object({ orgId: z.string().max(64) });

const tokenViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  scopes: z.array(z.string()).describe('What it may do; a full-access token holds every scope'),
  expiresAt: z.iso.datetime().optional().describe('When it stops working; never when absent'),
  createdBy: z.string().optional().describe('The user id of who created it'),
  createdAt: z.iso.datetime(),
});

function toTokenView(row: ApiTokenRow): z.infer<typeof tokenViewSchema> {
  return {
    id: row.id,
    name: row.name,
    projectId: row.project_id,
    scopes: [...tokenScopes(row.scopes)].sort(),
    ...(row.expires_at === null ? {} : { expiresAt: row.expires_at.toISOString() }),
    ...(row.created_by === null ? {} : { createdBy: row.created_by }),
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * `/v1/orgs/{orgId}/projects` and `/v1/orgs/{orgId}/tokens`: an organization's projects (any
 * member lists them; admins and owners create them) and its API tokens (admins and owners). For
 * people (the session cookie); a non-member gets 404.
 */
export default async function organizationProjectRoutes(
  fastify: FastifyInstance,
  options: OrganizationProjectRoutesOptions,
) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);

  /** The caller's membership of the route's organization (checked before the body is read). */
  function membership(request: FastifyRequest) {
    return { ...membershipOf(request), origin: auditOrigin(request) };
  }

  routes.get(
    '/:orgId/projects',
    {
      schema: {
        summary: "The organization's projects (any member)",
        params: orgParams,
        response: { 200: z.object({ items: z.array(projectViewSchema) }), 404: errorBodySchema },
      },
    },
    async (request) => {
      const now = new Date();
      return {
        items: (await listProjects(database, request.params.orgId)).map((project) =>
          toProjectView(project, now),
        ),
      };
    },
  );

  routes.post(
    '/:orgId/projects',
    {
      config: { administer: true },
      schema: {
        summary: 'Create a project with its project key (admins and owners)',
        params: orgParams,
        body: z.strictObject({ name: z.string().trim().min(1).max(200) }),
        response: {
          201: projectViewSchema,
          402: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { orgId } = request.params;
      const caller = membership(request);
      // Read before the transaction: on the embedded store it holds the one connection.
      const limit = (await fastify.planSeatsAndProjects(orgId)).projects;
      const project = await database.transaction().execute(async (transaction) => {
        if (limit !== null) {
          await lockOrganization(transaction, orgId);
          const live = await transaction
            .selectFrom('projects')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('organization_id', '=', orgId)
            .where('deleted_at', 'is', null)
            .executeTakeFirstOrThrow();
          if (Number(live.count) >= limit) throw planLimitReached('projects', limit);
        }
        const created = await createProject(transaction, {
          organizationId: orgId,
          name: request.body.name,
          masterKey: fastify.masterKey,
        });
        await recordAudit(transaction, orgId, { type: 'user', id: caller.person.userId }, caller.origin, {
          action: 'project.created',
          target: { type: 'project', id: created.id },
          details: { name: created.name },
        });
        return created;
      });
      return reply.code(201).send(toProjectView(project));
    },
  );

  routes.get(
    '/:orgId/tokens',
    {
      config: { administer: true },
      schema: {
        summary: "The organization's live API tokens, newest first (admins and owners); never their secrets",
        params: orgParams,
        querystring: z.object({ projectId: z.string().max(64).optional() }),
        response: {
          200: z.object({ items: z.array(tokenViewSchema) }),
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      const rows = await listApiTokens(database, request.params.orgId, request.query.projectId);
      return { items: rows.map(toTokenView) };
    },
  );

  routes.post(
    '/:orgId/tokens',
    {
      config: { administer: true },
      schema: {
        summary:
          'Create an API token for one project, with scopes and an optional expiry (admins and owners)',
        description:
          'The `svc_` secret is in this answer only (`token`); it is stored hashed. Emits `security.token_created` (inbox and webhooks) and an audit entry.',
        params: orgParams,
        body: z.strictObject({
          name: z.string().trim().min(1).max(200),
          projectId: z.string().max(64),
          scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length),
          expiresInDays: z.int().min(1).max(3650).optional(),
        }),
        response: {
          201: tokenViewSchema.extend({ token: z.string().describe('The secret: shown once') }),
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { orgId } = request.params;
      const { name, projectId, expiresInDays } = request.body;
      const caller = membership(request);
      const project = await findProjectById(database, projectId);
      if (project === undefined || project.organization_id !== orgId || project.deleted_at !== null)
        throw invalid(`No project ${projectId} in this organization`);
      const scopes = [...new Set(request.body.scopes.filter(isScope))].sort();
      const expiresAt =
        expiresInDays === undefined ? undefined : new Date(Date.now() + expiresInDays * 86_400_000);
      const created = await database.transaction().execute(async (transaction) => {
        const made = await createApiTokenRecord(transaction, {
          projectId,
          name,
          scopes,
          expiresAt,
          createdBy: caller.person.userId,
        });
        await recordAudit(transaction, orgId, { type: 'user', id: caller.person.userId }, caller.origin, {
          action: 'token.created',
          target: { type: 'api_token', id: made.id },
          details: { name, projectId, scopes, expiresAt: expiresAt?.toISOString() ?? null },
        });
        const creator = await transaction
          .selectFrom('users')
          .select('email')
          .where('id', '=', caller.person.userId)
          .executeTakeFirst();
        await options.onTokenCreated?.(transaction, project, {
          id: made.id,
          name,
          scopes,
          expiresAt: expiresAt?.toISOString(),
          createdBy: creator?.email ?? caller.person.userId,
        });
        return made;
      });
      return reply.code(201).send({ ...toTokenView(created.row), token: created.token });
    },
  );

  routes.delete(
    '/:orgId/tokens/:tokenId',
    {
      config: { administer: true },
      schema: {
        summary: 'Revoke an API token: it stops working at once (admins and owners)',
        params: orgParams.extend({ tokenId: z.string().max(64) }),
        response: { 204: z.null(), 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { orgId, tokenId } = request.params;
      const caller = membership(request);
      const revoked = await database.transaction().execute(async (transaction) => {
        const token = await revokeApiToken(transaction, orgId, tokenId);
        if (token !== undefined)
          await recordAudit(transaction, orgId, { type: 'user', id: caller.person.userId }, caller.origin, {
            action: 'token.revoked',
            target: { type: 'api_token', id: tokenId },
            details: { name: token.name, projectId: token.project_id },
          });
        return token;
      });
      if (revoked === undefined) throw notFound(`No API token ${tokenId}`);
      return reply.code(204).send(null);
    },
  );
}
