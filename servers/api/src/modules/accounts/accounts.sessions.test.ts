import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { accountsClient } from './accounts.fixture.ts';

// A person's signed-in sessions (GET/DELETE /v1/me/sessions), on both engines.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('sessions on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine, { logger: false }, { SVC_SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await test?.close();
  });
  const { send, login, signedIn } = accountsClient(
    () => test,
    () => smtp,
    '10.2',
  );
  const me = (cookie: string) => send('GET', '/v1/me', undefined, { cookie });

  it('lists the live sessions with their user agent and address, never a secret, the current one marked', async () => {
    const email = `list-${engine}@example.com`;
    const laptop = await signedIn(email, 'Laptop/1.0');
    const phone = await login(email, undefined, 'Phone/2.0');
    const response = await send('GET', '/v1/me/sessions', undefined, { cookie: laptop.cookie });
    const { sessions } = expectJson(response, 200);
    expect(sessions).toHaveLength(2);
    expect(sessions).toEqual(
      expect.arrayContaining([
        {
          id: expect.stringMatching(/^sgn_/),
          createdAt: expect.any(String),
          lastSeenAt: expect.any(String),
          userAgent: 'Laptop/1.0',
          ip: expect.stringMatching(/^10\.2\./),
          current: true,
        },
        {
          id: expect.stringMatching(/^sgn_/),
          createdAt: expect.any(String),
          lastSeenAt: expect.any(String),
          userAgent: 'Phone/2.0',
          ip: expect.stringMatching(/^10\.2\./),
          current: false,
        },
      ]),
    );
    expect(response.body).not.toContain(laptop.cookie);
    expect(response.body).not.toContain(phone.cookie);
    expect(response.body).not.toContain(laptop.csrf);
    // Someone else's sessions are not listed.
    const other = await signedIn(`list-other-${engine}@example.com`);
    const theirs = expectJson(await send('GET', '/v1/me/sessions', undefined, { cookie: other.cookie }), 200);
    expect(theirs.sessions).toHaveLength(1);
  });

  it('revokes one session (its own only, with the CSRF token), then every other one', async () => {
    const email = `revoke-${engine}@example.com`;
    const current = await signedIn(email);
    const second = await login(email);
    const third = await login(email);
    const stranger = await signedIn(`revoke-stranger-${engine}@example.com`);
    const list = expectJson(await send('GET', '/v1/me/sessions', undefined, { cookie: current.cookie }), 200);
    // One of the two other sessions (the list does not say which device is which but by user agent).
    const secondId = list.sessions.find((session: { current: boolean }) => !session.current).id as string;
    const strangerList = expectJson(
      await send('GET', '/v1/me/sessions', undefined, { cookie: stranger.cookie }),
      200,
    );
    const strangerId = strangerList.sessions[0].id as string;

    const noCsrf = await send('DELETE', `/v1/me/sessions/${secondId}`, undefined, { cookie: current.cookie });
    expect(expectJson(noCsrf, 403).code).toBe('unauthorized');
    const notMine = await send('DELETE', `/v1/me/sessions/${strangerId}`, undefined, {
      cookie: current.cookie,
      csrf: current.csrf,
    });
    // Idempotent: 204, and another person's session is left alone.
    expect(notMine.statusCode).toBe(204);
    expect((await me(stranger.cookie)).statusCode).toBe(200);

    const revoked = await send('DELETE', `/v1/me/sessions/${secondId}`, undefined, {
      cookie: current.cookie,
      csrf: current.csrf,
    });
    expect(revoked.statusCode).toBe(204);
    const statuses = [(await me(second.cookie)).statusCode, (await me(third.cookie)).statusCode];
    expect(statuses.sort()).toEqual([200, 401]);
    expect((await me(current.cookie)).statusCode).toBe(200);

    const others = await send('DELETE', '/v1/me/sessions', undefined, {
      cookie: current.cookie,
      csrf: current.csrf,
    });
    expect(expectJson(others, 200)).toEqual({ ended: 1 });
    expect((await me(second.cookie)).statusCode).toBe(401);
    expect((await me(third.cookie)).statusCode).toBe(401);
    expect((await me(current.cookie)).statusCode).toBe(200);
    const left = expectJson(await send('GET', '/v1/me/sessions', undefined, { cookie: current.cookie }), 200);
    expect(left.sessions).toEqual([expect.objectContaining({ current: true })]);
  });

  it('does not list a session past its idle or absolute end', async () => {
    const email = `ended-${engine}@example.com`;
    const current = await signedIn(email);
    const idle = await login(email);
    const old = await login(email);
    const database = test.database.database;
    await database
      .updateTable('user_sessions')
      .set({ last_seen_at: new Date(Date.now() - 8 * 24 * 3_600_000) })
      .where('csrf_token', '=', idle.csrf)
      .execute();
    await database
      .updateTable('user_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('csrf_token', '=', old.csrf)
      .execute();
    const list = expectJson(await send('GET', '/v1/me/sessions', undefined, { cookie: current.cookie }), 200);
    expect(list.sessions).toEqual([expect.objectContaining({ current: true })]);
  });

  it('answers an API token that it has no sign-in sessions, and ends none', async () => {
    const person = await signedIn(`token-${engine}@example.com`);
    const list = await test.app.inject({ url: '/v1/me/sessions', headers: test.first.headers });
    expect(expectJson(list, 200)).toEqual({ sessions: [] });
    const others = await test.app.inject({
      method: 'DELETE',
      url: '/v1/me/sessions',
      headers: test.first.headers,
    });
    expect(expectJson(others, 200)).toEqual({ ended: 0 });
    const [session] = expectJson(
      await send('GET', '/v1/me/sessions', undefined, { cookie: person.cookie }),
      200,
    ).sessions;
    const one = await test.app.inject({
      method: 'DELETE',
      url: `/v1/me/sessions/${session.id}`,
      headers: test.first.headers,
    });
    expect(one.statusCode).toBe(204);
    expect((await me(person.cookie)).statusCode).toBe(200);
  });
});
