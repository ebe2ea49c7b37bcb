import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real OpenID provider for the SSO tests (`oidc-provider`, in-process, on 127.0.0.1): code
// flow with PKCE, open dynamic client registration, and a login that signs in whoever the test
// names next (`signInAs`), so a test drives the whole redirect dance over HTTP or in Chromium.
// `publishOtherKeys` makes its JWKS endpoint publish a key it does not sign with (an ID token
// "from another key").

export interface IdpAccount {
  sub: string;
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

export interface TestOidcIdp {
  issuer: string;
  /** The account the next login completes with. */
  signInAs(account: IdpAccount): void;
  /** Registers a confidential client (client_secret_basic) for the redirect URI. */
  registerClient(redirectUri: string): Promise<{ clientId: string; clientSecret: string }>;
  /** Changes a registered client's redirect URI (registration management, RFC 7592). */
  setRedirectUri(clientId: string, redirectUri: string): Promise<void>;
  /** While true, `/jwks` publishes another key than the one ID tokens are signed with. */
  publishOtherKeys: boolean;
  close(): Promise<void>;
}

interface InteractionDetails {
  prompt: { name: string };
  params: Record<string, unknown>;
  session?: { accountId?: string };
}

interface ProviderInstance {
  callback(): (request: IncomingMessage, response: ServerResponse) => void;
  interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    request: IncomingMessage,
    response: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
}

type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

function privateJwk() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...privateKey.export({ format: 'jwk' }),
    kid: `k${Math.random().toString(36).slice(2)}`,
    use: 'sig',
    alg: 'RS256',
  };
}

/** Starts the provider on a free port of 127.0.0.1. */
export async function startOidcIdp(): Promise<TestOidcIdp> {
  // Untyped package: loaded by a specifier TypeScript does not resolve, typed by the few members used.
  const specifier: string = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as { default: ProviderClass };
  const signingKey = privateJwk();
  const otherKey = privateJwk();
  const accounts = new Map<string, IdpAccount>();
  let next: IdpAccount | undefined;
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const server = createServer((request, response) => handler?.(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    cookies: { keys: ['sso-test-cookie-key'] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      registrationManagement: { enabled: true, rotateRegistrationAccessToken: false },
    },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'email', 'profile'],
    conformIdTokenClaims: false,
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (account === undefined) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            ...(account.email === undefined
              ? {}
              : { email: account.email, email_verified: account.emailVerified ?? true }),
            ...(account.name === undefined ? {} : { name: account.name }),
          };
        },
      };
    },
    async loadExistingGrant(ctx: {
      oidc: {
        client: { clientId: string };
        session: { accountId: string };
        provider: {
          Grant: new (options: {
            clientId: string;
            accountId: string;
          }) => {
            addOIDCScope(scope: string): void;
            addOIDCClaims(claims: string[]): void;
            save(): Promise<string>;
          };
        };
      };
    }) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      grant.addOIDCClaims(['email', 'email_verified', 'name']);
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();
  const registrations = new Map<string, { token: string; uri: string; secret: string }>();
  const clientMetadata = (redirectUri: string) => ({
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
  const result: TestOidcIdp = {
    issuer,
    publishOtherKeys: false,
    signInAs(account) {
      next = account;
    },
    async registerClient(redirectUri) {
      const response = await fetch(`${issuer}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(clientMetadata(redirectUri)),
      });
      if (response.status !== 201)
        throw new Error(`registration: ${response.status} ${await response.text()}`);
      const body = (await response.json()) as {
        client_id: string;
        client_secret: string;
        registration_access_token: string;
        registration_client_uri: string;
      };
      registrations.set(body.client_id, {
        token: body.registration_access_token,
        uri: body.registration_client_uri,
        secret: body.client_secret,
      });
      return { clientId: body.client_id, clientSecret: body.client_secret };
    },
    async setRedirectUri(clientId, redirectUri) {
      const registration = registrations.get(clientId);
      if (registration === undefined) throw new Error(`no client ${clientId}`);
      const response = await fetch(registration.uri, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${registration.token}` },
        body: JSON.stringify({
          client_id: clientId,
          client_secret: registration.secret,
          ...clientMetadata(redirectUri),
        }),
      });
      if (response.status !== 200)
        throw new Error(`registration update: ${response.status} ${await response.text()}`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  handler = (request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (path === '/jwks' && result.publishOtherKeys) {
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicKey } = otherKey;
      response.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      response.end(JSON.stringify({ keys: [publicKey] }));
      return;
    }
    if (path.startsWith('/interaction/')) {
      void (async () => {
        try {
          const details = await provider.interactionDetails(request, response);
          if (details.prompt.name === 'login') {
            if (next === undefined) throw new Error('signInAs was not called');
            accounts.set(next.sub, next);
            await provider.interactionFinished(
              request,
              response,
              { login: { accountId: next.sub } },
              {
                mergeWithLastSubmission: false,
              },
            );
          } else {
            await provider.interactionFinished(request, response, {}, { mergeWithLastSubmission: true });
          }
        } catch (error) {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(String(error));
        }
      })();
      return;
    }
    callback(request, response);
  };
  return result;
}

/**
 * A browser for tests: follows redirects by hand across hosts with a cookie jar per origin (the
 * server's and the IdP's), as a browser does. `steps` lists every URL visited.
 */
export function createBrowser() {
  const jars = new Map<string, Map<string, string>>();
  function jar(url: URL) {
    let found = jars.get(url.origin);
    if (found === undefined) {
      found = new Map();
      jars.set(url.origin, found);
    }
    return found;
  }
  function remember(url: URL, response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*max-age=0/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a),
      );
      if (expired || value === '') jar(url).delete(name);
      else jar(url).set(name, value);
    }
  }
  return {
    cookies(origin: string): Map<string, string> {
      return jar(new URL(origin));
    },
    /** Requests `url` and follows redirects; the last answer and every URL visited. */
    async navigate(
      start: string,
      init: { method?: string; body?: string; headers?: Record<string, string> } = {},
    ): Promise<{ response: Response; url: string; steps: string[] }> {
      let url = new URL(start);
      let method = init.method ?? 'GET';
      let body = init.body;
      let headers = init.headers ?? {};
      const steps: string[] = [];
      for (let hop = 0; hop < 20; hop += 1) {
        steps.push(url.href);
        const cookie = [...jar(url)].map(([name, value]) => `${name}=${value}`).join('; ');
        const response = await fetch(url, {
          method,
          redirect: 'manual',
          headers: { ...headers, ...(cookie === '' ? {} : { cookie }) },
          ...(body === undefined ? {} : { body }),
        });
        remember(url, response);
        const location = response.headers.get('location');
        if (response.status < 300 || response.status >= 400 || location === null)
          return { response, url: url.href, steps };
        url = new URL(location, url);
        if (response.status !== 307 && response.status !== 308) {
          method = 'GET';
          body = undefined;
          headers = {};
        }
      }
      throw new Error(`too many redirects: ${steps.join(' -> ')}`);
    },
  };
}
