import { hash } from '@node-rs/argon2';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, type Json } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { hashSecret } from '../../platform/secrets.ts';
import { linkToken, PASSWORD } from './accounts.fixture.ts';
import { PASSWORD_HASHING } from './passwords.ts';

// Accounts over real HTTP (app.inject through the whole app), with e-mail going to a real SMTP
// server in this process, on both engines.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('accounts on %s', (engine) => {
  let test: TestApp;
  let addresses = 0;
  /** A client address of its own for each caller, so that tests do not share rate limits. */
  const nextAddress = () => {
    addresses += 1;
    return `10.0.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
  };

  beforeAll(async () => {
    test = await createTestApp(engine, { logger: false }, { SVC_SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await test?.close();
  });

  type Options = { cookie?: string; csrf?: string; headers?: Record<string, string>; address?: string };
  function send(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, options: Options = {}) {
    return test.app.inject({
      method,
      url,
      remoteAddress: options.address ?? '10.9.9.9',
      headers: {
        ...(options.cookie === undefined ? {} : { cookie: `service_session=${options.cookie}` }),
        ...(options.csrf === undefined ? {} : { 'x-service-csrf': options.csrf }),
        ...options.headers,
      },
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
  }

  function sessionCookie(response: LightMyRequestResponse) {
    return response.cookies.find((cookie) => cookie.name === 'service_session');
  }

  /** Signs up, follows the e-mail's link and signs in: the cookie's value and the CSRF token. */
  async function signedIn(email: string, name?: string) {
    const address = nextAddress();
    expectJson(await send('POST', '/auth/signup', { email, password: PASSWORD, name }, { address }), 201);
    const token = linkToken(await smtp.nextMessage(email), test.configuration.appUrl);
    expectJson(await send('POST', '/auth/verify-email', { token }, { address }), 200);
    const login = await send('POST', '/auth/login', { email, password: PASSWORD }, { address });
    const body = expectJson(login, 200);
    return { cookie: sessionCookie(login)?.value as string, csrf: body.csrfToken as string, user: body.user };
  }

  it('signs up, verifies the address through the e-mailed link, signs in, reads /v1/me and signs out', async () => {
    const email = `ada-${engine}@example.com`;
    const address = nextAddress();
    const signup = await send(
      'POST',
      '/auth/signup',
      { email, password: PASSWORD, name: 'Ada' },
      { address },
    );
    const { user } = expectJson(signup, 201);
    expect(user).toEqual({
      id: expect.stringMatching(/^usr_/),
      email,
      name: 'Ada',
      createdAt: expect.any(String),
    });
    expect(signup.cookies).toEqual([]);

    const mail = await smtp.nextMessage(email);
    expect(mail.subject).toBe('Verify your e-mail address');
    expect(mail.from?.value[0]?.address).toBe('no-reply@localhost');
    expect(mail.text).toContain('Hello Ada,');
    const token = linkToken(mail, test.configuration.appUrl);

    // Not before the address is verified (the password is right: this tells nothing new).
    const early = await send('POST', '/auth/login', { email, password: PASSWORD }, { address });
    expect(expectJson(early, 403)).toEqual({
      error: 'Verify your e-mail address first: follow the link in the e-mail we sent to it',
      code: 'unauthorized',
    });
    expect(early.cookies).toEqual([]);

    const verified = expectJson(await send('POST', '/auth/verify-email', { token }, { address }), 200);
    expect(verified.user).toMatchObject({ id: user.id, email, emailVerifiedAt: expect.any(String) });

    // Any case of the address signs in.
    const login = await send(
      'POST',
      '/auth/login',
      { email: email.toUpperCase(), password: PASSWORD },
      { address },
    );
    const signedInBody = expectJson(login, 200);
    expect(signedInBody).toEqual({
      user: verified.user,
      csrfToken: expect.stringMatching(/^[0-9a-z]{50,}$/),
    });
    const cookie = sessionCookie(login);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', value: expect.any(String) });
    expect(cookie?.secure).toBeUndefined(); // the public URL is http://
    expect(cookie?.expires?.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3_600_000);

    const me = await send('GET', '/v1/me', undefined, { cookie: cookie?.value as string });
    expect(expectJson(me, 200)).toEqual({ ...signedInBody, mfaEnabled: false });

    const logout = await send('POST', '/auth/logout', undefined, {
      cookie: cookie?.value as string,
      csrf: signedInBody.csrfToken,
    });
    expect(logout.statusCode).toBe(204);
    expect(sessionCookie(logout)).toMatchObject({ value: '', path: '/' });
    const after = await send('GET', '/v1/me', undefined, { cookie: cookie?.value as string });
    expect(expectJson(after, 401)).toEqual({
      error: 'The session has ended (signed out or expired): sign in again',
      code: 'unauthorized',
    });
    expect(expectJson(await send('GET', '/v1/me'), 401).code).toBe('unauthorized');
  });

  it('stores the password as argon2id with the OWASP parameters, and sessions and link tokens only hashed', async () => {
    const email = `stored-${engine}@example.com`;
    const { cookie, csrf, user } = await signedIn(email);
    const database = test.database.database;
    const row = await database
      .selectFrom('users')
      .selectAll()
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.password_hash).not.toContain(PASSWORD);
    const session = await database
      .selectFrom('user_sessions')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(session.token_hash).equals(hashSecret(cookie))).toBe(true);
    expect(session.csrf_token).toBe(csrf);
    expect(session.ip).toMatch(/^10\.0\./);
    const tokens = await database
      .selectFrom('email_verification_tokens')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    expect(tokens).toHaveLength(1);
    expect(tokens[0]?.token_hash).toHaveLength(32);
    expect(tokens[0]?.used_at).not.toBeNull();
  });

  it('answers a wrong password and an unknown address identically', async () => {
    const email = `known-${engine}@example.com`;
    await signedIn(email);
    const wrong = await send(
      'POST',
      '/auth/login',
      { email, password: 'not the password' },
      { address: nextAddress() },
    );
    const unknown = await send(
      'POST',
      '/auth/login',
      { email: `nobody-${engine}@example.com`, password: 'not the password' },
      { address: nextAddress() },
    );
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(wrong.statusCode);
    expect(unknown.body).toBe(wrong.body);
    expect(wrong.json()).toEqual({
      error: 'The e-mail address or the password is wrong',
      code: 'unauthorized',
    });
    expect(wrong.cookies).toEqual([]);
    expect(unknown.cookies).toEqual([]);
  });

  it('answers a sign-up of an existing address as a new one, and tells the owner by e-mail instead', async () => {
    const email = `taken-${engine}@example.com`;
    const { user } = await signedIn(email, 'First');
    const again = await send(
      'POST',
      '/auth/signup',
      { email: email.toUpperCase(), password: 'another good passphrase', name: 'Second' },
      { address: nextAddress() },
    );
    const body = expectJson(again, 201);
    expect(Object.keys(body)).toEqual(['user']);
    expect(body.user).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: email.toUpperCase(),
      name: 'Second',
      createdAt: expect.any(String),
    });
    expect(body.user.id).not.toBe(user.id);
    const mail = await smtp.nextMessage(email);
    expect(mail.subject).toBe('You already have an account');
    expect(mail.text).toContain(`${test.configuration.appUrl}/login`);
    // One account, its name and password unchanged.
    const rows = await test.database.database
      .selectFrom('users')
      .select(['id', 'name'])
      .where(sql<string>`lower(email)`, '=', email)
      .execute();
    expect(rows).toEqual([{ id: user.id, name: 'First' }]);
    expectJson(
      await send('POST', '/auth/login', { email, password: PASSWORD }, { address: nextAddress() }),
      200,
    );
  });

  it('sends a new verification link to an unverified address signed up again', async () => {
    const email = `unverified-${engine}@example.com`;
    expectJson(
      await send('POST', '/auth/signup', { email, password: PASSWORD }, { address: nextAddress() }),
      201,
    );
    const first = linkToken(await smtp.nextMessage(email), test.configuration.appUrl);
    expectJson(
      await send('POST', '/auth/signup', { email, password: PASSWORD }, { address: nextAddress() }),
      201,
    );
    const notice = await smtp.nextMessage(email);
    expect(notice.subject).toBe('You already have an account');
    const second = linkToken(notice, test.configuration.appUrl);
    expect(second).not.toBe(first);
    expectJson(await send('POST', '/auth/verify-email', { token: second }, { address: nextAddress() }), 200);
  });

  it('takes a verification token once, and not once it has expired', async () => {
    const address = nextAddress();
    const email = `once-${engine}@example.com`;
    expectJson(await send('POST', '/auth/signup', { email, password: PASSWORD }, { address }), 201);
    const token = linkToken(await smtp.nextMessage(email), test.configuration.appUrl);
    expectJson(await send('POST', '/auth/verify-email', { token }, { address }), 200);
    const reused = await send('POST', '/auth/verify-email', { token }, { address });
    expect(expectJson(reused, 400)).toEqual({
      error:
        'This verification link does not work (already used, expired or unknown): sign up again for a new one',
      code: 'invalid',
    });

    const late = `late-${engine}@example.com`;
    expectJson(await send('POST', '/auth/signup', { email: late, password: PASSWORD }, { address }), 201);
    const lateToken = linkToken(await smtp.nextMessage(late), test.configuration.appUrl);
    const row = await test.database.database
      .selectFrom('email_verification_tokens')
      .select('expires_at')
      .where('token_hash', '=', hashSecret(lateToken))
      .executeTakeFirstOrThrow();
    // Made to expire 24 hours after it was sent.
    expect(row.expires_at.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    expect(row.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 24 * 3_600_000);
    await test.database.database
      .updateTable('email_verification_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('token_hash', '=', hashSecret(lateToken))
      .execute();
    expect(
      expectJson(await send('POST', '/auth/verify-email', { token: lateToken }, { address }), 400).code,
    ).toBe('invalid');
    const user = await test.database.database
      .selectFrom('users')
      .select('email_verified_at')
      .where('email', '=', late)
      .executeTakeFirstOrThrow();
    expect(user.email_verified_at).toBeNull();
    expect(
      expectJson(await send('POST', '/auth/verify-email', { token: 'unknown' }, { address }), 400).code,
    ).toBe('invalid');
  });

  it('refuses short and common passwords, creating nobody and sending nothing', async () => {
    const address = nextAddress();
    const messages = smtp.messages.length;
    for (const [password, error] of [
      ['Tr0ub4d', 'The password must have at least 8 characters'],
      ['baseball', 'This password is one of the most common ones: choose another'],
      ['Password', 'This password is one of the most common ones: choose another'],
    ] as const) {
      const email = `rules-${engine}-${password}@example.com`;
      const response = await send('POST', '/auth/signup', { email, password }, { address });
      expect(expectJson(response, 400), password).toEqual({ error, code: 'invalid' });
      const rows = await test.database.database
        .selectFrom('users')
        .select('id')
        .where('email', '=', email)
        .execute();
      expect(rows).toEqual([]);
    }
    const badEmail = await send(
      'POST',
      '/auth/signup',
      { email: 'not an address', password: PASSWORD },
      { address },
    );
    expect(expectJson(badEmail, 400).code).toBe('invalid');
    expect(smtp.messages.length).toBe(messages);
  });

  it('needs X-Service-CSRF for state-changing requests with the cookie: 403 and nothing changed', async () => {
    const { cookie, csrf } = await signedIn(`csrf-${engine}@example.com`, 'Before');
    const wrongCsrf = `${csrf.slice(0, -1)}${csrf.endsWith('a') ? 'b' : 'a'}`;
    for (const [given, error] of [
      [
        undefined,
        'Send the X-Service-CSRF header with the csrfToken of the sign-in (also in GET /v1/me): a state-changing request made with the session cookie needs it',
      ],
      [wrongCsrf, "The X-Service-CSRF header does not match this session's CSRF token"],
      ['short', "The X-Service-CSRF header does not match this session's CSRF token"],
    ] as const) {
      const patch = await send(
        'PATCH',
        '/v1/me',
        { name: 'After' },
        { cookie, ...(given === undefined ? {} : { csrf: given }) },
      );
      expect(expectJson(patch, 403)).toEqual({ error, code: 'unauthorized' });
      const logout = await send('POST', '/auth/logout', undefined, {
        cookie,
        ...(given === undefined ? {} : { csrf: given }),
      });
      expect(expectJson(logout, 403)).toEqual({ error, code: 'unauthorized' });
      expect(sessionCookie(logout)).toBeUndefined();
    }
    // Nothing changed: the name is the old one and the session lives.
    const me = expectJson(await send('GET', '/v1/me', undefined, { cookie }), 200);
    expect(me.user.name).toBe('Before');
    // With the token the same request goes through.
    const patched = expectJson(await send('PATCH', '/v1/me', { name: 'After' }, { cookie, csrf }), 200);
    expect(patched).toEqual({ user: { ...me.user, name: 'After' }, csrfToken: csrf });
    expect(
      expectJson(await send('PATCH', '/v1/me', { name: null }, { cookie, csrf }), 200).user.name,
    ).toBeUndefined();
    // Reads need no token.
    expect((await send('GET', '/v1/me', undefined, { cookie })).statusCode).toBe(200);
  });

  it('makes project routes answer 403 to a person who is no member, after the CSRF check, changing nothing', async () => {
    const { cookie, csrf } = await signedIn(`outsider-${engine}@example.com`);
    const project = test.first.project;
    const headers = { 'x-service-project': project.id };

    const noProject = await send('GET', '/v1/projects/current', undefined, { cookie });
    expect(expectJson(noProject, 400)).toEqual({
      error: 'Send the project to act on in the X-Service-Project header (signed in with the session cookie)',
      code: 'invalid',
    });
    for (const url of ['/v1/projects/current', '/v1/sessions', '/v1/calls', '/v1/issues', '/v1/inbox']) {
      const response = await send('GET', url, undefined, { cookie, headers });
      expect(expectJson(response, 403), url).toEqual({
        error: `You are not a member of project "${project.id}"`,
        code: 'unauthorized',
      });
    }
    const withoutCsrf = await send(
      'PATCH',
      `/v1/projects/${project.id}`,
      { name: 'taken over' },
      { cookie, headers },
    );
    expect(expectJson(withoutCsrf, 403).error).toMatch(/^Send the X-Service-CSRF header/);
    const member = await send(
      'PATCH',
      `/v1/projects/${project.id}`,
      { name: 'taken over' },
      { cookie, csrf, headers },
    );
    // By id in the path: a project of an organization the person is not in does not exist for them.
    expect(expectJson(member, 404).error).toBe(`No project ${project.id}`);
    const current = expectJson(
      await test.app.inject({ url: '/v1/projects/current', headers: test.first.headers }),
      200,
    );
    expect(current.name).toBe(project.name);
    // An API token is judged alone: a cookie beside it changes nothing.
    const token = await test.app.inject({
      url: '/v1/projects/current',
      headers: { ...test.first.headers, cookie: `service_session=${cookie}` },
    });
    expect(expectJson(token, 200).id).toBe(project.id);
  });

  it('describes an API token on GET /v1/me, and refuses it PATCH /v1/me', async () => {
    const me = expectJson(await test.app.inject({ url: '/v1/me', headers: test.first.headers }), 200);
    expect(me).toEqual({
      token: {
        id: expect.stringMatching(/^tok_/),
        projectId: test.first.project.id,
        organizationId: test.first.project.organization_id,
        scopes: expect.arrayContaining(['sessions:read', 'settings:write']),
      },
    });
    const patch = await test.app.inject({
      method: 'PATCH',
      url: '/v1/me',
      headers: test.first.headers,
      payload: { name: 'x' },
    });
    expect(expectJson(patch, 403).error).toBe(
      'An API token acts for a project, not a person: sign in with the session cookie',
    );
  });

  it('gives a new session at every sign-in and ends the one the browser brought', async () => {
    const email = `renew-${engine}@example.com`;
    const first = await signedIn(email);
    const address = nextAddress();
    const again = await send(
      'POST',
      '/auth/login',
      { email, password: PASSWORD },
      { address, cookie: first.cookie },
    );
    const second = { cookie: sessionCookie(again)?.value as string, csrf: expectJson(again, 200).csrfToken };
    expect(second.cookie).not.toBe(first.cookie);
    expect(second.csrf).not.toBe(first.csrf);
    expect((await send('GET', '/v1/me', undefined, { cookie: first.cookie })).statusCode).toBe(401);
    expect((await send('GET', '/v1/me', undefined, { cookie: second.cookie })).statusCode).toBe(200);
    // A cookie the server never issued is refused, not adopted.
    expect((await send('GET', '/v1/me', undefined, { cookie: 'planted-by-someone' })).statusCode).toBe(401);
  });

  it('ends a session after 7 idle days and 30 days after sign-in, however active', async () => {
    const idle = await signedIn(`idle-${engine}@example.com`);
    const old = await signedIn(`old-${engine}@example.com`);
    const database = test.database.database;
    // Used 6 days ago: alive, and marked used now.
    await database
      .updateTable('user_sessions')
      .set({ last_seen_at: new Date(Date.now() - 6 * 24 * 3_600_000) })
      .where('token_hash', '=', hashSecret(idle.cookie))
      .execute();
    expect((await send('GET', '/v1/me', undefined, { cookie: idle.cookie })).statusCode).toBe(200);
    const seen = await database
      .selectFrom('user_sessions')
      .select('last_seen_at')
      .where('token_hash', '=', hashSecret(idle.cookie))
      .executeTakeFirstOrThrow();
    expect(seen.last_seen_at.getTime()).toBeGreaterThan(Date.now() - 60_000);
    await database
      .updateTable('user_sessions')
      .set({ last_seen_at: new Date(Date.now() - 7 * 24 * 3_600_000 - 60_000) })
      .where('token_hash', '=', hashSecret(idle.cookie))
      .execute();
    expect((await send('GET', '/v1/me', undefined, { cookie: idle.cookie })).statusCode).toBe(401);

    const row = await database
      .selectFrom('user_sessions')
      .select(['created_at', 'expires_at'])
      .where('token_hash', '=', hashSecret(old.cookie))
      .executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(30 * 24 * 3_600_000);
    await database
      .updateTable('user_sessions')
      .set({ expires_at: new Date(Date.now() - 1000), last_seen_at: new Date() })
      .where('token_hash', '=', hashSecret(old.cookie))
      .execute();
    expect((await send('GET', '/v1/me', undefined, { cookie: old.cookie })).statusCode).toBe(401);
  });

  it('re-hashes a password made with other parameters at sign-in', async () => {
    const email = `rehash-${engine}@example.com`;
    const { user } = await signedIn(email);
    const weaker = await hash(PASSWORD, { ...PASSWORD_HASHING, memoryCost: 4096, timeCost: 1 });
    await test.database.database
      .updateTable('users')
      .set({ password_hash: weaker })
      .where('id', '=', user.id)
      .execute();
    expectJson(
      await send('POST', '/auth/login', { email, password: PASSWORD }, { address: nextAddress() }),
      200,
    );
    const row = await test.database.database
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expectJson(
      await send('POST', '/auth/login', { email, password: PASSWORD }, { address: nextAddress() }),
      200,
    );
  });

  it('limits password guesses per account: 429 with Retry-After, even for the right password', async () => {
    const email = `brute-${engine}@example.com`;
    await signedIn(email);
    // Each guess from another address: the per-account limit holds whatever the address.
    for (let attempt = 0; attempt < 9; attempt += 1) {
      const guess = await send(
        'POST',
        '/auth/login',
        { email, password: `guess number ${attempt}` },
        { address: nextAddress() },
      );
      expect(guess.statusCode).toBe(401);
    }
    const limited = await send(
      'POST',
      '/auth/login',
      { email, password: 'one guess too many' },
      { address: nextAddress() },
    );
    expect(limited.statusCode).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(limited.json()).toEqual({
      error: `Too many sign-in attempts for this account: retry after ${retryAfter} s`,
      code: 'invalid',
    });
    const right = await send(
      'POST',
      '/auth/login',
      { email, password: PASSWORD },
      { address: nextAddress() },
    );
    expect(right.statusCode).toBe(429);
    expect(right.cookies).toEqual([]);
    // Another account is not affected.
    const other = `brute-other-${engine}@example.com`;
    await signedIn(other);
  });

  it('limits sign-in attempts per client address across accounts, and sign-ups per address', async () => {
    const address = nextAddress();
    const answers: Json[] = [];
    for (let attempt = 0; attempt < 31; attempt += 1) {
      const response = await send(
        'POST',
        '/auth/login',
        { email: `spray-${attempt}-${engine}@example.com`, password: 'a sprayed password' },
        { address },
      );
      answers.push(response.statusCode);
    }
    expect(answers.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(answers[30]).toBe(429);

    const email = `signup-limit-${engine}@example.com`;
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1)
      statuses.push(
        (await send('POST', '/auth/signup', { email, password: PASSWORD }, { address: nextAddress() }))
          .statusCode,
      );
    expect(statuses).toEqual([201, 201, 201, 429]);
    // Three messages, no fourth.
    for (let count = 0; count < 3; count += 1) await smtp.nextMessage(email);
    await expect(smtp.nextMessage(email, 500)).rejects.toThrow(/No e-mail/);
  });

  it("refuses /auth requests from another site's pages (Origin), and takes the server's own", async () => {
    const email = `origin-${engine}@example.com`;
    const foreign = await send(
      'POST',
      '/auth/signup',
      { email, password: PASSWORD },
      { address: nextAddress(), headers: { origin: 'https://evil.example' } },
    );
    expect(expectJson(foreign, 403)).toEqual({
      error: 'Sign-in requests from "https://evil.example" are not accepted: use the dashboard',
      code: 'unauthorized',
    });
    const login = await send(
      'POST',
      '/auth/login',
      { email, password: PASSWORD },
      { address: nextAddress(), headers: { origin: 'null' } },
    );
    expect(login.statusCode).toBe(403);
    const rows = await test.database.database
      .selectFrom('users')
      .select('id')
      .where('email', '=', email)
      .execute();
    expect(rows).toEqual([]);
    const own = await send(
      'POST',
      '/auth/signup',
      { email, password: PASSWORD },
      { address: nextAddress(), headers: { origin: new URL(test.configuration.appUrl).origin } },
    );
    expect(own.statusCode).toBe(201);
    await smtp.nextMessage(email);
  });

  if (engine === 'postgres') {
    it('makes one account of concurrent sign-ups of one address, and verifies with a token once when used concurrently', async () => {
      const email = `race-${engine}@example.com`;
      const variants = [email, email.toUpperCase(), `Race-${engine}@Example.com`];
      const answers = await Promise.all(
        variants.map((variant) =>
          send('POST', '/auth/signup', { email: variant, password: PASSWORD }, { address: nextAddress() }),
        ),
      );
      expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201]);
      const rows = await test.database.database
        .selectFrom('users')
        .select('id')
        .where(sql<string>`lower(email)`, '=', email)
        .execute();
      expect(rows).toHaveLength(1);
      // One verification e-mail and two notices (each with a link, as the address is not verified).
      const mails = [
        await smtp.nextMessage(email),
        await smtp.nextMessage(email),
        await smtp.nextMessage(email),
      ];
      expect(mails.map((mail) => mail.subject).sort()).toEqual([
        'Verify your e-mail address',
        'You already have an account',
        'You already have an account',
      ]);
      const token = linkToken(
        mails.find((mail) => mail.subject === 'Verify your e-mail address') as ParsedMail,
        test.configuration.appUrl,
      );
      const uses = await Promise.all(
        [1, 2, 3].map(() => send('POST', '/auth/verify-email', { token }, { address: nextAddress() })),
      );
      expect(uses.map((use) => use.statusCode).sort()).toEqual([200, 400, 400]);
    });
  }

  it('documents the accounts routes in OpenAPI', async () => {
    const document = (await test.app.inject('/openapi.json')).json();
    for (const path of ['/auth/signup', '/auth/verify-email', '/auth/login', '/auth/logout'])
      expect(document.paths[path]?.post, path).toBeDefined();
    expect(document.paths['/v1/me'].get.responses['200']).toBeDefined();
    expect(document.paths['/v1/me'].patch.requestBody).toBeDefined();
    const signup = JSON.stringify(document.paths['/auth/signup'].post.requestBody);
    expect(signup).toContain('"email"');
    expect(signup).toContain('"password"');
    expect(JSON.stringify(document.paths['/auth/login'].post.responses['200'])).toContain('csrfToken');
    expect(document.components.securitySchemes.session).toEqual({
      type: 'apiKey',
      in: 'cookie',
      name: 'service_session',
    });
  });
});
