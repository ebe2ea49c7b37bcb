import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import { type AuditRecord, auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { SsoConnection } from '../../platform/database/tables/sso.table.ts';
import { forPeopleOnly, personOf } from '../../platform/http/authentication.ts';
import { createDestinationPolicy } from '../../platform/http/destination-policy.ts';
import { ApiError, invalid, notFound } from '../../platform/http/errors.ts';
import { createPolicyFetch } from '../../platform/http/policy-fetch.ts';
import { createId } from '../../platform/ids.ts';
import { findUserById } from '../accounts/index.ts';
import { checkMembership } from '../orgs/index.ts';
import { issuerRefusal, oidcConfiguration } from './oidc.ts';
import {
  type ConnectionChange,
  deleteConnection,
  enabledConnectionCount,
  findConnection,
  insertConnection,
  listConnections,
  setSsoRequired,
  ssoRequired,
  updateConnection,
} from './repository.ts';
import {
  normalizeCertificate,
  parseIdpMetadata,
  type SamlIdentityProvider,
  samlServiceProvider,
} from './saml/index.ts';
import { sealClientSecret } from './secrets.ts';
import { connectionViewSchema, ssoRoleSchema, toConnectionView } from './views.ts';

/** A change to an organization's SSO, as `security.sso_changed` announces it. */
export interface SsoChange {
  organizationId: string;
  action: 'connection_created' | 'connection_updated' | 'connection_deleted' | 'required_changed';
  /** Who changed it (their e-mail address). */
  actor: string;
  connection?: { id: string; name: string; type: 'saml' | 'oidc' };
  /** One sentence: what changed. */
  summary: string;
}

/** Sends `security.sso_changed` (the composition: to the organization's projects), in the change's transaction. */
type AnnounceSsoChange = (transaction: Transaction<Database>, change: SsoChange) => Promise<void>;

const orgParams = z.object({ orgId: z.string().max(64) });
const connectionParams = orgParams.extend({ connectionId: z.string().max(64) });
const nameSchema = z.string().trim().min(1).max(200);
const urlSchema = z.string().trim().max(2048);
const certificatesSchema = z.array(z.string().max(20_000)).min(1).max(5);

const samlFields = {
  /** The IdP's metadata XML: entity id, SSO URL and certificates read from it. */
  metadataXml: z.string().max(500_000).optional(),
  entityId: z.string().trim().min(1).max(1024).optional(),
  ssoUrl: urlSchema.optional(),
  certificates: certificatesSchema.optional(),
};

const createBodySchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('saml'),
    name: nameSchema,
    defaultRole: ssoRoleSchema.optional(),
    enabled: z.boolean().optional(),
    ...samlFields,
  }),
  z.strictObject({
    type: z.literal('oidc'),
    name: nameSchema,
    defaultRole: ssoRoleSchema.optional(),
    enabled: z.boolean().optional(),
    issuer: urlSchema,
    clientId: z.string().trim().min(1).max(1024),
    clientSecret: z.string().min(1).max(4096),
  }),
]);

const changeBodySchema = z
  .strictObject({
    name: nameSchema.optional(),
    defaultRole: ssoRoleSchema.optional(),
    enabled: z.boolean().optional(),
    ...samlFields,
    issuer: urlSchema.optional(),
    clientId: z.string().trim().min(1).max(1024).optional(),
    clientSecret: z.string().min(1).max(4096).optional(),
  })
  .refine((change) => Object.keys(change).length > 0, { message: 'give at least one field to change' });

const settingsViewSchema = z.object({
  ssoRequired: z.boolean(),
  enabledConnections: z.int(),
});

/** What the routes need from the composition. */
export interface SsoRoutesOptions {
  announce: AnnounceSsoChange;
}

/**
 * `/v1/orgs/{orgId}/sso`: the organization's SSO connections (SAML 2.0, OpenID Connect) and its
 * "require SSO" setting. Admins and owners only; every change is audited (`sso.*`) and announced
 * as `security.sso_changed` in its transaction. servers/api/README.md, Organization SSO.
 */
export default async function ssoRoutes(fastify: FastifyInstance, options: SsoRoutesOptions) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { publicUrl, webhookAllowedHosts } = fastify.configuration;
  const policy = createDestinationPolicy(webhookAllowedHosts);
  const fetchSafely = createPolicyFetch(policy);
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);
  const serviceProvider = (id: string) => samlServiceProvider(publicUrl, id);
  const view = (connection: SsoConnection) => toConnectionView(connection, publicUrl, serviceProvider);

  async function change(
    request: FastifyRequest,
    organizationId: string,
    record: AuditRecord,
    announced: Omit<SsoChange, 'organizationId' | 'actor'>,
    transaction: Transaction<Database>,
  ) {
    const person = personOf(request);
    await recordAudit(
      transaction,
      organizationId,
      { type: 'user', id: person.userId },
      auditOrigin(request),
      record,
    );
    const actor = (await findUserById(transaction, person.userId))?.email ?? person.userId;
    await options.announce(transaction, { organizationId, actor, ...announced });
  }

  async function checkIssuer(issuer: string, clientId: string, clientSecret: string) {
    const refusal = await issuerRefusal(issuer, policy, webhookAllowedHosts);
    if (refusal !== undefined) throw invalid(`issuer: ${refusal}`);
    // Discovery now, so a connection that cannot work is refused when it is made.
    await oidcConfiguration({ issuer, clientId, clientSecret }, `check:${createId('sso')}`, fetchSafely);
  }

  async function samlProvider(body: {
    metadataXml?: string | undefined;
    entityId?: string | undefined;
    ssoUrl?: string | undefined;
    certificates?: string[] | undefined;
  }): Promise<SamlIdentityProvider | undefined> {
    if (body.metadataXml !== undefined) {
      if (body.entityId !== undefined || body.ssoUrl !== undefined || body.certificates !== undefined)
        throw invalid('Give metadataXml, or entityId, ssoUrl and certificates: not both');
      const parsed = parseIdpMetadata(body.metadataXml);
      return checkedProvider(parsed);
    }
    if (body.entityId === undefined && body.ssoUrl === undefined && body.certificates === undefined)
      return undefined;
    if (body.entityId === undefined || body.ssoUrl === undefined || body.certificates === undefined)
      throw invalid('A SAML identity provider needs entityId, ssoUrl and certificates (or metadataXml)');
    return checkedProvider({ entityId: body.entityId, ssoUrl: body.ssoUrl, certificates: body.certificates });
  }

  function checkedProvider(provider: SamlIdentityProvider): SamlIdentityProvider {
    let url: URL;
    try {
      url = new URL(provider.ssoUrl);
    } catch {
      throw invalid('ssoUrl is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('ssoUrl must be an https URL');
    if (provider.certificates.length === 0)
      throw invalid('A SAML identity provider needs a signing certificate');
    return { ...provider, certificates: provider.certificates.map(normalizeCertificate) };
  }

  routes.get(
    '/:orgId/sso',
    {
      config: { administer: true },
      schema: {
        summary: "The organization's SSO connections (never a client secret)",
        params: orgParams,
        response: {
          200: z.object({ items: z.array(connectionViewSchema) }),
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => ({ items: (await listConnections(database, request.params.orgId)).map(view) }),
  );

  routes.post(
    '/:orgId/sso',
    {
      config: { administer: true },
      schema: {
        summary:
          'Add an SSO connection: SAML 2.0 (IdP metadata, or entity id, SSO URL and certificates) or OpenID Connect',
        params: orgParams,
        body: createBodySchema,
        response: {
          201: connectionViewSchema,
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const organizationId = request.params.orgId;
      const body = request.body;
      const id = createId('sso');
      const common = {
        id,
        organizationId,
        name: body.name,
        defaultRole: body.defaultRole ?? ('member' as const),
        enabled: body.enabled ?? true,
      };
      let values: Parameters<typeof insertConnection>[1];
      if (body.type === 'saml') {
        const saml = await samlProvider(body);
        if (saml === undefined)
          throw invalid('A SAML connection needs metadataXml, or entityId, ssoUrl and certificates');
        values = { ...common, type: 'saml', saml };
      } else {
        await checkIssuer(body.issuer, body.clientId, body.clientSecret);
        values = {
          ...common,
          type: 'oidc',
          oidc: {
            issuer: body.issuer,
            clientId: body.clientId,
            clientSecretSealed: sealClientSecret(fastify.masterKey, id, body.clientSecret),
          },
        };
      }
      const connection = await database.transaction().execute(async (transaction) => {
        const created = await insertConnection(transaction, values);
        await change(
          request,
          organizationId,
          {
            action: 'sso.connection_created',
            target: { type: 'sso_connection', id },
            details: {
              type: created.type,
              name: created.name,
              defaultRole: created.default_role,
              enabled: created.enabled,
            },
          },
          {
            action: 'connection_created',
            connection: { id, name: created.name, type: created.type },
            summary: `added the ${created.type.toUpperCase()} connection "${created.name}" (new members join as ${created.default_role}${created.enabled ? '' : '; disabled'})`,
          },
          transaction,
        );
        return created;
      });
      return reply.code(201).send(view(connection));
    },
  );

  routes.get(
    '/:orgId/sso/settings',
    {
      config: { administer: true },
      schema: {
        summary: 'Whether the organization requires SSO of the people of its verified domains',
        params: orgParams,
        response: { 200: settingsViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => ({
      ssoRequired: await ssoRequired(database, request.params.orgId),
      enabledConnections: await enabledConnectionCount(database, request.params.orgId),
    }),
  );

  routes.patch(
    '/:orgId/sso/settings',
    {
      config: { administer: true },
      schema: {
        summary:
          'Require SSO (or not) of the people of the verified domains: their other ways in are refused, owners excepted',
        params: orgParams,
        body: z.strictObject({ ssoRequired: z.boolean() }),
        response: {
          200: settingsViewSchema,
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
        },
      },
    },
    async (request) => {
      const organizationId = request.params.orgId;
      const required = request.body.ssoRequired;
      return database.transaction().execute(async (transaction) => {
        await transaction
          .selectFrom('organizations')
          .select('id')
          .where('id', '=', organizationId)
          .forUpdate()
          .execute();
        const enabled = await enabledConnectionCount(transaction, organizationId);
        if (required && enabled === 0)
          throw new ApiError({
            status: 409,
            code: 'invalid',
            message: 'Add and enable an SSO connection before requiring SSO',
          });
        if ((await ssoRequired(transaction, organizationId)) !== required) {
          await setSsoRequired(transaction, organizationId, required, new Date());
          await change(
            request,
            organizationId,
            {
              action: 'sso.required_changed',
              target: { type: 'organization', id: organizationId },
              details: { ssoRequired: required },
            },
            {
              action: 'required_changed',
              summary: required
                ? 'now requires SSO of the people of its verified domains (owners keep their other ways in)'
                : 'no longer requires SSO',
            },
            transaction,
          );
        }
        return { ssoRequired: required, enabledConnections: enabled };
      });
    },
  );

  routes.get(
    '/:orgId/sso/:connectionId',
    {
      config: { administer: true },
      schema: {
        summary: 'One SSO connection (never its client secret)',
        params: connectionParams,
        response: { 200: connectionViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const connection = await findConnection(database, request.params.orgId, request.params.connectionId);
      if (connection === undefined) throw notFound(`No SSO connection ${request.params.connectionId}`);
      return view(connection);
    },
  );

  routes.patch(
    '/:orgId/sso/:connectionId',
    {
      config: { administer: true },
      schema: {
        summary:
          'Change an SSO connection: name, default role, enabled, its IdP settings or client credentials',
        params: connectionParams,
        body: changeBodySchema,
        response: {
          200: connectionViewSchema,
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { orgId: organizationId, connectionId } = request.params;
      const body = request.body;
      const existing = await findConnection(database, organizationId, connectionId);
      if (existing === undefined) throw notFound(`No SSO connection ${connectionId}`);
      const patch: ConnectionChange = {
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.defaultRole === undefined ? {} : { defaultRole: body.defaultRole }),
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      };
      const samlGiven = [body.metadataXml, body.entityId, body.ssoUrl, body.certificates].some(
        (v) => v !== undefined,
      );
      const oidcGiven = [body.issuer, body.clientId, body.clientSecret].some((v) => v !== undefined);
      if (existing.type === 'oidc' && samlGiven)
        throw invalid('This is an OpenID connection: SAML fields do not apply');
      if (existing.type === 'saml' && oidcGiven)
        throw invalid('This is a SAML connection: OpenID fields do not apply');
      if (samlGiven) patch.saml = await samlProvider(body);
      if (oidcGiven) {
        const issuer = body.issuer ?? existing.oidc_issuer ?? '';
        const clientId = body.clientId ?? existing.oidc_client_id ?? '';
        if (body.issuer !== undefined || body.clientId !== undefined)
          await checkIssuer(issuer, clientId, body.clientSecret ?? 'unchanged');
        if (body.issuer !== undefined) patch.oidcIssuer = body.issuer;
        if (body.clientId !== undefined) patch.oidcClientId = body.clientId;
        if (body.clientSecret !== undefined)
          patch.oidcClientSecretSealed = sealClientSecret(fastify.masterKey, connectionId, body.clientSecret);
      }
      const changed = Object.keys(body).filter((key) => key !== 'clientSecret' && key !== 'metadataXml');
      return database.transaction().execute(async (transaction) => {
        if (body.enabled === false)
          await refuseLastConnectionWhileRequired(transaction, organizationId, connectionId);
        const updated = await updateConnection(transaction, organizationId, connectionId, patch, new Date());
        if (updated === undefined) throw notFound(`No SSO connection ${connectionId}`);
        const fields = [
          ...changed,
          ...(body.clientSecret === undefined ? [] : ['clientSecret']),
          ...(body.metadataXml === undefined ? [] : ['metadataXml']),
        ];
        await change(
          request,
          organizationId,
          {
            action: 'sso.connection_updated',
            target: { type: 'sso_connection', id: connectionId },
            details: {
              fields,
              ...(body.defaultRole === undefined ? {} : { defaultRole: body.defaultRole }),
              ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
            },
          },
          {
            action: 'connection_updated',
            connection: { id: connectionId, name: updated.name, type: updated.type },
            summary: `changed the ${updated.type.toUpperCase()} connection "${updated.name}" (${fields.join(', ')})`,
          },
          transaction,
        );
        return view(updated);
      });
    },
  );

  async function refuseLastConnectionWhileRequired(
    transaction: Transaction<Database>,
    organizationId: string,
    connectionId: string,
  ) {
    await transaction
      .selectFrom('organizations')
      .select('id')
      .where('id', '=', organizationId)
      .forUpdate()
      .execute();
    if (
      (await ssoRequired(transaction, organizationId)) &&
      (await enabledConnectionCount(transaction, organizationId, connectionId)) === 0
    )
      throw new ApiError({
        status: 409,
        code: 'invalid',
        message:
          'The organization requires SSO and this is its last enabled connection: stop requiring SSO first',
      });
  }

  routes.delete(
    '/:orgId/sso/:connectionId',
    {
      config: { administer: true },
      schema: {
        summary: 'Delete an SSO connection (its linked identities go with it)',
        params: connectionParams,
        response: { 204: z.null(), 403: errorBodySchema, 404: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { orgId: organizationId, connectionId } = request.params;
      await database.transaction().execute(async (transaction) => {
        await refuseLastConnectionWhileRequired(transaction, organizationId, connectionId);
        const deleted = await deleteConnection(transaction, organizationId, connectionId);
        if (deleted === undefined) throw notFound(`No SSO connection ${connectionId}`);
        await change(
          request,
          organizationId,
          {
            action: 'sso.connection_deleted',
            target: { type: 'sso_connection', id: connectionId },
            details: { type: deleted.type, name: deleted.name },
          },
          {
            action: 'connection_deleted',
            connection: { id: connectionId, name: deleted.name, type: deleted.type },
            summary: `deleted the ${deleted.type.toUpperCase()} connection "${deleted.name}"`,
          },
          transaction,
        );
      });
      return reply.code(204).send(null);
    },
  );
}
