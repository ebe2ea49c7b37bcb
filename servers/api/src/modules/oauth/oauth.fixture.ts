import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// What the OAuth tests (oauth.test.ts and the dashboard's oauth.test.ts) run against: real
// OpenID providers (`oidc-provider`, in this process) standing as Google and Microsoft, and a
// stand-in for GitHub speaking its documented OAuth and REST shapes.

/** The members of oidc-provider's Provider these tests use (the package ships no types). */
interface OidcProviderInstance {
  callback(): (request: IncomingMessage, response: ServerResponse) => void;
}
type OidcProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProviderInstance;

/** What `loadExistingGrant` reads of oidc-provider's context. */
interface GrantContext {
  oidc: {
    result?: { consent?: { grantId?: string } };
    session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
    client?: { clientId: string };
    provider: {
      Grant: {
        find(id: string): Promise<unknown>;
        new (options: {
          clientId?: string;
          accountId?: string;
        }): {
          addOIDCScope(scope: string): void;
          addOIDCClaims(claims: string[]): void;
          save(): Promise<string>;
        };
      };
    };
  };
}

/** A person as a provider knows them: their claims (`sub`, `email`, `email_verified`, ...). */
type Claims = Record<string, unknown> & { sub: string };

function signingKey(kid: string) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}

function publicOf(jwk: ReturnType<typeof signingKey>) {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest } = jwk;
  return rest;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The people who can sign in, by the login typed in the provider's form (their `sub`). */
  people: Map<string, Claims>;
  /**
   * Misbehaviours, for the refusal tests: `nonce` replaces the nonce of authorization requests
   * (the ID token then carries another one); `foreignKeys` publishes other keys than the ones the
   * tokens are signed with.
   */
  tamper: { nonce?: string; foreignKeys?: boolean };
  /** Registers the client's redirect URI (when the server's address is known after the provider's). */
  registerRedirectUri(uri: string): void;
  close(): Promise<void>;
}

/**
 * An OpenID provider (oidc-provider with its development login form, which accepts any login and
 * password) with one client for `redirectUri`, PKCE required, claims in the ID token (as Google
 * and Microsoft put them), consent given already.
 */
export async function startOidcProvider(redirectUri?: string): Promise<TestOidcProvider> {
  const people = new Map<string, Claims>();
  const tamper: TestOidcProvider['tamper'] = {};
  const key = signingKey('signing');
  const foreign = publicOf(signingKey('signing'));
  const clientId = `client-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const server = createServer();
  const issuer = await listen(server);
  // Untyped package: loaded by a specifier TypeScript does not resolve, typed by the members used.
  const specifier: string = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as { default: OidcProviderClass };
  const configuration = (redirectUris: string[]) => ({
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [key] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified', 'xms_edov', 'verified_primary_email'],
      profile: ['name'],
    },
    conformIdTokenClaims: false,
    findAccount: async (_context: unknown, id: string) => ({
      accountId: id,
      claims: async () => people.get(id) ?? { sub: id },
    }),
    // First-party client: the consent is given (only the login form is shown).
    loadExistingGrant: async (context: GrantContext) => {
      const grantId =
        context.oidc.result?.consent?.grantId ??
        context.oidc.session?.grantIdFor(context.oidc.client?.clientId ?? '');
      if (grantId !== undefined) return context.oidc.provider.Grant.find(grantId);
      const grant = new context.oidc.provider.Grant({
        clientId: context.oidc.client?.clientId,
        accountId: context.oidc.session?.accountId,
      });
      grant.addOIDCScope('openid email profile');
      grant.addOIDCClaims(['email', 'email_verified', 'xms_edov', 'verified_primary_email', 'name']);
      await grant.save();
      return grant;
    },
  });
  let callback = new Provider(
    issuer,
    configuration(redirectUri === undefined ? [] : [redirectUri]),
  ).callback();
  server.on('request', (request, response) => {
    const url = new URL(request.url ?? '/', issuer);
    if (tamper.nonce !== undefined && url.pathname === '/auth' && url.searchParams.has('nonce')) {
      url.searchParams.set('nonce', tamper.nonce);
      request.url = `${url.pathname}${url.search}`;
    }
    if (tamper.foreignKeys === true && url.pathname === '/jwks') {
      response.setHeader('content-type', 'application/jwk-set+json');
      response.end(JSON.stringify({ keys: [foreign] }));
      return;
    }
    callback(request, response);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    people,
    tamper,
    registerRedirectUri(uri) {
      // A new provider with the same issuer, keys and client (for a server whose port came later).
      callback = new Provider(issuer, configuration([uri])).callback();
    },
    close: () => close(server),
  };
}

/** A GitHub user as the stand-in knows them, with the addresses `GET /user/emails` lists. */
export interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean; visibility: string | null }>;
}

export interface GitHubStandIn {
  /** `SVC_OAUTH_GITHUB_URL` and `SVC_OAUTH_GITHUB_API_URL`. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who "signs in" at the next authorization (GitHub's own page is not modelled). */
  signIn: GitHubUser | undefined;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A stand-in for GitHub (not GitHub: a small server speaking its documented shapes):
 * `GET /login/oauth/authorize` (redirects back with a code at once), `POST
 * /login/oauth/access_token` (form body; JSON answer with `Accept: application/json`, form-encoded
 * otherwise; checks the client, the code, the redirect URI and PKCE S256), `GET /user` and `GET
 * /user/emails` with the access token.
 */
export async function startGitHubStandIn(): Promise<GitHubStandIn> {
  const clientId = `Iv1.${randomBytes(8).toString('hex')}`;
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, { user: GitHubUser; redirectUri: string; challenge: string }>();
  const tokens = new Map<string, GitHubUser>();
  const standIn: GitHubStandIn = {
    url: '',
    clientId,
    clientSecret,
    signIn: undefined,
    close: async () => {},
  };
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', standIn.url);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const redirectUri = url.searchParams.get('redirect_uri') ?? '';
      const user = standIn.signIn;
      if (url.searchParams.get('client_id') !== clientId || user === undefined)
        return json(400, { error: 'unknown client or nobody to sign in' });
      if (url.searchParams.get('code_challenge_method') !== 'S256') return json(400, { error: 'S256 only' });
      const code = randomBytes(10).toString('hex');
      codes.set(code, { user, redirectUri, challenge: url.searchParams.get('code_challenge') ?? '' });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      response.writeHead(302, { location: back.href });
      return response.end();
    }
    if (request.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(await readBody(request));
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const ok =
        form.get('client_id') === clientId &&
        form.get('client_secret') === clientSecret &&
        grant !== undefined &&
        grant.redirectUri === form.get('redirect_uri') &&
        createHash('sha256').update(verifier).digest('base64url') === grant.challenge;
      // GitHub answers a bad code with 200 and an error body.
      const body: Record<string, string> = ok
        ? {
            access_token: `gho_${randomBytes(18).toString('hex')}`,
            token_type: 'bearer',
            scope: 'read:user,user:email',
          }
        : { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
      if (ok && grant !== undefined) tokens.set(body.access_token as string, grant.user);
      if ((request.headers.accept ?? '').includes('application/json')) return json(200, body);
      response.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
      return response.end(new URLSearchParams(body).toString());
    }
    const bearer = /^(?:Bearer|token) (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const user = bearer === undefined ? undefined : tokens.get(bearer);
    if (request.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (user === undefined) return json(401, { message: 'Requires authentication' });
      if (url.pathname === '/user')
        return json(200, {
          id: user.id,
          login: user.login,
          name: user.name,
          email: user.emails.find((entry) => entry.primary && entry.visibility === 'public')?.email ?? null,
        });
      return json(200, user.emails);
    }
    json(404, { message: 'Not Found' });
  });
  standIn.url = await listen(server);
  standIn.close = () => close(server);
  return standIn;
}

/** Cookies of one client, by name (enough for one host; paths are ignored). */
function createCookieJar() {
  const cookies = new Map<string, string>();
  return {
    store(setCookies: string[]) {
      for (const line of setCookies) {
        const [pair, ...attributes] = line.split(';');
        const index = (pair ?? '').indexOf('=');
        const name = (pair ?? '').slice(0, index).trim();
        const value = (pair ?? '').slice(index + 1).trim();
        const expired = attributes.some(
          (attribute) =>
            /^\s*max-age=0/i.test(attribute) ||
            (/^\s*expires=/i.test(attribute) && Date.parse(attribute.split('=')[1] ?? '') < Date.now()),
        );
        if (expired || value === '') cookies.delete(name);
        else cookies.set(name, value);
      }
    },
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    get: (name: string) => cookies.get(name),
  };
}

/**
 * Follows a sign-in at the provider from its authorization URL as a browser would (redirects,
 * the provider's cookies, its login form posted with `login`), until the provider sends the
 * browser to a URL starting with `callbackPrefix`; answers that URL.
 */
export async function signInAtProvider(authorizationUrl: string, login: string, callbackPrefix: string) {
  const jar = createCookieJar();
  let url = authorizationUrl;
  let body: string | undefined;
  for (let step = 0; step < 12; step += 1) {
    const response = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(body === undefined ? {} : { body }),
    });
    jar.store(response.headers.getSetCookie());
    body = undefined;
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get('location') ?? '', url).href;
      if (location.startsWith(callbackPrefix)) return location;
      url = location;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined)
      throw new Error(`No form at ${url} (${response.status}): ${html.slice(0, 500)}`);
    url = new URL(action.replaceAll('&amp;', '&'), url).href;
    body = new URLSearchParams({ prompt: 'login', login, password: 'any password' }).toString();
  }
  throw new Error('The provider did not send the browser back');
}
