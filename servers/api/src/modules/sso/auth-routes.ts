import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { SsoConnection } from '../../platform/database/tables/sso.table.ts';
import { createDestinationPolicy } from '../../platform/http/destination-policy.ts';
import { ApiError, invalid, notFound } from '../../platform/http/errors.ts';
import { createPolicyFetch } from '../../platform/http/policy-fetch.ts';
import { createLimiter, signIn } from '../accounts/index.ts';
import type { SeatAndProjectLimits } from '../orgs/index.ts';
import { type AssertedPerson, auditRefusal, resolveSsoPerson, type SsoRefusal } from './complete.ts';
import {
  authorizationRequest,
  issuerRefusal,
  newBrowserSecret,
  oidcConfiguration,
  redeemCallback,
} from './oidc.ts';
import {
  domainOf,
  findConnectionById,
  firstEnabledConnection,
  insertOidcFlow,
  OIDC_FLOW_LIFETIME_MS,
  takeOidcFlow,
  verifiedDomainOwner,
} from './repository.ts';
import {
  SamlRefusal,
  samlServiceProvider,
  serviceProviderMetadata,
  startSamlSignIn,
  verifySamlResponse,
} from './saml/index.ts';
import { openClientSecret } from './secrets.ts';

/** The cookie binding an OpenID sign-in to the browser that started it. */
const FLOW_COOKIE = 'svc_sso_flow';

/** Lookups per client address (`GET /auth/sso/lookup`). */
const LOOKUP_LIMIT = { max: 60, windowMs: 15 * 60_000 };

/** How many SAML responses one client address may post in 15 minutes. */
const ACS_LIMIT = { max: 60, windowMs: 15 * 60_000 };

const connectionParams = z.object({ connectionId: z.string().max(64) });

export interface SsoAuthRoutesOptions {
  /** The seats the organization's plan allows (just-in-time membership counts them). */
  seatLimits: (organizationId: string) => Promise<SeatAndProjectLimits>;
}

/**
 * `/auth/sso`: which connection serves an address (`/lookup`), and the sign-in through a
 * connection: `/start` (to the IdP), the OpenID `/callback`, the SAML `/acs` (POST binding) and
 * the SAML service provider's `/metadata`. Public routes. A refused sign-in is audited in the
 * organization's trail (`sso.sign_in_refused`) and redirected to `<app>/login?error=sso&reason=…`,
 * never a session. servers/api/README.md, Organization SSO.
 */
export default async function ssoAuthRoutes(fastify: FastifyInstance, options: SsoAuthRoutesOptions) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { publicUrl, appUrl, webhookAllowedHosts } = fastify.configuration;
  const policy = createDestinationPolicy(webhookAllowedHosts);
  const fetchSafely = createPolicyFetch(policy);
  const secure = publicUrl.startsWith('https:');
  await fastify.register(rateLimit, { global: false });
  const lookupPerAddress = createLimiter(
    fastify,
    'sso-lookup:ip',
    LOOKUP_LIMIT,
    'SSO lookups from this address',
  );
  const acsPerAddress = createLimiter(fastify, 'sso-acs:ip', ACS_LIMIT, 'SSO responses from this address');

  // The IdP posts its SAML response as a form (the POST binding), cross-site: this route takes
  // forms, and it is not behind refuseForeignOrigins (the IdP's page is another origin by design).
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 1_048_576 },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  const serviceProvider = (id: string) => samlServiceProvider(publicUrl, id);

  async function enabledConnection(connectionId: string): Promise<SsoConnection> {
    const connection = await findConnectionById(database, connectionId);
    if (connection === undefined || !connection.enabled) throw notFound(`No SSO connection ${connectionId}`);
    return connection;
  }

  function identityProvider(connection: SsoConnection) {
    return {
      entityId: connection.saml_idp_entity_id ?? '',
      ssoUrl: connection.saml_sso_url ?? '',
      certificates: connection.saml_certificates,
    };
  }

  function clientSettings(connection: SsoConnection) {
    return {
      issuer: connection.oidc_issuer ?? '',
      clientId: connection.oidc_client_id ?? '',
      clientSecret: openClientSecret(
        fastify.masterKey,
        connection.id,
        connection.oidc_client_secret_sealed ?? new Uint8Array(),
      ),
    };
  }

  async function refuse(
    request: FastifyRequest,
    reply: FastifyReply,
    connection: SsoConnection,
    refusal: SsoRefusal,
  ) {
    await auditRefusal(database, connection, auditOrigin(request), refusal);
    request.log.info(
      { connectionId: connection.id, reason: refusal.reason },
      `SSO sign-in refused: ${refusal.message}`,
    );
    const target = new URL(`${appUrl}/login`);
    target.searchParams.set('error', 'sso');
    target.searchParams.set('reason', refusal.reason);
    return reply.redirect(target.href, 303);
  }

  async function complete(
    request: FastifyRequest,
    reply: FastifyReply,
    connection: SsoConnection,
    asserted: AssertedPerson,
  ) {
    const resolved = await resolveSsoPerson(
      database,
      connection,
      asserted,
      auditOrigin(request),
      options.seatLimits,
    );
    if ('refusal' in resolved) return refuse(request, reply, connection, resolved.refusal);
    try {
      await signIn(database, publicUrl, request, reply, resolved.user, 'sso');
    } catch (error) {
      if (ApiError.isInstance(error))
        return refuse(request, reply, connection, { reason: 'gate', message: error.message });
      throw error;
    }
    await recordAudit(
      database,
      connection.organization_id,
      { type: 'user', id: resolved.user.id },
      auditOrigin(request),
      {
        action: 'sso.signed_in',
        target: { type: 'sso_connection', id: connection.id },
        details: { type: connection.type, subject: asserted.subject.slice(0, 256) },
      },
    );
    return reply.redirect(`${appUrl}/`, 303);
  }

  routes.get(
    '/lookup',
    {
      schema: {
        summary:
          'Which SSO connection serves an e-mail address’s verified domain (the same answer whether or not the person exists)',
        querystring: z.object({ email: z.email().max(254) }),
        response: {
          200: z.object({ connectionId: z.string().nullable(), startUrl: z.string().optional() }),
          400: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      await lookupPerAddress(request, reply, request.ip);
      // Only the domain decides: no account is looked up.
      const owner = await verifiedDomainOwner(database, domainOf(request.query.email));
      const connection =
        owner === undefined ? undefined : await firstEnabledConnection(database, owner.organizationId);
      if (connection === undefined) return { connectionId: null };
      return { connectionId: connection.id, startUrl: `${publicUrl}/auth/sso/${connection.id}/start` };
    },
  );

  routes.get(
    '/:connectionId/start',
    {
      schema: {
        // A browser's navigation (answered with a redirect), not an API call: see the README.
        hide: true,
        summary: 'Start a sign-in through an SSO connection: a redirect to the identity provider',
        params: connectionParams,
        response: { 302: z.null(), 400: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const connection = await enabledConnection(request.params.connectionId);
      const now = new Date();
      if (connection.type === 'saml') {
        const { redirectUrl } = await startSamlSignIn(
          database,
          connection.id,
          identityProvider(connection),
          serviceProvider(connection.id),
          now,
        );
        return reply.redirect(redirectUrl, 302);
      }
      const settings = clientSettings(connection);
      const refusal = await issuerRefusal(settings.issuer, policy, webhookAllowedHosts);
      if (refusal !== undefined) throw invalid(`The connection's issuer cannot be used: ${refusal}`);
      const configuration = await oidcConfiguration(
        settings,
        `${connection.id}:${connection.updated_at.getTime()}`,
        fetchSafely,
      );
      const browserSecret = newBrowserSecret();
      const authorization = await authorizationRequest(
        configuration,
        `${publicUrl}/auth/sso/${connection.id}/callback`,
        browserSecret,
      );
      await insertOidcFlow(database, {
        browserSecret,
        connectionId: connection.id,
        state: authorization.state,
        nonce: authorization.nonce,
        now,
      });
      reply.setCookie(FLOW_COOKIE, browserSecret, {
        httpOnly: true,
        sameSite: 'lax',
        secure,
        path: '/auth/sso',
        maxAge: OIDC_FLOW_LIFETIME_MS / 1000,
      });
      return reply.redirect(authorization.url, 302);
    },
  );

  routes.get(
    '/:connectionId/callback',
    {
      schema: {
        // A browser's navigation (answered with a redirect), not an API call: see the README.
        hide: true,
        summary:
          'The OpenID provider’s redirect back: the ID token validated, then a session and a redirect to the dashboard',
        params: connectionParams,
        querystring: z.record(z.string(), z.unknown()),
        response: { 303: z.null(), 400: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const connection = await enabledConnection(request.params.connectionId);
      if (connection.type !== 'oidc') throw notFound(`No OpenID connection ${connection.id}`);
      const browserSecret = request.cookies[FLOW_COOKIE];
      reply.clearCookie(FLOW_COOKIE, { path: '/auth/sso', httpOnly: true, sameSite: 'lax', secure });
      const query = request.query as Record<string, unknown>;
      if (typeof query.error === 'string')
        return refuse(request, reply, connection, {
          reason: 'idp_error',
          message: `The identity provider answered ${query.error.slice(0, 100)}: ${String(query.error_description ?? '').slice(0, 300)}`,
        });
      const flow =
        browserSecret === undefined || browserSecret.length > 100
          ? undefined
          : await takeOidcFlow(database, browserSecret, connection.id, new Date());
      if (browserSecret === undefined || flow === undefined)
        return refuse(request, reply, connection, {
          reason: 'flow',
          message: 'No sign-in under way in this browser (started elsewhere, expired or used)',
        });
      let asserted: AssertedPerson;
      try {
        const configuration = await oidcConfiguration(
          clientSettings(connection),
          `${connection.id}:${connection.updated_at.getTime()}`,
          fetchSafely,
        );
        asserted = await redeemCallback(configuration, new URL(request.url, publicUrl), {
          ...flow,
          browserSecret,
        });
      } catch (error) {
        return refuse(request, reply, connection, {
          reason: 'id_token',
          message: error instanceof Error ? error.message : String(error),
        });
      }
      return complete(request, reply, connection, asserted);
    },
  );

  routes.post(
    '/:connectionId/acs',
    {
      schema: {
        // A browser's navigation (answered with a redirect), not an API call: see the README.
        hide: true,
        summary:
          'SAML assertion consumer service (HTTP-POST binding): the IdP’s signed response, then a session',
        consumes: ['application/x-www-form-urlencoded'],
        params: connectionParams,
        body: z.object({
          SAMLResponse: z.string().min(1).max(1_000_000),
          RelayState: z.string().max(2000).optional(),
        }),
        response: { 303: z.null(), 400: errorBodySchema, 404: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      await acsPerAddress(request, reply, request.ip);
      const connection = await enabledConnection(request.params.connectionId);
      if (connection.type !== 'saml') throw notFound(`No SAML connection ${connection.id}`);
      let asserted: AssertedPerson;
      try {
        const assertion = await verifySamlResponse(
          database,
          connection.id,
          identityProvider(connection),
          serviceProvider(connection.id),
          request.body.SAMLResponse,
          new Date(),
        );
        asserted = {
          subject: assertion.nameId,
          email: assertion.email ?? (assertion.nameId.includes('@') ? assertion.nameId : undefined),
          name: assertion.name,
        };
      } catch (error) {
        if (!SamlRefusal.isInstance(error)) throw error;
        return refuse(request, reply, connection, { reason: error.reason, message: error.message });
      }
      return complete(request, reply, connection, asserted);
    },
  );

  routes.get(
    '/:connectionId/metadata',
    {
      schema: {
        summary: 'The SAML service provider’s metadata (XML), for the IdP’s admin',
        params: connectionParams,
        response: { 200: z.string(), 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const connection = await findConnectionById(database, request.params.connectionId);
      if (connection === undefined || connection.type !== 'saml')
        throw notFound(`No SAML connection ${request.params.connectionId}`);
      const xml = serviceProviderMetadata(serviceProvider(connection.id));
      return reply.type('application/samlmetadata+xml; charset=utf-8').send(xml);
    },
  );
}
