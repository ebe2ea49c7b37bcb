import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { accountsClient, linkToken, PASSWORD } from './accounts.fixture.ts';

// Magic links (one-time sign-in links by e-mail) over real HTTP with a real SMTP server, on both
// engines.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('magic links on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine, { logger: false }, { SVC_SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await test?.close();
  });
  const { send, sessionCookie, nextAddress, signedIn } = accountsClient(
    () => test,
    () => smtp,
    '10.4',
  );
  const me = (cookie: string) => send('GET', '/v1/me', undefined, { cookie });

  /** Asks for a link for `email` and answers its token from the e-mail. */
  async function magicToken(email: string) {
    expectJson(await send('POST', '/auth/magic-link', { email }, { address: nextAddress() }), 202);
    const mail = await smtp.nextMessage(email);
    expect(mail.subject).toBe('Your sign-in link');
    return linkToken(mail, test.configuration.appUrl, 'magic-link');
  }

  it('signs in through the e-mailed link, once', async () => {
    const email = `magic-${engine}@example.com`;
    const { user } = await signedIn(email);
    const token = await magicToken(email.toUpperCase());
    const response = await send('POST', '/auth/magic-link', { token }, { address: nextAddress() });
    const body = expectJson(response, 200);
    expect(body).toEqual({ user, csrfToken: expect.any(String) });
    const cookie = sessionCookie(response) as string;
    expect((await me(cookie)).statusCode).toBe(200);

    const again = await send('POST', '/auth/magic-link', { token }, { address: nextAddress() });
    expect(expectJson(again, 400)).toEqual({
      error: 'This sign-in link does not work (already used, expired or unknown): ask for a new one',
      code: 'invalid',
    });
    expect(again.cookies).toEqual([]);
  });

  it('refuses an expired link', async () => {
    const email = `magic-expired-${engine}@example.com`;
    const { user } = await signedIn(email);
    const token = await magicToken(email);
    const row = await test.database.database
      .selectFrom('magic_link_tokens')
      .select(['created_at', 'expires_at'])
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBeLessThanOrEqual(15 * 60_000);
    await test.database.database
      .updateTable('magic_link_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', user.id)
      .execute();
    const expired = await send('POST', '/auth/magic-link', { token }, { address: nextAddress() });
    expect(expectJson(expired, 400).code).toBe('invalid');
  });

  it('answers a link request for an unknown address the same, and e-mails it that it has no account', async () => {
    const known = `magic-known-${engine}@example.com`;
    await signedIn(known);
    const unknown = `magic-unknown-${engine}@example.com`;
    const forKnown = await send('POST', '/auth/magic-link', { email: known }, { address: nextAddress() });
    const forUnknown = await send('POST', '/auth/magic-link', { email: unknown }, { address: nextAddress() });
    expect(forKnown.statusCode).toBe(202);
    expect(forUnknown.statusCode).toBe(202);
    expect(forUnknown.body).toBe(forKnown.body);
    await smtp.nextMessage(known);
    const mail = await smtp.nextMessage(unknown);
    expect(mail.text).toContain('it has no account');
    expect(mail.text).not.toContain('magic-link?token=');
  });

  it('asks for the second factor when two-factor sign-in is on', async () => {
    const email = `magic-mfa-${engine}@example.com`;
    const session = await signedIn(email);
    const options = { cookie: session.cookie, csrf: session.csrf };
    const { secret } = expectJson(
      await send('POST', '/v1/me/mfa/enroll', { password: PASSWORD }, options),
      200,
    );
    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    expectJson(await send('POST', '/v1/me/mfa/confirm', { code: totp.generate() }, options), 200);

    const token = await magicToken(email);
    const response = await send('POST', '/auth/magic-link', { token }, { address: nextAddress() });
    const { mfaRequired, mfaToken } = expectJson(response, 200);
    expect(mfaRequired).toBe(true);
    expect(response.cookies).toEqual([]);
    const verified = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken, code: totp.generate({ timestamp: Date.now() + 30_000 }) },
      { address: nextAddress() },
    );
    expect(expectJson(verified, 200).user).toMatchObject({ email });
    expect((await me(sessionCookie(verified) as string)).statusCode).toBe(200);
  });

  it('limits link requests per account', async () => {
    const email = `magic-limit-${engine}@example.com`;
    await signedIn(email);
    for (let index = 0; index < 3; index += 1) await magicToken(email);
    const limited = await send('POST', '/auth/magic-link', { email }, { address: nextAddress() });
    expect(expectJson(limited, 429).error).toMatch(
      /^Too many sign-in link requests for this e-mail address: retry after \d+ s$/,
    );
  });
});
