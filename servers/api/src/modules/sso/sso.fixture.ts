import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { createBrowser } from '../../../test/sso-oidc-idp.ts';
import type { TestApp } from '../../../test/test-app.ts';
import type { Database } from '../../platform/database/schema.ts';
import { createId } from '../../platform/ids.ts';
import { hashPassword, insertUser } from '../accounts/index.ts';

// What the SSO tests share: people of the test organization, a verified domain, signing in with a
// password over HTTP, and a self-signed certificate for SAML connections made by hand.

const PASSWORD = 'correct horse battery staple';

/** A self-signed certificate (CN=idp.example.com, valid for 100 years), for SAML connections' settings. */
export const IDP_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIDFzCCAf+gAwIBAgIUP0H0Vzy3NVeP5AnFNOXiFmrXov4wDQYJKoZIhvcNAQEL
BQAwGjEYMBYGA1UEAwwPaWRwLmV4YW1wbGUuY29tMCAXDTI2MTEyOTExMTU1MVoY
DzIxMjYxMTA1MTExNTUxWjAaMRgwFgYDVQQDDA9pZHAuZXhhbXBsZS5jb20wggEi
MA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQDMdUpy3itomImFT9VB4zuYs2yP
5Y2gqpCaCXWhW7DbS1M23w0p8bSeHZTNChPehLTjFwo2m6QNFdJ+1lAegiHecTBG
Pa3PHtmJZxnIg1CQv2gxY8OhbmmcFgE7EPb2O4jeqRnyXjMG10l8UjvGce2+VZDL
P8eLoVmYqsALCR1Lgv5mW1X5xv87cKSld3+ThvrCM9VGbuwwXFqXjiq5dN719sP1
MknJ7toPHXGPK7qEQGMrPN5z6PhnMk+hNqUMw77LIdvbO9IRh8XH5ksLTnVdc4S7
PZGhVOQqurSaSe1SeN6Jsh6J+5afswCRitaOnX9PK898PlKaMH3SCv8fjqy1AgMB
AAGjUzBRMB0GA1UdDgQWBBQqedAhRQ7cii6znVLT6cdAgufKFTAfBgNVHSMEGDAW
gBQqedAhRQ7cii6znVLT6cdAgufKFTAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3
DQEBCwUAA4IBAQAQco+H376zANoomUMnYE/P/LOU26ffgm4GxVT+nhU6LH6S12h5
HWPLDuFF+vBMZKIXOZYwsZovfPrvabnrKdInMjQQaWxkSub+2KoSqY0I5sfOtpFE
JE8gtSbzZPLtf0SnnjB04bW1WZM4smZmtYkSBrDbfTrSCfxUaXuw5JA7/rNTJIUh
4gdTfIQU5hj/IbRjcfv0cn3Dj77CXeIU8i/lL2ZQMwMeQa80nhVliPCkBlVfGeHj
psKw+4qESnR4RGK0mxOrSe/YZKC/F5UIz9RVFZcbzjG17c2aotU55iHuzZd1XloU
O26Pqy6/Ey02oKWQ6IYJJzeD+C5XC1RJpSNK
-----END CERTIFICATE-----`;

/** A TCP port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A person with a verified address and a password, a member of the organization with `role` (or none). */
export async function addPerson(
  test: TestApp,
  email: string,
  role?: 'owner' | 'admin' | 'member' | 'viewer',
  organizationId = test.first.project.organization_id,
): Promise<{ id: string; email: string }> {
  const user = await insertUser(test.database.database, {
    email,
    name: undefined,
    passwordHash: await hashPassword(PASSWORD),
    emailVerified: true,
  });
  if (user === undefined) throw new Error(`${email} exists`);
  if (role !== undefined)
    await test.database.database
      .insertInto('organization_members')
      .values({ organization_id: organizationId, user_id: user.id, role })
      .execute();
  return { id: user.id, email };
}

/** Marks `domain` verified by the organization (the domains routes are tested on their own). */
export async function verifyDomain(database: Kysely<Database>, domain: string, organizationId: string) {
  await database
    .insertInto('sso_domains')
    .values({
      id: createId('dom'),
      organization_id: organizationId,
      domain,
      verification_token: 'svc-verification=test',
      verified_at: new Date(),
    })
    .execute();
}

/** Signs in with a password through the browser; the `{ user, csrfToken }` answer and the status. */
export async function passwordLogin(
  browser: ReturnType<typeof createBrowser>,
  base: string,
  email: string,
): Promise<{ status: number; body: { csrfToken?: string; error?: string } }> {
  const { response } = await browser.navigate(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  return { status: response.status, body: (await response.json()) as { csrfToken?: string; error?: string } };
}

/** A JSON request through the browser (its cookies), with the CSRF token. */
export async function call(
  browser: ReturnType<typeof createBrowser>,
  base: string,
  csrf: string,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers of tests
): Promise<{ status: number; json: any }> {
  const { response } = await browser.navigate(`${base}${path}`, {
    method,
    headers: {
      'x-service-csrf': csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : JSON.parse(text) };
}

export function expectStatus(answer: { status: number; json: unknown }, status: number) {
  expect(answer.status, JSON.stringify(answer.json)).toBe(status);
}
