import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin } from '../../platform/audit.ts';
import type { SsoDomain } from '../../platform/database/tables/sso.table.ts';
import { forPeopleOnly, personOf } from '../../platform/http/authentication.ts';
import { checkMembership } from '../orgs/index.ts';
import {
  type AuditContext,
  claimDomain,
  createTxtResolver,
  listDomains,
  removeDomain,
  type TxtResolver,
  txtRecordOf,
  verifyDomain,
} from './domains.ts';

const orgParams = z.object({ orgId: z.string().max(64) });
const domainParams = orgParams.extend({ id: z.string().max(64) });

const domainViewSchema = z.object({
  id: z.string(),
  domain: z.string(),
  /** The record to publish: a TXT record named `name` with the value `value`. */
  txtRecord: z.object({ name: z.string(), value: z.string() }),
  verifiedAt: z.string().nullable(),
  lastCheckedAt: z.string().nullable(),
  /** What the last lookup found when it did not verify the domain. */
  lastCheckError: z.string().nullable(),
  createdAt: z.string(),
});

function toDomainView(row: SsoDomain): z.infer<typeof domainViewSchema> {
  return {
    id: row.id,
    domain: row.domain,
    txtRecord: txtRecordOf(row),
    verifiedAt: row.verified_at?.toISOString() ?? null,
    lastCheckedAt: row.last_checked_at?.toISOString() ?? null,
    lastCheckError: row.last_check_error,
    createdAt: row.created_at.toISOString(),
  };
}

function auditContext(request: FastifyRequest): AuditContext {
  return { actor: { type: 'user', id: personOf(request).userId }, origin: auditOrigin(request) };
}

/**
 * `/v1/orgs/{orgId}/domains` (admins and owners): the domains the organization claims, the TXT
 * record that proves each, and their verification by a DNS lookup (servers/api/README.md,
 * Verified domains). Each claim, verification and removal is audited.
 */
export default async function domainRoutes(
  fastify: FastifyInstance,
  options: { resolver?: TxtResolver } = {},
) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const resolver = options.resolver ?? createTxtResolver(fastify.configuration.dnsServers);
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);

  routes.get(
    '/:orgId/domains',
    {
      config: { administer: true },
      schema: {
        summary: 'The domains the organization claims, verified or not (admins and owners)',
        params: orgParams,
        response: {
          200: z.object({ items: z.array(domainViewSchema) }),
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => ({ items: (await listDomains(database, request.params.orgId)).map(toDomainView) }),
  );

  routes.post(
    '/:orgId/domains',
    {
      config: { administer: true },
      schema: {
        summary: 'Claim a domain: answers the TXT record to publish, then verify it (admins and owners)',
        params: orgParams,
        body: z.strictObject({ domain: z.string().max(300).describe('example.com') }),
        response: {
          201: domainViewSchema,
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const row = await claimDomain(
        database,
        request.params.orgId,
        request.body.domain,
        auditContext(request),
      );
      return reply.code(201).send(toDomainView(row));
    },
  );

  routes.post(
    '/:orgId/domains/:id/verify',
    {
      config: { administer: true },
      schema: {
        summary:
          "Look up the domain's TXT record now; verified when it carries the value (admins and owners)",
        params: domainParams,
        response: { 200: domainViewSchema, 403: errorBodySchema, 404: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId, id } = request.params;
      return toDomainView(
        await verifyDomain(database, resolver, orgId, id, new Date(), auditContext(request)),
      );
    },
  );

  routes.delete(
    '/:orgId/domains/:id',
    {
      config: { administer: true },
      schema: {
        summary: 'Remove a claimed domain and its verification (admins and owners)',
        params: domainParams,
        response: { 204: z.null(), 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      await removeDomain(database, request.params.orgId, request.params.id, auditContext(request));
      return reply.code(204).send(null);
    },
  );
}
