import * as client from 'openid-client';
import type { OAuthConfiguration } from '../../platform/config.ts';
import type { OAuthProviderId } from '../../platform/database/tables/oauth.table.ts';

// The three providers: Google and Microsoft through OpenID Connect (discovered from their issuer;
// the ID token checked by openid-client: signature against the provider's JWKS, issuer, audience,
// nonce, expiry), GitHub through OAuth 2 and its REST API (`GET /user`, `GET /user/emails`).

/** Who the provider says signed in. */
export interface ProviderProfile {
  /** The provider's stable id of the person (`sub`; GitHub's numeric user id). */
  subject: string;
  email: string | undefined;
  /** Whether the provider says the person controls `email` (see {@link emailVerifiedByClaims}). */
  emailVerified: boolean;
  name: string | undefined;
}

/** The flow's secrets kept by the browser (the flow cookie): PKCE's verifier, OIDC's nonce. */
export interface FlowSecrets {
  codeVerifier: string;
  nonce: string;
}

/** A configured provider, ready to start and finish sign-ins. */
export interface Provider {
  id: OAuthProviderId;
  /** The name on the button ("Continue with Google"). */
  name: string;
  /** The provider's authorization URL for a new flow (state, PKCE S256, and the nonce for OIDC). */
  authorizationUrl(state: string, secrets: FlowSecrets): Promise<URL>;
  /**
   * Exchanges the code of the callback URL (`currentUrl`, with the provider's query) and answers
   * who signed in; throws when anything does not check out.
   */
  finish(currentUrl: URL, state: string, secrets: FlowSecrets): Promise<ProviderProfile>;
}

const PROVIDER_NAMES: Record<OAuthProviderId, string> = {
  google: 'Google',
  microsoft: 'Microsoft',
  github: 'GitHub',
};

const TIMEOUT_SECONDS = 10;

/** The providers of the settings, each with the exact redirect URI of this server. */
export function createProviders(
  settings: OAuthConfiguration,
  publicUrl: string,
): Map<OAuthProviderId, Provider> {
  const redirectUri = (id: OAuthProviderId) => `${publicUrl}/auth/oauth/${id}/callback`;
  const providers = new Map<OAuthProviderId, Provider>();
  for (const id of ['google', 'microsoft'] as const) {
    const oidc = settings[id];
    if (oidc !== undefined)
      providers.set(id, createOidcProvider(id, oidc, redirectUri(id), ['openid', 'email', 'profile']));
  }
  if (settings.github !== undefined)
    providers.set('github', createGitHubProvider(settings.github, redirectUri('github')));
  return providers;
}

/**
 * Whether the ID token's claims say the person controls `email`. Google: `email_verified`.
 * Microsoft's `email` is whatever the tenant's admin or the person typed, unverified: only the
 * optional claim `xms_edov` (the e-mail domain's owner is verified) or the address being one of
 * `verified_primary_email` / `verified_secondary_email` counts. Any other provider:
 * `email_verified`.
 */
export function emailVerifiedByClaims(
  provider: OAuthProviderId,
  claims: Record<string, unknown>,
  email: string,
): boolean {
  if (provider !== 'microsoft') return claims.email_verified === true || claims.email_verified === 'true';
  const edov = claims.xms_edov;
  if (edov === true || edov === 1 || edov === '1' || edov === 'true') return true;
  const listed = [claims.verified_primary_email, claims.verified_secondary_email].flatMap((value) =>
    Array.isArray(value) ? value : typeof value === 'string' ? [value] : [],
  );
  return listed.some(
    (address) => typeof address === 'string' && address.toLowerCase() === email.toLowerCase(),
  );
}

function insecure(url: string): boolean {
  return url.startsWith('http:');
}

function createOidcProvider(
  id: OAuthProviderId,
  settings: { clientId: string; clientSecret: string; issuer: string },
  redirectUri: string,
  scopes: string[],
): Provider {
  // Discovered once per process, at the first sign-in (again after a failure).
  let discovered: Promise<client.Configuration> | undefined;
  const configuration = () => {
    discovered ??= client
      .discovery(
        new URL(settings.issuer),
        settings.clientId,
        { client_secret: settings.clientSecret, redirect_uris: [redirectUri], response_types: ['code'] },
        client.ClientSecretPost(settings.clientSecret),
        {
          timeout: TIMEOUT_SECONDS,
          ...(insecure(settings.issuer) ? { execute: [client.allowInsecureRequests] } : {}),
        },
      )
      .then((found) => {
        found.timeout = TIMEOUT_SECONDS;
        // Check the ID token's signature against the provider's keys too (openid-client trusts a
        // token endpoint's TLS by default).
        client.enableNonRepudiationChecks(found);
        return found;
      })
      .catch((error: unknown) => {
        discovered = undefined;
        throw error;
      });
    return discovered;
  };
  return {
    id,
    name: PROVIDER_NAMES[id],
    async authorizationUrl(state, secrets) {
      return client.buildAuthorizationUrl(await configuration(), {
        redirect_uri: redirectUri,
        scope: scopes.join(' '),
        state,
        nonce: secrets.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
        code_challenge_method: 'S256',
      });
    },
    async finish(currentUrl, state, secrets) {
      const tokens = await client.authorizationCodeGrant(await configuration(), currentUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: state,
        expectedNonce: secrets.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (claims === undefined) throw new Error('no ID token');
      const email = typeof claims.email === 'string' && claims.email.includes('@') ? claims.email : undefined;
      return {
        subject: claims.sub,
        email,
        emailVerified: email !== undefined && emailVerifiedByClaims(id, claims, email),
        name: typeof claims.name === 'string' && claims.name.trim() !== '' ? claims.name.trim() : undefined,
      };
    },
  };
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

function createGitHubProvider(
  settings: { clientId: string; clientSecret: string; webUrl: string; apiUrl: string },
  redirectUri: string,
): Provider {
  // GitHub has no discovery document: its endpoints, as GitHub documents them.
  const configuration = new client.Configuration(
    {
      issuer: settings.webUrl,
      authorization_endpoint: `${settings.webUrl}/login/oauth/authorize`,
      token_endpoint: `${settings.webUrl}/login/oauth/access_token`,
    },
    settings.clientId,
    { client_secret: settings.clientSecret, redirect_uris: [redirectUri] },
    client.ClientSecretPost(settings.clientSecret),
  );
  configuration.timeout = TIMEOUT_SECONDS;
  if (insecure(settings.webUrl)) client.allowInsecureRequests(configuration);

  async function api<T>(path: string, accessToken: string): Promise<T> {
    const response = await fetch(`${settings.apiUrl}${path}`, {
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${accessToken}`,
        'x-github-api-version': '2022-11-28',
        'user-agent': 'svc-api',
      },
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_SECONDS * 1000),
    });
    if (!response.ok) throw new Error(`GitHub ${path} answered ${response.status}`);
    return (await response.json()) as T;
  }

  return {
    id: 'github',
    name: PROVIDER_NAMES.github,
    async authorizationUrl(state, secrets) {
      return client.buildAuthorizationUrl(configuration, {
        redirect_uri: redirectUri,
        // `user:email` for `GET /user/emails` (which says which addresses are verified).
        scope: 'read:user user:email',
        state,
        code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
        code_challenge_method: 'S256',
        allow_signup: 'true',
      });
    },
    async finish(currentUrl, state, secrets) {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: state,
      });
      const user = await api<{ id: number; login: string; name: string | null }>(
        '/user',
        tokens.access_token,
      );
      if (typeof user.id !== 'number') throw new Error('GitHub /user has no id');
      const emails = await api<GitHubEmail[]>('/user/emails', tokens.access_token);
      const list = Array.isArray(emails) ? emails : [];
      // The primary address; GitHub says whether it is verified.
      const primary = list.find((entry) => entry.primary) ?? list.find((entry) => entry.verified);
      return {
        subject: String(user.id),
        email: primary?.email,
        emailVerified: primary?.verified === true,
        name: user.name?.trim() || user.login || undefined,
      };
    },
  };
}
