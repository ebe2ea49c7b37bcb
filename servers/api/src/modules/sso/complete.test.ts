import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personOf } from '../../../test/people.ts';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import { createId } from '../../platform/ids.ts';
import { createOrganization } from '../orgs/organizations.ts';
import { resolveSsoPerson } from './complete.ts';
import { insertConnection } from './repository.ts';
import { verifyDomain } from './sso.fixture.ts';

// Who an SSO sign-in is for, and just-in-time membership within the plan's seats, against a real
// database: a person refused for want of a seat leaves nothing behind (no account, no link).

const origin = { ip: '203.0.113.9', userAgent: 'test' };

describe.each(ENGINES)('resolveSsoPerson on %s', (engine) => {
  let database: TestDatabase;
  let organizationId: string;
  let connection: Awaited<ReturnType<typeof insertConnection>>;
  const domain = `seats-${engine}.example`;

  beforeAll(async () => {
    database = await openTestDatabase(engine);
    const db = database.database;
    organizationId = (await createOrganization(db, 'Seats org')).id;
    await verifyDomain(db, domain, organizationId);
    connection = await insertConnection(db, {
      id: createId('sso'),
      organizationId,
      type: 'saml',
      name: 'Seats IdP',
      defaultRole: 'member',
      enabled: true,
      saml: { entityId: 'https://idp.example/seats', ssoUrl: 'https://idp.example/sso', certificates: [] },
    });
    // The one seat of a one-seat plan.
    await personOf(db, organizationId, 'owner');
  });
  afterAll(async () => {
    await database?.dispose();
  });

  const people = (email: string) =>
    database.database
      .selectFrom('users')
      .select(['id', 'email_verified_at'])
      .where('email', '=', email)
      .execute();
  const links = (subject: string) =>
    database.database.selectFrom('sso_identities').select('user_id').where('subject', '=', subject).execute();

  it('refuses a new person when every seat is taken, and makes no account and no link', async () => {
    const email = `late@${domain}`;
    const result = await resolveSsoPerson(
      database.database,
      connection,
      { subject: 'late-subject', email, emailVerified: true },
      origin,
      async () => ({ seats: 1, projects: null }),
    );
    expect(result).toEqual({
      refusal: { reason: 'seats', message: `The organization's plan allows 1 seats: ${email} cannot join` },
    });
    expect(await people(email)).toEqual([]);
    expect(await links('late-subject')).toEqual([]);
  });

  it('with a seat free: a verified account, a link and membership with the default role; next time by subject', async () => {
    const email = `ada@${domain}`;
    const seats = async () => ({ seats: 2, projects: null });
    const first = await resolveSsoPerson(
      database.database,
      connection,
      { subject: 'ada-subject', email, emailVerified: true, name: 'Ada' },
      origin,
      seats,
    );
    if (!('user' in first)) throw new Error(JSON.stringify(first));
    expect(first.user.email).toBe(email);
    const [person] = await people(email);
    expect(person?.email_verified_at).toBeInstanceOf(Date);
    expect(await links('ada-subject')).toEqual([{ user_id: first.user.id }]);
    const membership = await database.database
      .selectFrom('organization_members')
      .select('role')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', first.user.id)
      .executeTakeFirstOrThrow();
    expect(membership.role).toBe('member');

    // Every seat is now taken, but a member signs in again (by subject, without an address).
    const again = await resolveSsoPerson(
      database.database,
      connection,
      { subject: 'ada-subject' },
      origin,
      async () => ({ seats: 2, projects: null }),
    );
    expect(again).toEqual({ user: expect.objectContaining({ id: first.user.id }) });
    expect(await people(email)).toHaveLength(1);
  });
});
