import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, expectAccessible, PASSWORD, startDashboard } from './harness.ts';

// Passkeys in Chromium with the DevTools virtual authenticator (a platform authenticator with
// resident keys and user verification, the person always verified): register one in the profile
// settings, sign out, sign in with it from the sign-in page, rename it, remove it; a removed
// passkey no longer signs in. The server runs on `localhost`: WebAuthn refuses an IP address as
// the relying party id.

let dashboard: Dashboard;

beforeAll(async () => {
  dashboard = await startDashboard({ hostname: 'localhost' });
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

/** A virtual authenticator on the page (CTAP2, internal, resident keys, the person verified). */
async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

async function auditActions(userId: string) {
  const rows = await dashboard.test.database.database
    .selectFrom('audit_log')
    .select(['action', 'details'])
    .where('actor_id', '=', userId)
    .where('action', 'like', 'user.%')
    .orderBy('created_at')
    .execute();
  return rows.map((row) => ({ action: row.action, details: row.details as Record<string, unknown> }));
}

describe('passkeys in the dashboard', () => {
  it('registers a passkey in the profile, signs in with it, renames and removes it', async () => {
    const person = dashboard.people.member;
    const { page, errors } = await dashboard.open('/settings/profile', {
      as: person,
      // Signed out, the app asks who is signed in; the removed passkey's sign-in is refused.
      allow: ['401 /v1/me', '401 /auth/passkeys/login/verify'],
    });
    const { cdp, authenticatorId } = await virtualAuthenticator(page);
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByText('You have no passkey yet.').waitFor();
    await expectAccessible(page);

    await page.getByLabel('Name of the new passkey (optional)').fill('Test laptop');
    await page.getByLabel('Your password (not needed within 10 minutes of signing in)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'Passkey "Test laptop" added' }).waitFor();
    const table = page.getByRole('table', { name: 'Your passkeys' });
    await table.getByRole('row').filter({ hasText: 'Test laptop' }).waitFor();
    expect(await table.getByRole('row').filter({ hasText: 'Test laptop' }).textContent()).toContain('Never');
    await expectAccessible(page);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);
    expect(credentials[0]?.rpId).toBe('localhost');
    const stored = await dashboard.test.database.database
      .selectFrom('passkeys')
      .selectAll()
      .where('user_id', '=', person.id)
      .execute();
    // DevTools gives the id in base64, the server keeps it in base64url.
    expect(stored.map((passkey) => passkey.credential_id)).toEqual([
      Buffer.from(credentials[0]?.credentialId ?? '', 'base64').toString('base64url'),
    ]);

    await page.getByRole('button', { name: 'Rename Test laptop' }).click();
    await page.getByLabel('New name of Test laptop').fill('Work laptop');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Renamed to "Work laptop".' }).waitFor();

    // Signed out, then in again with the passkey: no e-mail address, no password.
    await page.getByRole('banner').getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(/\/login$/);
    await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(/\/sessions$/);
    await page.getByRole('banner').getByText('Member Person').waitFor();
    const signIns = (await auditActions(person.id)).filter((entry) => entry.action === 'user.signed_in');
    expect(signIns.at(-1)?.details).toMatchObject({ method: 'passkey' });
    const [used] = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
    const row = await dashboard.test.database.database
      .selectFrom('passkeys')
      .select(['counter', 'last_used_at'])
      .where('user_id', '=', person.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.counter)).toBe(used?.signCount);
    expect(row.last_used_at).not.toBeNull();

    // Removed, the passkey no longer signs in (the authenticator still holds it).
    await page.goto('/settings/profile');
    const working = page.getByRole('table', { name: 'Your passkeys' }).getByRole('row').filter({
      hasText: 'Work laptop',
    });
    await working.waitFor();
    expect(await working.textContent()).not.toContain('Never');
    await page.getByRole('button', { name: 'Remove Work laptop' }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await page.getByRole('status').filter({ hasText: 'Passkey "Work laptop" removed.' }).waitFor();
    await page.getByText('You have no passkey yet.').waitFor();
    await page.getByRole('banner').getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(/\/login$/);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^This passkey is not known here/);
    expect(page.url()).toMatch(/\/login$/);

    expect((await auditActions(person.id)).map((entry) => entry.action)).toEqual([
      'user.signed_in',
      'user.passkey_added',
      'user.signed_in',
      'user.passkey_removed',
    ]);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);
});
