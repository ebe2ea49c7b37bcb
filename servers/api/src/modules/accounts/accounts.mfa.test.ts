import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { accountsClient, PASSWORD } from './accounts.fixture.ts';

// Two-factor sign-in (TOTP, recovery codes) over real HTTP, on both engines. Codes are computed
// here with the same library from the secret that enrolling answers.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('two-factor sign-in on %s', (engine) => {
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
    '10.3',
  );
  const me = (cookie: string) => send('GET', '/v1/me', undefined, { cookie });

  /** The TOTP code of `secret` at `offsetMs` from now. */
  function code(secret: string, offsetMs = 0): string {
    return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offsetMs });
  }

  /** Signs up and in, enrolls and confirms: the session, the TOTP secret and the recovery codes. */
  async function withMfa(email: string) {
    const session = await signedIn(email);
    const options = { cookie: session.cookie, csrf: session.csrf };
    expect(expectJson(await send('GET', '/v1/me', undefined, options), 200).mfaEnabled).toBe(false);
    const { secret } = expectJson(
      await send('POST', '/v1/me/mfa/enroll', { password: PASSWORD }, options),
      200,
    );
    const confirmed = expectJson(
      await send('POST', '/v1/me/mfa/confirm', { code: code(secret) }, options),
      200,
    );
    expect(expectJson(await send('GET', '/v1/me', undefined, options), 200).mfaEnabled).toBe(true);
    return { ...session, secret: secret as string, recoveryCodes: confirmed.recoveryCodes as string[] };
  }

  async function passwordStep(email: string) {
    const response = await send(
      'POST',
      '/auth/login',
      { email, password: PASSWORD },
      { address: nextAddress() },
    );
    expect(response.cookies).toEqual([]);
    return expectJson(response, 200).mfaToken as string;
  }

  it('enrolls with an otpauth URI, stores the secret sealed, and turns on with a first code', async () => {
    const email = `enroll-${engine}@example.com`;
    const session = await signedIn(email);
    const options = { cookie: session.cookie, csrf: session.csrf };
    const noCsrf = await send(
      'POST',
      '/v1/me/mfa/enroll',
      { password: PASSWORD },
      { cookie: session.cookie },
    );
    expect(expectJson(noCsrf, 403).code).toBe('unauthorized');
    const wrongPassword = await send('POST', '/v1/me/mfa/enroll', { password: 'not the password' }, options);
    expect(expectJson(wrongPassword, 403)).toEqual({ error: 'The password is wrong', code: 'unauthorized' });
    const enrolled = expectJson(
      await send('POST', '/v1/me/mfa/enroll', { password: PASSWORD }, options),
      200,
    );
    expect(enrolled.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(enrolled.otpauthUri).toMatch(/^otpauth:\/\/totp\/Service:/);
    expect(enrolled.otpauthUri).toContain(`secret=${enrolled.secret}`);
    expect(enrolled.otpauthUri).toContain('period=30');
    const row = await test.database.database
      .selectFrom('user_mfa')
      .selectAll()
      .where('user_id', '=', session.user.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(row.sealed_secret).toString('latin1')).not.toContain(enrolled.secret);
    expect(row.enabled_at).toBeNull();
    // Not on yet: the password alone signs in.
    const plain = await send(
      'POST',
      '/auth/login',
      { email, password: PASSWORD },
      { address: nextAddress() },
    );
    expect(expectJson(plain, 200).csrfToken).toEqual(expect.any(String));

    const wrong = await send('POST', '/v1/me/mfa/confirm', { code: '000000' }, options);
    expect(expectJson(wrong, 403).code).toBe('unauthorized');
    const confirmed = expectJson(
      await send('POST', '/v1/me/mfa/confirm', { code: code(enrolled.secret) }, options),
      200,
    );
    expect(confirmed.recoveryCodes).toHaveLength(10);
    expect(new Set(confirmed.recoveryCodes).size).toBe(10);
    for (const recovery of confirmed.recoveryCodes) expect(recovery).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}$/);
    const stored = await test.database.database
      .selectFrom('mfa_recovery_codes')
      .select('code_hash')
      .where('user_id', '=', session.user.id)
      .execute();
    expect(stored.map((code) => code.code_hash.length)).toEqual(Array(10).fill(32));
    const again = await send('POST', '/v1/me/mfa/enroll', { password: PASSWORD }, options);
    expect(expectJson(again, 400).error).toBe('Two-factor sign-in is on already: disable it first');
  });

  it('signs in with the password then a TOTP code, each code once, each mfaToken once', async () => {
    const email = `totp-${engine}@example.com`;
    const { secret } = await withMfa(email);
    const mfaToken = await passwordStep(email);
    const wrong = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken, code: '000000' },
      { address: nextAddress() },
    );
    expect(expectJson(wrong, 401)).toEqual({
      error: 'The code is wrong (or used already)',
      code: 'unauthorized',
    });
    // The next step's code (the confirmation took this one): within the ±1 step window.
    const next = code(secret, 30_000);
    const verified = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken, code: next },
      { address: nextAddress() },
    );
    const body = expectJson(verified, 200);
    expect(body).toEqual({ user: expect.objectContaining({ email }), csrfToken: expect.any(String) });
    expect((await me(sessionCookie(verified) as string)).statusCode).toBe(200);

    // The same token again, and the same code again with a new token: refused.
    const reusedToken = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken, code: next },
      { address: nextAddress() },
    );
    expect(expectJson(reusedToken, 401).error).toBe(
      'This sign-in has expired (or was finished already): sign in again with the password',
    );
    const second = await passwordStep(email);
    const reusedCode = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken: second, code: next },
      { address: nextAddress() },
    );
    expect(expectJson(reusedCode, 401).error).toBe('The code is wrong (or used already)');
    expect(reusedCode.cookies).toEqual([]);

    // An mfaToken past its 5 minutes.
    await test.database.database
      .updateTable('mfa_challenges')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('used_at', 'is', null)
      .execute();
    const expired = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken: second, code: code(secret, 60_000) },
      { address: nextAddress() },
    );
    expect(expectJson(expired, 401).code).toBe('unauthorized');
  });

  it('signs in with each recovery code once, and a new set replaces the old one', async () => {
    const email = `recovery-${engine}@example.com`;
    const session = await withMfa(email);
    const [first, second] = session.recoveryCodes as [string, string];
    const once = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken: await passwordStep(email), code: first.toUpperCase() },
      { address: nextAddress() },
    );
    expect(expectJson(once, 200).csrfToken).toEqual(expect.any(String));
    const twice = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken: await passwordStep(email), code: first },
      { address: nextAddress() },
    );
    expect(twice.statusCode).toBe(401);

    const refused = await send(
      'POST',
      '/v1/me/mfa/recovery-codes',
      { password: 'not the password' },
      { cookie: session.cookie, csrf: session.csrf },
    );
    expect(expectJson(refused, 403).code).toBe('unauthorized');
    const renewed = expectJson(
      await send(
        'POST',
        '/v1/me/mfa/recovery-codes',
        { password: PASSWORD },
        {
          cookie: session.cookie,
          csrf: session.csrf,
        },
      ),
      200,
    );
    expect(renewed.recoveryCodes).toHaveLength(10);
    const old = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken: await passwordStep(email), code: second },
      { address: nextAddress() },
    );
    expect(old.statusCode).toBe(401);
    const fresh = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken: await passwordStep(email), code: renewed.recoveryCodes[0] },
      { address: nextAddress() },
    );
    expect(fresh.statusCode).toBe(200);
  });

  it('turns off with the password or a code, after which the password alone signs in', async () => {
    const email = `disable-${engine}@example.com`;
    const session = await withMfa(email);
    const options = { cookie: session.cookie, csrf: session.csrf };
    const wrong = await send('POST', '/v1/me/mfa/disable', { password: 'not the password' }, options);
    expect(expectJson(wrong, 403)).toEqual({ error: 'The password is wrong', code: 'unauthorized' });
    const wrongCode = await send('POST', '/v1/me/mfa/disable', { code: '000000' }, options);
    expect(expectJson(wrongCode, 403).code).toBe('unauthorized');
    await passwordStep(email); // still on
    const off = await send('POST', '/v1/me/mfa/disable', { password: PASSWORD }, options);
    expect(off.statusCode).toBe(204);
    const plain = await send(
      'POST',
      '/auth/login',
      { email, password: PASSWORD },
      { address: nextAddress() },
    );
    expect(expectJson(plain, 200).csrfToken).toEqual(expect.any(String));
    expect(sessionCookie(plain)).toEqual(expect.any(String));
    const offAgain = await send('POST', '/v1/me/mfa/disable', { password: PASSWORD }, options);
    expect(expectJson(offAgain, 400).error).toBe('Two-factor sign-in is off');

    // On again, off with a TOTP code.
    const other = await withMfa(`disable-code-${engine}@example.com`);
    const byCode = await send(
      'POST',
      '/v1/me/mfa/disable',
      { code: code(other.secret, 30_000) },
      { cookie: other.cookie, csrf: other.csrf },
    );
    expect(byCode.statusCode).toBe(204);
  });

  it('limits code checks of a signed-in person', async () => {
    const session = await signedIn(`confirm-limit-${engine}@example.com`);
    const options = { cookie: session.cookie, csrf: session.csrf };
    expectJson(await send('POST', '/v1/me/mfa/enroll', { password: PASSWORD }, options), 200);
    // The enrollment's password check counts too: 9 more, then 429.
    for (let attempt = 0; attempt < 9; attempt += 1)
      expect((await send('POST', '/v1/me/mfa/confirm', { code: '000000' }, options)).statusCode).toBe(403);
    const limited = await send('POST', '/v1/me/mfa/confirm', { code: '000000' }, options);
    expect(expectJson(limited, 429).error).toMatch(
      /^Too many code and password checks for this account: retry after \d+ s$/,
    );
  });

  it('limits two-factor attempts per account', async () => {
    const email = `mfa-limit-${engine}@example.com`;
    await withMfa(email);
    const mfaToken = await passwordStep(email);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const response = await send(
        'POST',
        '/auth/mfa/verify',
        { mfaToken, code: '000000' },
        { address: nextAddress() },
      );
      expect(response.statusCode).toBe(401);
    }
    const limited = await send(
      'POST',
      '/auth/mfa/verify',
      { mfaToken, code: '000000' },
      { address: nextAddress() },
    );
    expect(expectJson(limited, 429).error).toMatch(
      /^Too many two-factor codes for this account: retry after \d+ s$/,
    );
  });

  if (engine === 'postgres') {
    it('accepts one of two sign-ins with the same code at once, and one use of a recovery code at once', async () => {
      const email = `mfa-race-${engine}@example.com`;
      const { secret, recoveryCodes } = await withMfa(email);
      const next = code(secret, 30_000);
      const tokens = [await passwordStep(email), await passwordStep(email)];
      const answers = await Promise.all(
        tokens.map((mfaToken) =>
          send('POST', '/auth/mfa/verify', { mfaToken, code: next }, { address: nextAddress() }),
        ),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401]);
      const recovery = recoveryCodes[0] as string;
      const more = [await passwordStep(email), await passwordStep(email)];
      const recovered = await Promise.all(
        more.map((mfaToken) =>
          send('POST', '/auth/mfa/verify', { mfaToken, code: recovery }, { address: nextAddress() }),
        ),
      );
      expect(recovered.map((answer) => answer.statusCode).sort()).toEqual([200, 401]);
    });
  }
});
