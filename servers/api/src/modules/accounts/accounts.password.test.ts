import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { hashSecret } from '../../platform/secrets.ts';
import { linkToken, PASSWORD } from './accounts.fixture.ts';

// Password reset by e-mail and password change, over real HTTP with a real SMTP server, on both
// engines.

const NEW_PASSWORD = 'a brand new passphrase';

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('passwords on %s', (engine) => {
  let test: TestApp;
  let addresses = 0;
  /** A client address of its own for each caller, so that tests do not share rate limits. */
  const nextAddress = () => {
    addresses += 1;
    return `10.1.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
  };

  beforeAll(async () => {
    test = await createTestApp(engine, { logger: false }, { SVC_SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await test?.close();
  });

  type Options = { cookie?: string; csrf?: string; address?: string };
  function send(method: 'GET' | 'POST', url: string, body?: unknown, options: Options = {}) {
    return test.app.inject({
      method,
      url,
      remoteAddress: options.address ?? '10.8.8.8',
      headers: {
        ...(options.cookie === undefined ? {} : { cookie: `service_session=${options.cookie}` }),
        ...(options.csrf === undefined ? {} : { 'x-service-csrf': options.csrf }),
      },
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
  }

  function sessionCookie(response: LightMyRequestResponse) {
    return response.cookies.find((cookie) => cookie.name === 'service_session');
  }

  async function login(email: string, password = PASSWORD) {
    const response = await send('POST', '/auth/login', { email, password }, { address: nextAddress() });
    const body = expectJson(response, 200);
    return {
      cookie: sessionCookie(response)?.value as string,
      csrf: body.csrfToken as string,
      user: body.user,
    };
  }

  /** Signs up, follows the e-mail's link and signs in: the cookie's value and the CSRF token. */
  async function signedIn(email: string) {
    const address = nextAddress();
    expectJson(await send('POST', '/auth/signup', { email, password: PASSWORD }, { address }), 201);
    const token = linkToken(await smtp.nextMessage(email), test.configuration.appUrl);
    expectJson(await send('POST', '/auth/verify-email', { token }, { address }), 200);
    return login(email);
  }

  const me = (cookie: string) => send('GET', '/v1/me', undefined, { cookie });

  it('resets a forgotten password through the e-mailed link, once, and ends every session', async () => {
    const email = `forgot-${engine}@example.com`;
    const first = await signedIn(email);
    const second = await login(email);

    const forgot = await send(
      'POST',
      '/auth/password/forgot',
      { email: email.toUpperCase() },
      {
        address: nextAddress(),
      },
    );
    expect(expectJson(forgot, 202)).toEqual({});
    const mail = await smtp.nextMessage(email);
    expect(mail.subject).toBe('Reset your password');
    const token = linkToken(mail, test.configuration.appUrl, 'reset-password');
    // A second link, asked for meanwhile: it stops working once the first one is used.
    expectJson(await send('POST', '/auth/password/forgot', { email }, { address: nextAddress() }), 202);
    const otherToken = linkToken(await smtp.nextMessage(email), test.configuration.appUrl, 'reset-password');
    const stored = await test.database.database
      .selectFrom('password_reset_tokens')
      .selectAll()
      .where('token_hash', '=', hashSecret(token))
      .executeTakeFirstOrThrow();
    expect(stored.user_id).toBe(first.user.id);
    expect(stored.expires_at.getTime() - stored.created_at.getTime()).toBeGreaterThan(3_590_000);
    expect(stored.expires_at.getTime() - stored.created_at.getTime()).toBeLessThanOrEqual(3_600_000);

    // The password rules of sign-up; a refused password leaves the token usable.
    const weak = await send('POST', '/auth/password/reset', { token, password: 'password' });
    expect(expectJson(weak, 400).code).toBe('invalid');

    const reset = await send('POST', '/auth/password/reset', { token, password: NEW_PASSWORD });
    expect(expectJson(reset, 200).user).toMatchObject({ id: first.user.id, email });
    expect((await me(first.cookie)).statusCode).toBe(401);
    expect((await me(second.cookie)).statusCode).toBe(401);

    const again = await send('POST', '/auth/password/reset', { token, password: 'yet another passphrase' });
    expect(expectJson(again, 400)).toEqual({
      error: 'This password reset link does not work (already used, expired or unknown): ask for a new one',
      code: 'invalid',
    });
    const other = await send('POST', '/auth/password/reset', {
      token: otherToken,
      password: 'yet another passphrase',
    });
    expect(expectJson(other, 400).code).toBe('invalid');
    const old = await send('POST', '/auth/login', { email, password: PASSWORD }, { address: nextAddress() });
    expect(old.statusCode).toBe(401);
    const fresh = await login(email, NEW_PASSWORD);
    expect((await me(fresh.cookie)).statusCode).toBe(200);
  });

  it('answers a reset request for an unknown address the same, and e-mails it that it has no account', async () => {
    const known = `known-reset-${engine}@example.com`;
    await signedIn(known);
    const unknown = `unknown-reset-${engine}@example.com`;
    const forKnown = await send(
      'POST',
      '/auth/password/forgot',
      { email: known },
      { address: nextAddress() },
    );
    const forUnknown = await send(
      'POST',
      '/auth/password/forgot',
      { email: unknown },
      {
        address: nextAddress(),
      },
    );
    expect(forKnown.statusCode).toBe(202);
    expect(forUnknown.statusCode).toBe(forKnown.statusCode);
    expect(forUnknown.body).toBe(forKnown.body);
    await smtp.nextMessage(known);
    const mail = await smtp.nextMessage(unknown);
    expect(mail.subject).toBe('Reset your password');
    expect(mail.text).toContain('it has no account');
    expect(mail.text).not.toContain('reset-password?token=');
  });

  it('refuses an expired or unknown reset token, and limits reset requests per address', async () => {
    const email = `expired-reset-${engine}@example.com`;
    const { user } = await signedIn(email);
    const address = nextAddress();
    expectJson(await send('POST', '/auth/password/forgot', { email }, { address }), 202);
    const token = linkToken(await smtp.nextMessage(email), test.configuration.appUrl, 'reset-password');
    await test.database.database
      .updateTable('password_reset_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', user.id)
      .execute();
    expect((await send('POST', '/auth/password/reset', { token, password: NEW_PASSWORD })).statusCode).toBe(
      400,
    );
    const unknown = await send('POST', '/auth/password/reset', { token: 'nothing', password: NEW_PASSWORD });
    expect(expectJson(unknown, 400).code).toBe('invalid');
    // The old password still works.
    await login(email);

    // 3 per account per hour (two more here), then 429.
    for (let index = 0; index < 2; index += 1) {
      expectJson(await send('POST', '/auth/password/forgot', { email }, { address: nextAddress() }), 202);
      await smtp.nextMessage(email);
    }
    const limited = await send('POST', '/auth/password/forgot', { email }, { address: nextAddress() });
    expect(expectJson(limited, 429).error).toMatch(
      /^Too many password reset requests for this e-mail address: retry after \d+ s$/,
    );
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('changes the password with the current one, keeps this session and ends the others', async () => {
    const email = `change-${engine}@example.com`;
    const current = await signedIn(email);
    const other = await login(email);
    const change = (body: unknown) =>
      send('POST', '/v1/me/password', body, { cookie: current.cookie, csrf: current.csrf });

    const noCsrf = await send(
      'POST',
      '/v1/me/password',
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      { cookie: current.cookie },
    );
    expect(expectJson(noCsrf, 403).code).toBe('unauthorized');
    const wrong = await change({ currentPassword: 'not the password', newPassword: NEW_PASSWORD });
    expect(expectJson(wrong, 403)).toEqual({ error: 'The current password is wrong', code: 'unauthorized' });
    const weak = await change({ currentPassword: PASSWORD, newPassword: 'short' });
    expect(expectJson(weak, 400).code).toBe('invalid');
    // Nothing changed so far.
    expect((await me(other.cookie)).statusCode).toBe(200);

    const changed = await change({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(expectJson(changed, 200)).toEqual({ user: current.user, csrfToken: current.csrf });
    expect((await me(current.cookie)).statusCode).toBe(200);
    expect((await me(other.cookie)).statusCode).toBe(401);
    const old = await send('POST', '/auth/login', { email, password: PASSWORD }, { address: nextAddress() });
    expect(old.statusCode).toBe(401);
    await login(email, NEW_PASSWORD);
  });

  it('limits password checks of a signed-in person', async () => {
    const email = `change-limit-${engine}@example.com`;
    const session = await signedIn(email);
    const options = { cookie: session.cookie, csrf: session.csrf };
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const body = { currentPassword: 'not the password', newPassword: NEW_PASSWORD };
      expect((await send('POST', '/v1/me/password', body, options)).statusCode).toBe(403);
    }
    const limited = await send(
      'POST',
      '/v1/me/password',
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      options,
    );
    expect(expectJson(limited, 429).error).toMatch(
      /^Too many password checks for this account: retry after \d+ s$/,
    );
    await login(email); // the password did not change
  });

  it('refuses a password change to an API token', async () => {
    const response = await test.app.inject({
      method: 'POST',
      url: '/v1/me/password',
      headers: test.first.headers,
      payload: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
    });
    expect(expectJson(response, 403).code).toBe('unauthorized');
  });
});
