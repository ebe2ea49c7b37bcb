import { sql } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, type Json } from '../../../test/http.ts';
import { softwareAuthenticator } from '../../../test/software-authenticator.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { hashPassword } from '../accounts/passwords.ts';
import { createSession, insertUser } from '../accounts/repository.ts';

// Passkeys over the API, on both engines, with an authenticator in software
// (test/software-authenticator.ts): registration, sign-in, and each refusal: a challenge used
// twice or expired, a counter that goes back, an unknown credential, another origin or relying
// party, no user verification, another person's passkey. The dashboard's test proves the same
// with Chromium's virtual authenticator.

const PASSWORD = 'correct horse battery staple';
const APP_URL = 'https://app.example.test';
const PUBLIC_URL = 'https://api.example.test';
const RP_ID = 'app.example.test';

describe.each(ENGINES)('passkeys on %s', (engine) => {
  let test: TestApp;
  let passwordHash: string;
  let people = 0;
  let addresses = 0;
  beforeAll(async () => {
    test = await createTestApp(
      engine,
      { logger: false },
      { SVC_APP_URL: APP_URL, SVC_PUBLIC_URL: PUBLIC_URL },
    );
    passwordHash = await hashPassword(PASSWORD);
  });
  afterAll(async () => {
    await test?.close();
  });

  /** A verified person of the test organization (so the audit trail records them), signed in. */
  async function person() {
    people += 1;
    const database = test.database.database;
    const user = await insertUser(database, {
      email: `passkey-${people}-${engine}@example.com`,
      name: `Person ${people}`,
      passwordHash,
      emailVerified: true,
    });
    if (user === undefined) throw new Error('the user was not created');
    await database
      .insertInto('organization_members')
      .values({ organization_id: test.first.project.organization_id, user_id: user.id, role: 'member' })
      .execute();
    const session = await createSession(database, { userId: user.id, ip: undefined, userAgent: undefined });
    const headers = { cookie: `service_session=${session.secret}`, 'x-service-csrf': session.csrfToken };
    return { user, session, headers };
  }

  function send(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    addresses += 1;
    return test.app.inject({
      method,
      url,
      remoteAddress: `10.77.${engine === 'pglite' ? 1 : 2}.${(addresses % 250) + 1}`,
      headers,
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
  }

  /** Registers a passkey of a new software authenticator for `who`: the passkey and the authenticator. */
  async function registered(who: { headers: Record<string, string> }, name?: string) {
    const authenticator = softwareAuthenticator(RP_ID, APP_URL);
    const options = expectJson(
      await send('POST', '/v1/me/passkeys/registration/options', { password: PASSWORD }, who.headers),
      200,
    );
    const passkey = expectJson(
      await send(
        'POST',
        '/v1/me/passkeys/registration/verify',
        { response: authenticator.register(options), ...(name === undefined ? {} : { name }) },
        who.headers,
      ),
      201,
    );
    return { passkey, authenticator };
  }

  async function loginOptions(): Promise<Json> {
    return expectJson(await send('POST', '/auth/passkeys/login/options'), 200);
  }

  async function auditActions(userId: string): Promise<{ action: string; details: Json }[]> {
    const rows = await test.database.database
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('actor_id', '=', userId)
      .orderBy('created_at')
      .execute();
    return rows as { action: string; details: Json }[];
  }

  it('registers a passkey and signs in with it: the cookie, the user and the CSRF token', async () => {
    const alice = await person();
    const options = expectJson(
      await send('POST', '/v1/me/passkeys/registration/options', { password: PASSWORD }, alice.headers),
      200,
    );
    expect(options.rp).toEqual({ id: RP_ID, name: RP_ID });
    expect(options.authenticatorSelection).toMatchObject({
      residentKey: 'required',
      userVerification: 'required',
    });
    expect(Buffer.from(options.user.id, 'base64url').toString()).toBe(alice.user.id);
    const authenticator = softwareAuthenticator(RP_ID, APP_URL);
    const passkey = expectJson(
      await send(
        'POST',
        '/v1/me/passkeys/registration/verify',
        { response: authenticator.register(options), name: 'Laptop' },
        alice.headers,
      ),
      201,
    );
    expect(passkey).toMatchObject({
      name: 'Laptop',
      deviceType: 'multiDevice',
      backedUp: true,
      transports: ['internal'],
    });
    expect(passkey.id).toMatch(/^pk_/);
    expect(expectJson(await send('GET', '/v1/me/passkeys', undefined, alice.headers), 200).items).toEqual([
      passkey,
    ]);
    // The challenge is stored hashed, and gone once used.
    expect(await test.database.database.selectFrom('passkey_challenges').selectAll().execute()).toEqual([]);

    const request = await loginOptions();
    expect(request.rpId).toBe(RP_ID);
    expect(request.userVerification).toBe('required');
    expect(request.allowCredentials ?? []).toEqual([]);
    const challengeRows = await test.database.database.selectFrom('passkey_challenges').selectAll().execute();
    expect(challengeRows).toHaveLength(1);
    expect(Buffer.from(challengeRows[0]?.challenge_hash ?? []).toString('base64url')).not.toBe(
      request.challenge,
    );
    const signedIn = await send(
      'POST',
      '/auth/passkeys/login/verify',
      { response: authenticator.authenticate(request) },
      { origin: APP_URL },
    );
    const body = expectJson(signedIn, 200);
    expect(body.user).toMatchObject({ id: alice.user.id, email: alice.user.email });
    const cookie = signedIn.cookies.find((entry) => entry.name === 'service_session');
    expect(cookie?.httpOnly).toBe(true);
    const me = expectJson(
      await send('GET', '/v1/me', undefined, { cookie: `service_session=${cookie?.value}` }),
      200,
    );
    expect(me.user.id).toBe(alice.user.id);
    expect(me.csrfToken).toBe(body.csrfToken);

    const [stored] = expectJson(await send('GET', '/v1/me/passkeys', undefined, alice.headers), 200).items;
    expect(stored.lastUsedAt).toBeDefined();
    const row = await test.database.database
      .selectFrom('passkeys')
      .select(['counter', 'user_id'])
      .where('id', '=', passkey.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.counter)).toBe(1);
    const actions = await auditActions(alice.user.id);
    expect(actions.map((entry) => entry.action)).toEqual(['user.passkey_added', 'user.signed_in']);
    expect(actions[1]?.details).toMatchObject({ method: 'passkey' });
  });

  it('asks no TOTP code of a person with two-factor sign-in on: user verification is the second factor', async () => {
    const jane = await person();
    const { secret } = expectJson(
      await send('POST', '/v1/me/mfa/enroll', { password: PASSWORD }, jane.headers),
      200,
    );
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    expectJson(await send('POST', '/v1/me/mfa/confirm', { code }, jane.headers), 200);
    const password = await send('POST', '/auth/login', { email: jane.user.email, password: PASSWORD });
    expect(expectJson(password, 200)).toMatchObject({ mfaRequired: true });
    const { authenticator } = await registered(jane);
    const signedIn = await send(
      'POST',
      '/auth/passkeys/login/verify',
      { response: authenticator.authenticate(await loginOptions()) },
      { origin: APP_URL },
    );
    expect(Object.keys(expectJson(signedIn, 200)).sort()).toEqual(['csrfToken', 'user']);
    expect(signedIn.cookies.map((cookie) => cookie.name)).toEqual(['service_session']);
  });

  it('asks for the password again, or a sign-in of the last 10 minutes', async () => {
    const bob = await person();
    const wrong = await send(
      'POST',
      '/v1/me/passkeys/registration/options',
      { password: 'not the password' },
      bob.headers,
    );
    expect(expectJson(wrong, 403)).toEqual({ error: 'The password is wrong', code: 'unauthorized' });
    // A fresh session needs no password (OAuth and SSO people know none).
    expectJson(await send('POST', '/v1/me/passkeys/registration/options', {}, bob.headers), 200);
    await test.database.database
      .updateTable('user_sessions')
      .set({ created_at: sql<Date>`now() - interval '11 minutes'` } as never)
      .where('id', '=', bob.session.id)
      .execute();
    const stale = await send('POST', '/v1/me/passkeys/registration/options', {}, bob.headers);
    expect(expectJson(stale, 403).error).toMatch(/password/);
    expectJson(
      await send('POST', '/v1/me/passkeys/registration/options', { password: PASSWORD }, bob.headers),
      200,
    );
    // Without the CSRF token: refused.
    const noCsrf = await send(
      'POST',
      '/v1/me/passkeys/registration/options',
      { password: PASSWORD },
      { cookie: bob.headers.cookie },
    );
    expect(expectJson(noCsrf, 403).code).toBe('unauthorized');
    // An API token acts for a project, not a person.
    const token = await send('GET', '/v1/me/passkeys', undefined, test.first.headers);
    expect(expectJson(token, 403).code).toBe('unauthorized');
  });

  it('refuses a registration of another origin, relying party, challenge or without user verification', async () => {
    const carol = await person();
    const options = async () =>
      expectJson(
        await send('POST', '/v1/me/passkeys/registration/options', { password: PASSWORD }, carol.headers),
        200,
      );
    const verify = (response: unknown) =>
      send('POST', '/v1/me/passkeys/registration/verify', { response }, carol.headers);
    const authenticator = softwareAuthenticator(RP_ID, APP_URL);
    const cases = [
      { origin: 'https://evil.example.test' },
      { rpId: 'evil.example.test' },
      { userVerified: false },
    ];
    for (const change of cases) {
      const refused = await verify(authenticator.register(await options(), change));
      expect(expectJson(refused, 400).code, JSON.stringify(change)).toBe('invalid');
    }
    // A made-up challenge, and a challenge used once already.
    await options();
    const madeUp = await verify(authenticator.register(await options(), { challenge: 'bm90LWlzc3VlZA' }));
    expect(expectJson(madeUp, 400).error).toMatch(/expired/);
    const first = authenticator.register(await options());
    expectJson(await verify(first), 201);
    expect(expectJson(await verify(first), 400).error).toMatch(/expired/);
    // Another person cannot finish this person's registration.
    const dave = await person();
    const daves = authenticator.register(await options());
    const crossed = await send(
      'POST',
      '/v1/me/passkeys/registration/verify',
      { response: daves },
      dave.headers,
    );
    expect(expectJson(crossed, 400).error).toMatch(/expired/);
    expect(
      expectJson(await send('GET', '/v1/me/passkeys', undefined, carol.headers), 200).items,
    ).toHaveLength(1);
    // The public URL's origin is the server's own: registrations from it are accepted.
    const fromApi = softwareAuthenticator(RP_ID, PUBLIC_URL);
    expectJson(await verify(fromApi.register(await options())), 201);
    // A credential registered already is refused.
    expect(expectJson(await verify(authenticator.register(await options())), 400).error).toMatch(
      /registered already/,
    );
  });

  it('refuses a challenge used twice or expired, an unknown passkey, another origin or relying party', async () => {
    const erin = await person();
    const { authenticator } = await registered(erin);
    const verify = (response: unknown, origin = APP_URL) =>
      send('POST', '/auth/passkeys/login/verify', { response }, { origin });

    const once = authenticator.authenticate(await loginOptions());
    expectJson(await verify(once), 200);
    const again = authenticator.authenticate({
      challenge: JSON.parse(Buffer.from(once.response.clientDataJSON, 'base64url').toString()).challenge,
    });
    expect(expectJson(await verify(again), 401).error).toMatch(/expired/);

    const old = await loginOptions();
    await test.database.database
      .updateTable('passkey_challenges')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .execute();
    expect(expectJson(await verify(authenticator.authenticate(old)), 401).error).toMatch(/expired/);
    expect(
      expectJson(await verify(authenticator.authenticate({ challenge: 'bWFkZS11cA' })), 401).error,
    ).toMatch(/expired/);

    const stranger = softwareAuthenticator(RP_ID, APP_URL);
    const unknown = await verify(stranger.authenticate(await loginOptions()));
    expect(expectJson(unknown, 401)).toMatchObject({ code: 'unauthorized' });
    expect(unknown.json().error).toMatch(/not known/);

    for (const change of [
      { origin: 'https://evil.example.test' },
      { rpId: 'evil.example.test' },
      { userVerified: false },
    ]) {
      const refused = await verify(authenticator.authenticate(await loginOptions(), change));
      expect(refused.statusCode, JSON.stringify(change)).toBe(401);
      expect(refused.cookies).toEqual([]);
    }
    // A page of another site cannot post here at all (login CSRF).
    const foreign = await verify(
      authenticator.authenticate(await loginOptions()),
      'https://evil.example.test',
    );
    expect(expectJson(foreign, 403).code).toBe('unauthorized');
    // The server's own origin is accepted.
    expectJson(await verify(authenticator.authenticate(await loginOptions()), PUBLIC_URL), 200);
  });

  it('refuses a signature counter that goes back or stays, and audits it', async () => {
    const frank = await person();
    const { passkey, authenticator } = await registered(frank);
    const verify = async (counter: number) =>
      send(
        'POST',
        '/auth/passkeys/login/verify',
        { response: authenticator.authenticate(await loginOptions(), { counter }) },
        { origin: APP_URL },
      );
    expectJson(await verify(5), 200);
    const back = await verify(3);
    expect(expectJson(back, 401).error).toMatch(/counter went back/);
    expect((await verify(5)).statusCode).toBe(401);
    expectJson(await verify(6), 200);
    const row = await test.database.database
      .selectFrom('passkeys')
      .select('counter')
      .where('id', '=', passkey.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.counter)).toBe(6);
    const regressions = (await auditActions(frank.user.id)).filter(
      (entry) => entry.action === 'user.passkey_counter_regressed',
    );
    expect(regressions.map((entry) => entry.details)).toEqual([
      { storedCounter: 5, receivedCounter: 3 },
      { storedCounter: 5, receivedCounter: 5 },
    ]);
  });

  it("renames and removes one's own passkeys, never another person's (404)", async () => {
    const gina = await person();
    const hank = await person();
    const { passkey, authenticator } = await registered(gina);
    const renamed = expectJson(
      await send('PATCH', `/v1/me/passkeys/${passkey.id}`, { name: '  Phone  ' }, gina.headers),
      200,
    );
    expect(renamed.name).toBe('Phone');
    expectJson(await send('PATCH', `/v1/me/passkeys/${passkey.id}`, { name: '' }, gina.headers), 400);
    expect(
      expectJson(await send('PATCH', `/v1/me/passkeys/${passkey.id}`, { name: 'Mine' }, hank.headers), 404)
        .code,
    ).toBe('not_found');
    expect(
      expectJson(await send('DELETE', `/v1/me/passkeys/${passkey.id}`, undefined, hank.headers), 404).code,
    ).toBe('not_found');
    expect(expectJson(await send('GET', '/v1/me/passkeys', undefined, hank.headers), 200).items).toEqual([]);
    expect(expectJson(await send('GET', '/v1/me/passkeys', undefined, gina.headers), 200).items).toHaveLength(
      1,
    );

    expectJson(await send('DELETE', `/v1/me/passkeys/${passkey.id}`, undefined, gina.headers), 204);
    expectJson(await send('DELETE', `/v1/me/passkeys/${passkey.id}`, undefined, gina.headers), 404);
    expect(expectJson(await send('GET', '/v1/me/passkeys', undefined, gina.headers), 200).items).toEqual([]);
    const removed = await send(
      'POST',
      '/auth/passkeys/login/verify',
      { response: authenticator.authenticate(await loginOptions()) },
      { origin: APP_URL },
    );
    expect(expectJson(removed, 401).error).toMatch(/not known/);
    const actions = (await auditActions(gina.user.id)).map((entry) => entry.action);
    expect(actions).toEqual(['user.passkey_added', 'user.passkey_removed']);
  });

  it('answers bad input with { error, code } and writes nothing', async () => {
    const ivan = await person();
    const malformed = [
      {},
      { response: {} },
      { response: { id: 'x', rawId: 'x', type: 'public-key', response: {}, clientExtensionResults: {} } },
      {
        response: {
          id: 'x',
          rawId: 'x',
          type: 'public-key',
          response: { clientDataJSON: 'bm90IGpzb24', authenticatorData: 'AA', signature: 'AA' },
          clientExtensionResults: {},
        },
      },
    ];
    for (const body of malformed) {
      const answer = await send('POST', '/auth/passkeys/login/verify', body);
      expect(answer.statusCode, JSON.stringify(body)).toBe(400);
      expect(answer.json().code).toBe('invalid');
      const registration = await send('POST', '/v1/me/passkeys/registration/verify', body, ivan.headers);
      expect(registration.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect(
      await test.database.database
        .selectFrom('passkeys')
        .where('user_id', '=', ivan.user.id)
        .selectAll()
        .execute(),
    ).toEqual([]);
  });
});
