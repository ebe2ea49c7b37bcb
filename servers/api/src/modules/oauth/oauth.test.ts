import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { PASSWORD } from '../accounts/accounts.fixture.ts';
import { hashPassword } from '../accounts/passwords.ts';
import { createSession, insertUser } from '../accounts/repository.ts';
import { insertPasskey } from '../passkeys/repository.ts';
import {
  type GitHubStandIn,
  type GitHubUser,
  signInAtProvider,
  startGitHubStandIn,
  startOidcProvider,
  type TestOidcProvider,
} from './oauth.fixture.ts';
import { emailVerifiedByClaims } from './providers.ts';
import { safeReturnTo } from './routes.ts';

// Sign-in with Google and Microsoft against real OpenID providers (oidc-provider, in this process,
// configured through the overridable issuers) and with GitHub against a stand-in speaking its
// documented OAuth and REST shapes; the flow driven from Node as a browser would (redirects,
// cookies, the provider's login form).

const PUBLIC_URL = 'http://127.0.0.1:18470';
const APP_URL = 'http://127.0.0.1:18471';

let google: TestOidcProvider;
let microsoft: TestOidcProvider;
let github: GitHubStandIn;

beforeAll(async () => {
  google = await startOidcProvider(`${PUBLIC_URL}/auth/oauth/google/callback`);
  microsoft = await startOidcProvider(`${PUBLIC_URL}/auth/oauth/microsoft/callback`);
  github = await startGitHubStandIn();
});
afterAll(async () => {
  await google?.close();
  await microsoft?.close();
  await github?.close();
});

describe('safeReturnTo', () => {
  it('keeps paths of the dashboard and drops anything that leaves it', () => {
    expect(safeReturnTo('/sessions?x=1')).toBe('/sessions?x=1');
    for (const bad of [
      '//evil.example',
      '/\\evil.example',
      'https://evil.example',
      'sessions',
      '/a b',
      undefined,
    ])
      expect(safeReturnTo(bad)).toBeUndefined();
  });
});

describe('emailVerifiedByClaims', () => {
  it("takes Google's email_verified, and Microsoft's address only with xms_edov or a verified_* claim", () => {
    const email = 'ada@example.com';
    expect(emailVerifiedByClaims('google', { email_verified: true }, email)).toBe(true);
    expect(emailVerifiedByClaims('google', { email_verified: false }, email)).toBe(false);
    expect(emailVerifiedByClaims('google', {}, email)).toBe(false);
    // Microsoft's email_verified is no claim it issues: not trusted.
    expect(emailVerifiedByClaims('microsoft', { email_verified: true }, email)).toBe(false);
    expect(emailVerifiedByClaims('microsoft', { xms_edov: true }, email)).toBe(true);
    expect(emailVerifiedByClaims('microsoft', { xms_edov: '1' }, email)).toBe(true);
    expect(emailVerifiedByClaims('microsoft', { xms_edov: false }, email)).toBe(false);
    expect(emailVerifiedByClaims('microsoft', { verified_primary_email: ['Ada@Example.com'] }, email)).toBe(
      true,
    );
    expect(
      emailVerifiedByClaims('microsoft', { verified_secondary_email: ['other@example.com'] }, email),
    ).toBe(false);
  });
});

describe.each(ENGINES)('OAuth sign-in on %s', (engine) => {
  let test: TestApp;
  let people = 0;
  /** A new address each time, so tests do not meet each other's accounts. */
  const address = (name: string) => {
    people += 1;
    return `${name}-${people}-${engine}@example.com`;
  };

  beforeAll(async () => {
    test = await createTestApp(
      engine,
      { logger: false },
      {
        SVC_PUBLIC_URL: PUBLIC_URL,
        SVC_APP_URL: APP_URL,
        SVC_OAUTH_GOOGLE_CLIENT_ID: google.clientId,
        SVC_OAUTH_GOOGLE_CLIENT_SECRET: google.clientSecret,
        SVC_OAUTH_GOOGLE_ISSUER: google.issuer,
        SVC_OAUTH_MICROSOFT_CLIENT_ID: microsoft.clientId,
        SVC_OAUTH_MICROSOFT_CLIENT_SECRET: microsoft.clientSecret,
        SVC_OAUTH_MICROSOFT_ISSUER: microsoft.issuer,
        SVC_OAUTH_GITHUB_CLIENT_ID: github.clientId,
        SVC_OAUTH_GITHUB_CLIENT_SECRET: github.clientSecret,
        SVC_OAUTH_GITHUB_URL: github.url,
        SVC_OAUTH_GITHUB_API_URL: github.url,
      },
    );
  });
  afterAll(async () => {
    await test?.close();
  });

  const cookieOf = (response: LightMyRequestResponse, name: string) =>
    response.cookies.find((cookie) => cookie.name === name && cookie.value !== '')?.value;

  /** `GET /auth/oauth/{provider}/start`: the provider's URL and the flow cookie. */
  async function start(provider: string, returnTo?: string) {
    const response = await test.app.inject({
      url: `/auth/oauth/${provider}/start${returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`}`,
    });
    expect(response.statusCode, response.body).toBe(302);
    const flowCookie = cookieOf(response, 'service_oauth');
    expect(flowCookie).toBeDefined();
    return { location: response.headers.location as string, flowCookie: flowCookie as string };
  }

  /** The callback as the browser brings it (with its flow cookie, if any). */
  function callback(url: string, flowCookie: string | undefined) {
    const { pathname, search } = new URL(url);
    return test.app.inject({
      url: `${pathname}${search}`,
      headers: flowCookie === undefined ? {} : { cookie: `service_oauth=${flowCookie}` },
    });
  }

  /** A whole sign-in at an OpenID provider as `login`: the callback's answer. */
  async function oidcSignIn(provider: 'google' | 'microsoft', login: string, returnTo?: string) {
    const started = await start(provider, returnTo);
    const back = await signInAtProvider(
      started.location,
      login,
      `${PUBLIC_URL}/auth/oauth/${provider}/callback`,
    );
    return callback(back, started.flowCookie);
  }

  async function githubSignIn(user: GitHubUser) {
    github.signIn = user;
    const started = await start('github');
    const authorize = await fetch(started.location, { redirect: 'manual' });
    expect(authorize.status).toBe(302);
    return callback(authorize.headers.get('location') as string, started.flowCookie);
  }

  /** The person of a signed-in answer (its session cookie), with `GET /v1/me`. */
  async function me(response: LightMyRequestResponse) {
    const session = cookieOf(response, 'service_session');
    expect(session, `${response.statusCode} ${response.headers.location}`).toBeDefined();
    const answer = expectJson(
      await test.app.inject({ url: '/v1/me', cookies: { service_session: session as string } }),
      200,
    );
    return { ...answer, cookie: session as string };
  }

  async function identities(person: { cookie: string }) {
    return expectJson(
      await test.app.inject({ url: '/v1/me/identities', cookies: { service_session: person.cookie } }),
      200,
    ).items as Array<{ id: string; provider: string; email?: string; lastUsedAt?: string }>;
  }

  /** The message of a refusal: a redirect to the login page with `?error=`. */
  function refusal(response: LightMyRequestResponse): string {
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${APP_URL}/login`);
    expect(cookieOf(response, 'service_session')).toBeUndefined();
    return location.searchParams.get('error') ?? '';
  }

  async function passwordAccount(email: string, verified = true, passwordHash = 'not used') {
    const user = await insertUser(test.database.database, {
      email,
      name: undefined,
      passwordHash,
      emailVerified: verified,
    });
    if (user === undefined) throw new Error('no user');
    return user;
  }

  it('lists the configured providers', async () => {
    const answer = expectJson(await test.app.inject({ url: '/auth/oauth/providers' }), 200);
    expect(answer.providers.map((provider: { id: string }) => provider.id)).toEqual([
      'google',
      'microsoft',
      'github',
    ]);
    expect(answer.providers[0]).toEqual({
      id: 'google',
      name: 'Google',
      startUrl: '/auth/oauth/google/start',
    });
  });

  it('sends the browser to the provider with state, nonce, PKCE S256 and the exact redirect URI', async () => {
    const { location } = await start('google');
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe(`${google.issuer}/auth`);
    expect(url.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/auth/oauth/google/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    for (const parameter of ['state', 'nonce', 'code_challenge'])
      expect(url.searchParams.get(parameter)).toBeTruthy();
    const unknown = await test.app.inject({ url: '/auth/oauth/facebook/start' });
    expect(unknown.statusCode).toBe(302);
    expect(new URL(unknown.headers.location as string).searchParams.get('error')).toMatch(/not set up/);
  });

  it('makes a new account from a verified Google address, and signs the same identity in again', async () => {
    const email = address('new');
    google.people.set('new-person', { sub: 'new-person', email, email_verified: true, name: 'New Person' });
    const first = await oidcSignIn('google', 'new-person', '/sessions?from=oauth');
    expect(first.statusCode).toBe(302);
    expect(first.headers.location).toBe(`${APP_URL}/sessions?from=oauth`);
    const person = await me(first);
    expect(person.user).toMatchObject({ email, name: 'New Person', emailVerifiedAt: expect.any(String) });
    expect(await identities(person)).toEqual([
      expect.objectContaining({ provider: 'google', email, lastUsedAt: expect.any(String) }),
    ]);
    const again = await oidcSignIn('google', 'new-person');
    expect(again.headers.location).toBe(`${APP_URL}/`);
    expect((await me(again)).user.id).toBe(person.user.id);
  });

  it('makes no account for an address whose organization requires SSO: the sign-in is refused first', async () => {
    const domain = `sso-required-${engine}.example`;
    const organizationId = test.first.project.organization_id;
    await test.database.database
      .insertInto('sso_domains')
      .values({
        id: `dom_oauth_${engine}`,
        organization_id: organizationId,
        domain,
        verification_token: 'svc-verification=test',
        verified_at: new Date(),
      })
      .execute();
    await test.database.database
      .updateTable('organizations')
      .set({ sso_required: true })
      .where('id', '=', organizationId)
      .execute();
    try {
      const email = `newcomer@${domain}`;
      google.people.set('sso-person', { sub: 'sso-person', email, email_verified: true });
      expect(refusal(await oidcSignIn('google', 'sso-person'))).toMatch(/single sign-on \(SSO\)/);
      const made = await test.database.database
        .selectFrom('users')
        .select('id')
        .where('email', '=', email)
        .executeTakeFirst();
      expect(made).toBeUndefined();
    } finally {
      await test.database.database
        .updateTable('organizations')
        .set({ sso_required: false })
        .where('id', '=', organizationId)
        .execute();
    }
  });

  it('links an existing account by an address Google says is verified', async () => {
    const email = address('linked');
    const account = await passwordAccount(email);
    google.people.set('linked', { sub: 'linked', email: email.toUpperCase(), email_verified: true });
    const person = await me(await oidcSignIn('google', 'linked'));
    expect(person.user.id).toBe(account.id);
    expect((await identities(person)).map((identity) => identity.provider)).toEqual(['google']);
  });

  it('refuses to link an address the provider does not say is verified, and links once Microsoft says so', async () => {
    const email = address('unverified');
    const account = await passwordAccount(email);
    google.people.set('unverified', { sub: 'unverified', email, email_verified: false });
    expect(refusal(await oidcSignIn('google', 'unverified'))).toMatch(
      /does not say that address is verified/,
    );
    // Microsoft's `email` alone is not proof.
    microsoft.people.set('ms-unverified', { sub: 'ms-unverified', email, email_verified: true });
    expect(refusal(await oidcSignIn('microsoft', 'ms-unverified'))).toMatch(/Microsoft does not say/);
    const rows = await test.database.database
      .selectFrom('oauth_identities')
      .selectAll()
      .where('user_id', '=', account.id)
      .execute();
    expect(rows).toEqual([]);
    // With the xms_edov claim (the domain's owner verified), it links.
    microsoft.people.set('ms-verified', { sub: 'ms-verified', email, xms_edov: true });
    const person = await me(await oidcSignIn('microsoft', 'ms-verified'));
    expect(person.user.id).toBe(account.id);
    // No account is made from an unverified address either.
    google.people.set('nobody', { sub: 'nobody', email: address('nobody'), email_verified: false });
    expect(refusal(await oidcSignIn('google', 'nobody'))).toMatch(/no account was made/);
    // Nor linked to an account whose own address was never verified.
    const unverifiedAccount = address('pending');
    await passwordAccount(unverifiedAccount, false);
    google.people.set('pending', { sub: 'pending', email: unverifiedAccount, email_verified: true });
    expect(refusal(await oidcSignIn('google', 'pending'))).toMatch(/never verified/);
  });

  it('signs in with GitHub by its verified primary address, and refuses an unverified one', async () => {
    const email = address('octo');
    const user: GitHubUser = {
      id: 583231 + people,
      login: 'octocat',
      name: 'The Octocat',
      emails: [
        { email: `other-${email}`, primary: false, verified: true, visibility: null },
        { email, primary: true, verified: true, visibility: 'public' },
      ],
    };
    const person = await me(await githubSignIn(user));
    expect(person.user).toMatchObject({ email, name: 'The Octocat' });
    expect(await identities(person)).toEqual([expect.objectContaining({ provider: 'github', email })]);

    const existing = address('octo-existing');
    await passwordAccount(existing);
    const unverified: GitHubUser = {
      id: 983231 + people,
      login: 'mallory',
      name: null,
      emails: [{ email: existing, primary: true, verified: false, visibility: null }],
    };
    expect(refusal(await githubSignIn(unverified))).toMatch(/GitHub does not say/);
  });

  it('refuses a callback without the flow cookie, with another state, or used twice', async () => {
    google.people.set('careful', { sub: 'careful', email: address('careful'), email_verified: true });
    // The attacker's callback URL in a victim's browser (no flow cookie, or the victim's own).
    const attacker = await start('google');
    const attackerBack = await signInAtProvider(
      attacker.location,
      'careful',
      `${PUBLIC_URL}/auth/oauth/google/callback`,
    );
    expect(refusal(await callback(attackerBack, undefined))).toMatch(/not started in this browser/);
    const victim = await start('google');
    expect(refusal(await callback(attackerBack, victim.flowCookie))).toMatch(/another browser/);
    // Another state than the flow's.
    const tampered = new URL(attackerBack);
    tampered.searchParams.set('state', 'not-the-state');
    expect(refusal(await callback(tampered.href, attacker.flowCookie))).toMatch(/expired, was used already/);
    // The real one works once (a refusal above burnt nothing of the attacker's), then never again.
    const used = await callback(attackerBack, attacker.flowCookie);
    expect(cookieOf(used, 'service_session')).toBeDefined();
    expect(refusal(await callback(attackerBack, attacker.flowCookie))).toMatch(/used already/);
    // The provider's own error (the person said no) is shown.
    const denied = await start('google');
    const state = new URL(denied.location).searchParams.get('state') as string;
    const answer = await callback(
      `${PUBLIC_URL}/auth/oauth/google/callback?error=access_denied&state=${state}`,
      denied.flowCookie,
    );
    expect(refusal(answer)).toMatch(/access_denied/);
  });

  it('refuses an ID token with another nonce or signed by a key the provider does not publish', async () => {
    google.people.set('checked', { sub: 'checked', email: address('checked'), email_verified: true });
    google.tamper.nonce = 'a-nonce-of-someone-else';
    try {
      expect(refusal(await oidcSignIn('google', 'checked'))).toMatch(/could not be verified/);
    } finally {
      delete google.tamper.nonce;
    }
    // A fresh server process: the provider's keys are fetched anew, and they are not the signer's.
    const other = await createTestApp(
      engine,
      { logger: false },
      {
        SVC_PUBLIC_URL: PUBLIC_URL,
        SVC_APP_URL: APP_URL,
        SVC_OAUTH_GOOGLE_CLIENT_ID: google.clientId,
        SVC_OAUTH_GOOGLE_CLIENT_SECRET: google.clientSecret,
        SVC_OAUTH_GOOGLE_ISSUER: google.issuer,
      },
    );
    google.tamper.foreignKeys = true;
    try {
      const response = await other.app.inject({ url: '/auth/oauth/google/start' });
      const flowCookie = cookieOf(response, 'service_oauth') as string;
      const back = new URL(
        await signInAtProvider(
          response.headers.location as string,
          'checked',
          `${PUBLIC_URL}/auth/oauth/google/callback`,
        ),
      );
      const answer = await other.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `service_oauth=${flowCookie}` },
      });
      expect(refusal(answer)).toMatch(/could not be verified/);
    } finally {
      delete google.tamper.foreignKeys;
      await other.close();
    }
  });

  it('asks for the second factor when the person has it on', async () => {
    const email = address('mfa');
    const account = await passwordAccount(email, true, await hashPassword(PASSWORD));
    // Two-factor sign-in turned on as the person does it.
    const session = await createSession(test.database.database, {
      userId: account.id,
      ip: undefined,
      userAgent: undefined,
    });
    const as = {
      cookies: { service_session: session.secret },
      headers: { 'x-service-csrf': session.csrfToken },
    };
    const enrolled = expectJson(
      await test.app.inject({
        method: 'POST',
        url: '/v1/me/mfa/enroll',
        payload: { password: PASSWORD },
        ...as,
      }),
      200,
    );
    const totp = new TOTP({ secret: Secret.fromBase32(enrolled.secret) });
    expectJson(
      await test.app.inject({
        method: 'POST',
        url: '/v1/me/mfa/confirm',
        payload: { code: totp.generate() },
        ...as,
      }),
      200,
    );
    google.people.set('mfa', { sub: 'mfa', email, email_verified: true });
    const answer = await oidcSignIn('google', 'mfa', '/issues');
    expect(cookieOf(answer, 'service_session')).toBeUndefined();
    const location = new URL(answer.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${APP_URL}/login`);
    expect(location.searchParams.get('next')).toBe('/issues');
    const mfaToken = new URLSearchParams(location.hash.slice(1)).get('mfaToken');
    // The next step's code: the confirmation used this one (each step is accepted once).
    const code = totp.generate({ timestamp: Date.now() + 30_000 });
    const verified = await test.app.inject({
      method: 'POST',
      url: '/auth/mfa/verify',
      payload: { mfaToken, code },
    });
    expect(verified.statusCode, verified.body).toBe(200);
    expect(verified.json().user.id).toBe(account.id);
  });

  it('unlinks an identity, but not the last way in of an account without a password or passkey', async () => {
    const email = address('unlink');
    google.people.set('unlink', { sub: 'unlink', email, email_verified: true });
    const person = await me(await oidcSignIn('google', 'unlink'));
    const [only] = await identities(person);
    const remove = (id: string, options: { csrf: boolean } = { csrf: true }) =>
      test.app.inject({
        method: 'DELETE',
        url: `/v1/me/identities/${id}`,
        cookies: { service_session: person.cookie },
        headers: options.csrf ? { 'x-service-csrf': person.csrfToken } : {},
      });
    expect((await remove(only?.id as string, { csrf: false })).statusCode).toBe(403);
    const last = await remove(only?.id as string);
    expect(last.statusCode).toBe(409);
    expect(last.json()).toEqual({ error: expect.stringMatching(/only way to sign in/), code: 'invalid' });
    // A second identity (GitHub, same verified address) makes either removable.
    await githubSignIn({
      id: 7_000_000 + people,
      login: 'unlinker',
      name: null,
      emails: [{ email, primary: true, verified: true, visibility: null }],
    });
    expect((await identities(person)).map((identity) => identity.provider)).toEqual(['google', 'github']);
    expect((await remove(only?.id as string)).statusCode).toBe(204);
    const [github] = await identities(person);
    expect(github?.provider).toBe('github');
    expect((await remove(github?.id as string)).statusCode).toBe(409);
    expect((await remove('idn_nothing')).statusCode).toBe(404);
    // A passkey is a way in too: with one, the last identity goes.
    await insertPasskey(test.database.database, {
      userId: person.user.id,
      credentialId: `unlink-${people}`,
      publicKey: new Uint8Array([1, 2, 3]),
      counter: 0,
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      name: 'Laptop',
    });
    expect((await remove(github?.id as string)).statusCode).toBe(204);
    expect(await identities(person)).toEqual([]);
    // An account with its own password may unlink its last identity.
    const owner = address('with-password');
    await passwordAccount(owner);
    google.people.set('with-password', { sub: 'with-password', email: owner, email_verified: true });
    const withPassword = await me(await oidcSignIn('google', 'with-password'));
    const [linked] = await identities(withPassword);
    const removed = await test.app.inject({
      method: 'DELETE',
      url: `/v1/me/identities/${linked?.id}`,
      cookies: { service_session: withPassword.cookie },
      headers: { 'x-service-csrf': withPassword.csrfToken },
    });
    expect(removed.statusCode).toBe(204);
    expect(await identities(withPassword)).toEqual([]);
  });
});
