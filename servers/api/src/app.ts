import swagger from '@fastify/swagger';
import { dashboardDirectory } from '@svc/dashboard';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  isResponseSerializationError,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
} from 'fastify-type-provider-zod';
import type { Transaction } from 'kysely';
import meRoutes from './modules/accounts/me-routes.ts';
import mfaRoutes from './modules/accounts/mfa-routes.ts';
import { findLiveSession } from './modules/accounts/repository.ts';
import accountRoutes from './modules/accounts/routes.ts';
import aiChatRoutes from './modules/ai/chat-routes.ts';
import { issueExplainRoutes, sessionExplainRoutes } from './modules/ai/explain-routes.ts';
import aiJobRoutes from './modules/ai/job-routes.ts';
import { questionInterpreter } from './modules/ai/search-question.ts';
import aiSettingsRoutes from './modules/ai/settings-routes.ts';
import aiUsageRoutes from './modules/ai/usage-routes.ts';
import analysisRoutes from './modules/analysis/routes.ts';
import assetRoutes, { shareAssetRoutes } from './modules/assets/routes.ts';
import { createBilling } from './modules/billing/billing.ts';
import licenseRoutes from './modules/billing/license-routes.ts';
import { createNoBillingProvider } from './modules/billing/provider.ts';
import billingRoutes from './modules/billing/routes.ts';
import stripeWebhookRoutes from './modules/billing/stripe-webhook-routes.ts';
import callRoutes from './modules/calls/routes.ts';
import funnelRoutes from './modules/insights/funnel-routes.ts';
import overviewRoutes from './modules/insights/overview-routes.ts';
import releaseRoutes from './modules/insights/release-routes.ts';
import insightRoutes from './modules/insights/routes.ts';
import issueRoutes from './modules/issues/routes.ts';
import mcpRoutes from './modules/mcp/routes.ts';
import inboxRoutes from './modules/notifications/inbox-routes.ts';
import { notifyAccountEvent, notifySecurityEvent } from './modules/notifications/index.ts';
import notificationRoutes from './modules/notifications/routes.ts';
import oauthIdentityRoutes from './modules/oauth/identity-routes.ts';
import oauthRoutes from './modules/oauth/routes.ts';
import invitationRoutes from './modules/orgs/invitation-routes.ts';
import organizationRoutes from './modules/orgs/routes.ts';
import { passkeyAuthRoutes, passkeyMeRoutes } from './modules/passkeys/index.ts';
import { releaseDsarLeases } from './modules/privacy/dsar-repository.ts';
import dsarRoutes from './modules/privacy/dsar-routes.ts';
import { createDsarWorker } from './modules/privacy/dsar-worker.ts';
import erasureRoutes from './modules/privacy/erasure-routes.ts';
import { projectAccess } from './modules/projects/access.ts';
import { authenticateApiToken } from './modules/projects/api-tokens.ts';
import configRoutes from './modules/projects/config-routes.ts';
import organizationProjectRoutes, { type CreatedToken } from './modules/projects/organization-routes.ts';
import { projectKeysPlugin } from './modules/projects/project-keys.ts';
import projectRoutes from './modules/projects/routes.ts';
import digestRoutes from './modules/reports/routes.ts';
import searchRoutes from './modules/search/routes.ts';
import ingestRoutes from './modules/sessions/ingest-routes.ts';
import readingRoutes from './modules/sessions/reading-routes.ts';
import sourcemapRoutes from './modules/sourcemaps/routes.ts';
import ssoAuthRoutes from './modules/sso/auth-routes.ts';
import domainRoutes from './modules/sso/domain-routes.ts';
import type { SsoChange } from './modules/sso/index.ts';
import ssoRoutes from './modules/sso/routes.ts';
import otlpRoutes, { sessionTraceRoutes } from './modules/traces/routes.ts';
import { createUsageReporter } from './modules/usage/index.ts';
import usageRoutes from './modules/usage/routes.ts';
import type { Database } from './platform/database/schema.ts';
import type { Project } from './platform/database/tables/projects.table.ts';
import { authenticationPlugin } from './platform/http/authentication.ts';
import { ApiError } from './platform/http/errors.ts';
import healthRoutes from './platform/http/health-routes.ts';
import { acceptJsonBodies } from './platform/http/json-bodies.ts';
import { loadWebApp, securityHeadersPlugin } from './platform/http/web-app.ts';
import { type Services, servicesPlugin } from './services.ts';

/**
 * The application as a Fastify plugin: external services → app plugins → routes. It never opens
 * or closes the services it is given (the process in server.ts owns them), so tests build it
 * around a test database and call `app.inject`.
 */
async function app(fastify: FastifyInstance, services: Services) {
  fastify.setValidatorCompiler(validatorCompiler);
  fastify.setSerializerCompiler(serializerCompiler);

  await fastify.register(swagger, {
    openapi: {
      info: {
        title: 'svc: session replay and call quality',
        version: '0.2.0',
        description:
          'REST API of the reference server. Errors are { error, code }; lists are { items, nextCursor? }.',
      },
      components: {
        securitySchemes: {
          apiToken: { type: 'http', scheme: 'bearer' },
          session: { type: 'apiKey', in: 'cookie', name: 'service_session' },
        },
      },
    },
    transform: jsonSchemaTransform,
  });

  await fastify.register(servicesPlugin, services);
  await fastify.register(securityHeadersPlugin);
  await fastify.register(authenticationPlugin, {
    bearer: (token) => authenticateApiToken(fastify.database, token),
    // Signed-in people, and their projects through their organizations' memberships.
    session: (secret) => findLiveSession(fastify.database, secret),
    projectAccess: (person, projectId) => projectAccess(fastify.database, person, projectId),
  });
  await fastify.register(projectKeysPlugin);

  acceptJsonBodies(fastify);
  fastify.setErrorHandler(handleError);
  const webApp = await loadWebApp(dashboardDirectory);
  fastify.setNotFoundHandler((request, reply) => {
    // A browser asking for a page of the dashboard (a deep link) gets the app.
    if (webApp.answer(request, reply)) return;
    reply
      .code(404)
      .send({ error: `No route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
  });

  await fastify.register(healthRoutes);
  await fastify.register(accountRoutes, { prefix: '/auth' });
  await fastify.register(meRoutes, { prefix: '/v1/me' });
  await fastify.register(mfaRoutes, { prefix: '/v1/me/mfa' });
  await fastify.register(passkeyMeRoutes, { prefix: '/v1/me/passkeys' });
  await fastify.register(passkeyAuthRoutes, { prefix: '/auth/passkeys' });
  // Sign-in with Google, Microsoft and GitHub, and the identities linked to one's account.
  await fastify.register(oauthRoutes, { prefix: '/auth/oauth' });
  await fastify.register(oauthIdentityRoutes, { prefix: '/v1/me/identities' });
  await fastify.register(invitationRoutes, { prefix: '/auth/invitations' });
  await fastify.register(organizationRoutes, { prefix: '/v1/orgs' });
  // Organization SSO: connections and "require SSO" (/v1/orgs/{orgId}/sso), sign-in (/auth/sso).
  await fastify.register(ssoRoutes, {
    prefix: '/v1/orgs',
    announce: (transaction, change) => announceSsoChanged(transaction, change, services.configuration.appUrl),
  });
  await fastify.register(ssoAuthRoutes, { prefix: '/auth/sso', seatLimits: fastify.planSeatsAndProjects });
  await fastify.register(domainRoutes, { prefix: '/v1/orgs' }); // /v1/orgs/{orgId}/domains
  await fastify.register(organizationProjectRoutes, {
    prefix: '/v1/orgs',
    onTokenCreated: (transaction, project, token) =>
      announceTokenCreated(transaction, project, token, services.configuration.appUrl),
  });
  // Billing: the license, plans, the payment provider (none, or Stripe with SVC_STRIPE_*).
  const { stripe } = services.configuration;
  const billing = createBilling({
    database: fastify.database,
    // The stripe package is loaded only when Stripe is configured (it adds ~0.4 s to a start).
    provider:
      stripe === undefined
        ? createNoBillingProvider()
        : (await import('./modules/billing/stripe-provider.ts')).createStripeProvider(stripe),
    licensePublicKey: services.licensePublicKey,
  });
  // Each ended day's usage to Stripe's meters (the metrics of SVC_STRIPE_METER_EVENTS), hourly.
  if (stripe !== undefined && services.configuration.usageWorker) {
    const reporter = createUsageReporter({
      database: fastify.database,
      report: billing.reportUsage,
      metrics: Object.keys(stripe.meterEvents),
      log: fastify.log.child({ worker: 'usage-reports' }),
    });
    fastify.addHook('onReady', async () => reporter.start());
    fastify.addHook('onClose', async () => reporter.stop());
  }
  await fastify.register(billingRoutes, { prefix: '/v1/orgs', billing }); // /v1/orgs/{orgId}/billing…
  await fastify.register(licenseRoutes, { prefix: '/v1', billing }); // /v1/license
  // Stripe's events; each change emits billing.event to the organization's projects (notifications).
  await fastify.register(stripeWebhookRoutes, {
    prefix: '/v1/billing',
    provider: billing.provider,
    onBillingEvent: async (transaction, organizationId, event) => {
      await notifyAccountEvent(transaction, organizationId, event, new Date());
    },
  });
  await fastify.register(configRoutes, {
    prefix: '/v1',
    recordingPaused: async (project: Project) =>
      (await fastify.usageGate.state(project.organization_id)).refusedSince !== undefined,
  });
  await fastify.register(ingestRoutes, { prefix: '/v1' });
  await fastify.register(projectRoutes, { prefix: '/v1/projects' });
  await fastify.register(readingRoutes); // /v1/sessions, /v1/visits, /share
  await fastify.register(otlpRoutes, { prefix: '/v1/otlp' });
  await fastify.register(sessionTraceRoutes, { prefix: '/v1/sessions' });
  await fastify.register(callRoutes, { prefix: '/v1/calls' });
  await fastify.register(issueRoutes); // /v1/issues, /v1/errors
  await fastify.register(insightRoutes, { prefix: '/v1' }); // /v1/vitals, /v1/heatmaps
  await fastify.register(releaseRoutes, { prefix: '/v1/releases' });
  await fastify.register(overviewRoutes, { prefix: '/v1/dashboard' });
  await fastify.register(funnelRoutes, { prefix: '/v1/funnels' });
  await fastify.register(notificationRoutes, { prefix: '/v1/notifications' });
  await fastify.register(inboxRoutes, { prefix: '/v1/inbox' });
  await fastify.register(sourcemapRoutes); // /v1/sourcemaps, /v1/symbolicate
  await fastify.register(assetRoutes); // /v1/sessions/{id}/assets, /v1/assets/{sha256}
  await fastify.register(shareAssetRoutes); // /share/{token}/assets
  await fastify.register(analysisRoutes, { prefix: '/v1/sessions' }); // transcript, repro
  await fastify.register(sessionExplainRoutes, { prefix: '/v1/sessions' }); // summary, explain
  await fastify.register(issueExplainRoutes, { prefix: '/v1/issues' }); // explain, draft-pr
  await fastify.register(aiJobRoutes, { prefix: '/v1/ai' }); // /v1/ai/jobs/{id}
  await fastify.register(digestRoutes, { prefix: '/v1/ai' }); // /v1/ai/digests
  await fastify.register(aiUsageRoutes, { prefix: '/v1/ai' }); // /v1/ai/usage, /v1/ai/feedback
  await fastify.register(aiChatRoutes, { prefix: '/v1/ai' }); // /v1/ai/chat (server-sent events)
  await fastify.register(aiSettingsRoutes, { prefix: '/v1/orgs' }); // /v1/orgs/{orgId}/ai/settings
  await fastify.register(usageRoutes, { prefix: '/v1/orgs' }); // /v1/orgs/{orgId}/usage, /billing/caps
  await fastify.register(erasureRoutes, {
    prefix: '/v1/orgs',
    onCreated: () => fastify.erasureWorker.wake(),
  }); // /v1/orgs/{orgId}/erasure
  await fastify.register(mcpRoutes); // /mcp (Streamable HTTP)
  // Access requests of end users: their job runs with the other job workers (SVC_CALL_WORKER).
  const dsarWorker = createDsarWorker({
    database: fastify.database,
    log: fastify.log.child({ worker: 'dsar' }),
  });
  if (services.configuration.callWorker) {
    fastify.addHook('onReady', async () => {
      // The embedded store is one process: a lease still held is from a process that died.
      if (services.configuration.database.engine === 'pglite') await releaseDsarLeases(fastify.database);
      dsarWorker.start();
    });
    fastify.addHook('onClose', async () => dsarWorker.stop());
  }
  await fastify.register(dsarRoutes, { prefix: '/v1/orgs', onQueued: () => dsarWorker.wake() }); // /v1/orgs/{orgId}/dsar
  // /v1/search; a question in words goes through the model (ai), passed in.
  await fastify.register(searchRoutes, { interpret: questionInterpreter(fastify) });

  fastify.get('/openapi.json', { schema: { hide: true } }, async () => fastify.swagger());
  await fastify.register(webApp.routes);
}

/**
 * `security.token_created`, to the inbox of the token's project and to the webhooks of its
 * `security` rules, in the transaction that creates the token.
 */
async function announceTokenCreated(
  transaction: Transaction<Database>,
  project: Project,
  token: CreatedToken,
  appUrl: string,
): Promise<void> {
  const expiry = token.expiresAt === undefined ? 'never expires' : `expires ${token.expiresAt}`;
  await notifySecurityEvent(
    transaction,
    project,
    {
      type: 'security.token_created',
      data: {
        title: `API token "${token.name}" created`,
        summary: `${token.createdBy} created the API token "${token.name}" (${token.id}) for project "${project.name}" with the scopes ${token.scopes.join(', ')}; it ${expiry}. If this was not expected, revoke it.`,
        severity: 'medium',
        counts: { scopes: token.scopes.length },
        links: { tokens: `${appUrl}/orgs/${project.organization_id}/tokens` },
      },
    },
    new Date(),
  );
}

/**
 * `security.sso_changed`, to the inbox of every project of the organization and to the webhooks
 * of their `security` rules, in the transaction of the change.
 */
async function announceSsoChanged(
  transaction: Transaction<Database>,
  change: SsoChange,
  appUrl: string,
): Promise<void> {
  const projects = await transaction
    .selectFrom('projects')
    .select(['id', 'organization_id'])
    .where('organization_id', '=', change.organizationId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  for (const project of projects)
    await notifySecurityEvent(
      transaction,
      project,
      {
        type: 'security.sso_changed',
        data: {
          title: 'SSO settings changed',
          summary: `${change.actor} ${change.summary}. If this was not expected, check the organization's SSO settings.`,
          severity: 'high',
          counts: {},
          links: { sso: `${appUrl}/orgs/${change.organizationId}/sso` },
        },
      },
      new Date(),
    );
}

/**
 * Fastify's request log lines, as this server writes them: one line per request once it is
 * answered (Fastify's default is two), and no secrets from the URL (a share link's token is a
 * bearer credential, see {@link redactUrl}).
 */
class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: redactUrl(request.url), statusCode: reply.statusCode };
    if (reply.statusCode >= 500) reply.log.error({ ...line, err: error }, error.message);
    else reply.log.info({ ...line, err: error }, error.message);
  }
}

/**
 * A request URL as the log may keep it: the token of `/share/{token}` is replaced. Other URLs
 * carry ids and public project keys only (API tokens travel in a header).
 *
 * @example
 * ```ts
 * redactUrl('/share/shr_abc/chunks/0'); // '/share/[token]/chunks/0'
 * ```
 */
function redactUrl(url: string): string {
  return url.replace(/^\/+share\/+[^/?#]+/, '/share/[token]');
}

/** Every error becomes `{ error, code }`; 5xx messages are masked (the log keeps the detail). */
function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (ApiError.isInstance(error)) {
    return reply.code(error.status).send({ error: error.message, code: error.code });
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const details = error.validation
      .slice(0, 5)
      .map((issue) => `${issue.instancePath || error.validationContext || 'request'}: ${issue.message}`)
      .join('; ');
    return reply
      .code(400)
      .send({ error: `Invalid ${error.validationContext ?? 'request'}: ${details}`, code: 'invalid' });
  }
  if (isResponseSerializationError(error)) {
    request.log.error({ err: error }, 'response did not match its schema');
    return reply.code(500).send({ error: 'Internal server error', code: 'internal' });
  }
  const status = error.statusCode ?? 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ error: 'Internal server error', code: 'internal' });
  }
  // Fastify's own 4xx: bad JSON, body too large (413), unsupported media type (415), ...
  const code = status === 401 || status === 403 ? 'unauthorized' : status === 404 ? 'not_found' : 'invalid';
  return reply.code(status).send({ error: error.message, code });
}

/**
 * Builds a ready Fastify instance around the services, with the server's defaults (JSON logs,
 * request ids, bounded bodies). `fastifyOptions` overrides them (tests pass `logger: false`).
 *
 * @example
 * ```ts
 * const fastify = await buildApp(services, { logger: false });
 * const response = await fastify.inject({ method: 'GET', url: '/healthz' });
 * ```
 */
export async function buildApp(
  services: Services,
  fastifyOptions: FastifyServerOptions = {},
): Promise<FastifyInstance> {
  const fastify = Fastify({
    logger: { level: services.configuration.logLevel },
    logController: new RequestLogController(),
    bodyLimit: 1024 * 1024,
    requestIdHeader: 'x-request-id',
    return503OnClosing: true,
    // `/v1/calls/` and `//v1/calls` are `/v1/calls`, as clients that join URLs expect.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    // The router's own errors (a malformed URL, a path parameter over maxParamLength) answer in
    // the API's error shape too, without echoing the input.
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode ?? 400;
      (reply as FastifyReply).code(status).send({
        error: status === 414 ? 'A path parameter is too long' : 'The URL is malformed',
        code: 'invalid',
      });
    },
    ...fastifyOptions,
  });
  await fastify.register(app, services);
  await fastify.ready();
  return fastify;
}
