import type { Kysely } from 'kysely';
import { createSession, insertUser } from '../src/modules/accounts/repository.ts';
import type { Database } from '../src/platform/database/schema.ts';
import type { Role } from '../src/platform/database/tables/organizations.table.ts';
import type { TestApp } from './test-app.ts';

// People of an organization, signed in, by role (billing's tests; any test of organization routes).

/** A signed-in person's request headers (cookie, CSRF token), and who they are. */
export interface TestPerson {
  userId: string;
  email: string;
  headers: Record<string, string>;
}

let people = 0;

/**
 * A verified person with a role in the organization and a live session (no password, no e-mail:
 * the rows are written directly, as the accounts tests prove the routes that make them).
 */
export async function personOf(
  database: Kysely<Database>,
  organizationId: string,
  role: Role,
): Promise<TestPerson> {
  people += 1;
  const email = `${role}-${people}-${organizationId.slice(-6).toLowerCase()}@example.com`;
  const user = await insertUser(database, {
    email,
    name: undefined,
    passwordHash: 'not used',
    emailVerified: true,
  });
  if (user === undefined) throw new Error('the user was not created');
  await database
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: user.id, role })
    .execute();
  const session = await createSession(database, { userId: user.id, ip: undefined, userAgent: undefined });
  return {
    userId: user.id,
    email,
    headers: { cookie: `service_session=${session.secret}`, 'x-service-csrf': session.csrfToken },
  };
}

/** `app.inject` as a person (or with other headers), with a JSON body when given. */
export function send(
  test: TestApp,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  return test.app.inject({
    method,
    url,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}
