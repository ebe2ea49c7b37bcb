import { randomBytes } from 'node:crypto';
import type { CookieSerializeOptions } from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as client from 'openid-client';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import type { User } from '../../platform/database/tables/accounts.table.ts';
import type { OAuthProviderId } from '../../platform/database/tables/oauth.table.ts';
import { ApiError } from '../../platform/http/errors.ts';
import {
  createLimiter,
  createMfaChallenge,
  findUserByEmail,
  findUserById,
  hashPassword,
  insertUser,
  mfaEnabled,
  prospectiveUser,
  signIn,
} from '../accounts/index.ts';
import { createProviders, type FlowSecrets, type Provider, type ProviderProfile } from './providers.ts';
import { createFlow, linkIdentity, recordCreatedAccount, useFlow, useIdentity } from './repository.ts';

// `/auth/oauth`: sign-in with Google, Microsoft and GitHub (servers/api/README.md, Sign-in with
// Google, Microsoft and GitHub). Browser flows: every answer of `start` and `callback` is a
// redirect, to the provider or back to the dashboard (`<app>/login?error=…` when it failed).

/** The flow cookie: the PKCE verifier and the nonce, only for the browser that started the flow. */
const FLOW_COOKIE = 'service_oauth';

/** Sign-ins started per client address (each is a row and a redirect to the provider). */
const START_LIMIT = { max: 30, windowMs: 15 * 60_000 };

const providerParamsSchema = z.object({ provider: z.string().max(32) });
const redirectSchema = z.null().describe('A redirect (302): see the Location header');

/** A path of the dashboard (`/sessions?x=1`), never another site (`//evil.example`, `/\\evil`). */
export function safeReturnTo(value: string | undefined): string | undefined {
  if (value === undefined || value.length > 512) return undefined;
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(value) ? value : undefined;
}

function flowCookieOptions(publicUrl: string): CookieSerializeOptions {
  return {
    httpOnly: true,
    // Lax: sent on the provider's top-level redirect back to the callback.
    sameSite: 'lax',
    path: '/auth/oauth',
    secure: publicUrl.startsWith('https:'),
    maxAge: 10 * 60,
  };
}

function parseFlowCookie(value: string | undefined): FlowSecrets | undefined {
  if (value === undefined || value.length > 200) return undefined;
  const [codeVerifier, nonce, extra] = value.split('.');
  if (codeVerifier === undefined || nonce === undefined || extra !== undefined) return undefined;
  if (!/^[A-Za-z0-9_-]{43,128}$/.test(codeVerifier) || !/^[A-Za-z0-9_-]{16,128}$/.test(nonce))
    return undefined;
  return { codeVerifier, nonce };
}

/** Why a sign-in through a provider did not happen: the message the login page shows. */
class Refusal extends Error {}

export default async function oauthRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { appUrl, publicUrl } = fastify.configuration;
  const providers = createProviders(fastify.configuration.oauth, publicUrl);

  await fastify.register(rateLimit, { global: false });
  const startsPerAddress = createLimiter(
    fastify,
    'oauth-start:ip',
    START_LIMIT,
    'sign-ins started from this address',
  );

  /** Back to the dashboard's login page with the message it shows. */
  function toLogin(reply: FastifyReply, message: string, extra: Record<string, string> = {}) {
    const query = new URLSearchParams({ error: message, ...extra });
    return reply.redirect(`${appUrl}/login?${query}`, 302);
  }

  function providerOf(id: string): Provider | undefined {
    return providers.get(id as OAuthProviderId);
  }

  routes.get(
    '/providers',
    {
      schema: {
        summary: 'The sign-in providers this server offers (each configured with a client id)',
        description:
          '`{ providers: [{ id, name, startUrl }] }`: the dashboard shows a button for each. `startUrl` is `GET /auth/oauth/{id}/start`.',
        response: {
          200: z.object({
            providers: z.array(
              z.object({
                id: z.enum(['google', 'microsoft', 'github']),
                name: z.string(),
                startUrl: z.string(),
              }),
            ),
          }),
        },
      },
    },
    async () => ({
      providers: [...providers.values()].map((provider) => ({
        id: provider.id,
        name: provider.name,
        startUrl: `/auth/oauth/${provider.id}/start`,
      })),
    }),
  );

  routes.get(
    '/:provider/start',
    {
      schema: {
        summary: 'Start signing in with a provider (google, microsoft, github): a redirect to it',
        description:
          'A browser navigation, answered 302 to the provider with state, PKCE (S256) and, for OpenID Connect, a nonce; the flow cookie (`service_oauth`, HttpOnly) binds the flow to this browser for 10 minutes. `returnTo`: a path of the dashboard to land on. A provider not configured: 302 to `<app>/login?error=…`.',
        params: providerParamsSchema,
        querystring: z.object({ returnTo: z.string().max(2048).optional() }),
        response: { 302: redirectSchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      const provider = providerOf(request.params.provider);
      if (provider === undefined)
        return toLogin(
          reply,
          `Signing in with "${request.params.provider.slice(0, 32)}" is not set up on this server`,
        );
      try {
        await startsPerAddress(request, reply, request.ip);
      } catch (error) {
        if (ApiError.isInstance(error)) return toLogin(reply, error.message);
        throw error;
      }
      const state = client.randomState();
      const secrets: FlowSecrets = {
        codeVerifier: client.randomPKCECodeVerifier(),
        nonce: client.randomNonce(),
      };
      let location: URL;
      try {
        location = await provider.authorizationUrl(state, secrets);
      } catch (error) {
        request.log.warn({ err: error, provider: provider.id }, 'oauth provider unavailable');
        return toLogin(reply, `${provider.name} cannot be reached right now: try again in a moment`);
      }
      const cookie = `${secrets.codeVerifier}.${secrets.nonce}`;
      await createFlow(database, {
        state,
        browserSecret: cookie,
        provider: provider.id,
        returnTo: safeReturnTo(request.query.returnTo),
      });
      reply.setCookie(FLOW_COOKIE, cookie, flowCookieOptions(publicUrl));
      return reply.redirect(location.href, 302);
    },
  );

  routes.get(
    '/:provider/callback',
    {
      schema: {
        summary:
          "The provider's redirect back: signs in, links or creates the account, then back to the dashboard",
        description:
          'The redirect URI registered at the provider (`<SVC_PUBLIC_URL>/auth/oauth/{provider}/callback`). Needs the flow cookie of the browser that started it and a live, unused state. Answers 302: to `returnTo` (or `/`) on the dashboard signed in, to `<app>/login?next=…#mfaToken=…` when two-factor sign-in is on, or to `<app>/login?error=…`.',
        params: providerParamsSchema,
        querystring: z.looseObject({
          code: z.string().max(4096).optional(),
          state: z.string().max(512).optional(),
          error: z.string().max(256).optional(),
          error_description: z.string().max(1024).optional(),
        }),
        response: { 302: redirectSchema },
      },
    },
    async (request, reply) => {
      const provider = providerOf(request.params.provider);
      const cookie = request.cookies[FLOW_COOKIE];
      reply.clearCookie(FLOW_COOKIE, flowCookieOptions(publicUrl));
      if (provider === undefined)
        return toLogin(
          reply,
          `Signing in with "${request.params.provider.slice(0, 32)}" is not set up on this server`,
        );
      const { state, error } = request.query;
      const secrets = parseFlowCookie(cookie);
      const refused = (reason: string, message: string, details: Record<string, unknown> = {}) => {
        request.log.warn({ provider: provider.id, reason, ...details }, 'oauth sign-in refused');
        return toLogin(reply, message);
      };
      if (state === undefined || secrets === undefined)
        return refused(
          secrets === undefined ? 'no_flow_cookie' : 'no_state',
          'This sign-in was not started in this browser: start again from the sign-in page',
        );
      const flow = await useFlow(database, { state, browserSecret: cookie as string, provider: provider.id });
      if (flow === undefined)
        return refused(
          'unknown_state',
          'This sign-in has expired, was used already or was started in another browser: start again',
        );
      if (error !== undefined)
        return refused(
          'provider_error',
          `${provider.name} did not sign you in (${error.slice(0, 64)}): try again`,
          {
            error,
          },
        );
      const query = request.url.split('?')[1] ?? '';
      const currentUrl = new URL(`${publicUrl}/auth/oauth/${provider.id}/callback?${query}`);
      let profile: ProviderProfile;
      try {
        profile = await provider.finish(currentUrl, state, secrets);
      } catch (failure) {
        request.log.warn({ err: failure, provider: provider.id }, 'oauth sign-in could not be checked');
        return refused(
          'not_verified',
          `The answer of ${provider.name} could not be verified, so you were not signed in: try again`,
          { message: failure instanceof Error ? failure.message : String(failure) },
        );
      }
      let user: User;
      try {
        user = await accountOf(request, provider, profile);
        // The sign-in gate first (it may refuse this way in), then the second factor.
        await request.server.signInGate(user, 'oauth', { checkOnly: true });
      } catch (failure) {
        if (failure instanceof Refusal) return toLogin(reply, failure.message);
        if (ApiError.isInstance(failure) && failure.status < 500) return toLogin(reply, failure.message);
        throw failure;
      }
      const returnTo = flow.returnTo ?? '/';
      if (await mfaEnabled(database, user.id)) {
        const mfaToken = await createMfaChallenge(database, user.id);
        // In the fragment: it never reaches a server's log, and the login page takes it from there.
        return reply.redirect(
          `${appUrl}/login?${new URLSearchParams({ next: returnTo })}#${new URLSearchParams({ mfaToken })}`,
          302,
        );
      }
      try {
        await signIn(database, publicUrl, request, reply, user, 'oauth');
      } catch (failure) {
        if (ApiError.isInstance(failure) && failure.status < 500) return toLogin(reply, failure.message);
        throw failure;
      }
      return reply.redirect(`${appUrl}${returnTo}`, 302);
    },
  );

  /**
   * The account of who the provider signed in: the one the identity is linked to; else the one
   * with the address, linked only when the provider says the address is verified (and the account
   * verified it too); else a new account, only for a verified address. Throws a {@link Refusal}.
   */
  async function accountOf(
    request: FastifyRequest,
    provider: Provider,
    profile: ProviderProfile,
  ): Promise<User> {
    const identity = await useIdentity(database, {
      provider: provider.id,
      subject: profile.subject,
      email: profile.email,
    });
    if (identity !== undefined) {
      const user = await findUserById(database, identity.user_id);
      if (user !== undefined) return user;
    }
    const email = profile.email;
    if (email === undefined)
      throw new Refusal(
        `${provider.name} did not tell us your e-mail address, so no account could be found or made`,
      );
    const existing = await findUserByEmail(database, email);
    if (existing !== undefined) {
      const reason = !profile.emailVerified
        ? 'email_not_verified_by_provider'
        : existing.email_verified_at === null
          ? 'account_email_not_verified'
          : undefined;
      if (reason !== undefined) {
        await recordPersonAudit(database, existing.id, auditOrigin(request), {
          action: 'user.oauth_link_refused',
          details: { provider: provider.id, reason },
        });
        throw new Refusal(
          reason === 'email_not_verified_by_provider'
            ? `An account with the address ${email} exists, but ${provider.name} does not say that address is verified, so your ${provider.name} account was not linked to it: sign in with your password or a sign-in link`
            : `An account with the address ${email} exists but its address was never verified: follow the link in the verification e-mail (or reset the password), then sign in with ${provider.name}`,
        );
      }
      return linkTo(request, existing, provider, profile);
    }
    if (!profile.emailVerified)
      throw new Refusal(
        `${provider.name} does not say the address ${email} is verified, so no account was made with it: sign up with your e-mail address instead`,
      );
    // Asked before the account is made: an organization may require SSO for this address.
    await request.server.signInGate(prospectiveUser(email), 'oauth', { checkOnly: true });
    const passwordHash = await hashPassword(randomBytes(32).toString('base64url'));
    const created = await insertUser(database, {
      email,
      name: profile.name?.slice(0, 200),
      passwordHash,
      emailVerified: true,
    });
    if (created === undefined)
      throw new Refusal('This sign-in met another one for the same address: try again');
    await recordCreatedAccount(database, { userId: created.id, passwordHash });
    return linkTo(request, created, provider, profile);
  }

  async function linkTo(
    request: FastifyRequest,
    user: User,
    provider: Provider,
    profile: ProviderProfile,
  ): Promise<User> {
    const linked = await linkIdentity(database, {
      userId: user.id,
      provider: provider.id,
      subject: profile.subject,
      email: profile.email,
    });
    if (linked === undefined)
      throw new Refusal('This sign-in met another one for the same account: try again');
    await recordPersonAudit(database, user.id, auditOrigin(request), {
      action: 'user.identity_linked',
      target: { type: 'identity', id: linked.id },
      details: { provider: provider.id, email: profile.email ?? null },
    });
    return user;
  }
}
