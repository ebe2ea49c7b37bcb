import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../test/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../test/smtp.ts';
import { createTestApp, type TestApp } from '../test/test-app.ts';
import { ENGINES } from '../test/test-database.ts';
import { accountsClient, linkToken, PASSWORD } from './modules/accounts/accounts.fixture.ts';
import { scopesOfRole } from './modules/orgs/roles.ts';
import { type Role, SCOPES, type Scope } from './platform/http/authentication.ts';

// Who may call what: every route of the OpenAPI document, with every role of an organization, a
// person of another organization, no credentials, and an API token of each scope. The table below
// is servers/api/README.md's Roles table as code; a route missing from it fails the test. Refused
// calls must answer 401, 403 (or 404 where the resource is not the caller's to know) and change
// nothing in the database; allowed calls must not answer 401 or 403 (they may answer 400 or 404:
// the walk sends no bodies and made-up ids).

/** What a route needs. */
type Requirement =
  /** Anyone; the walk does not call these (sign-in, ingest by project key, share links). */
  | { kind: 'public' }
  /** A project's scope: a token holding it, or a person whose role holds it in the project's organization. */
  | { kind: 'scope'; scope: Scope; personOnly?: boolean }
  /** Any one of several scopes of a project (the route answers with what those held let it read). */
  | { kind: 'anyScope'; scopes: readonly Scope[] }
  /** Any signed-in person (about themselves); `token` when an API token may call it too. */
  | { kind: 'person'; token?: boolean }
  /** Any member of the organization (a non-member gets 404). */
  | { kind: 'member' }
  /** An admin or an owner of the organization (a non-member gets 404). */
  | { kind: 'admin' }
  /** An owner of the organization (a non-member gets 404): billing's checkout and portal. */
  | { kind: 'owner' };

const PUBLIC: Requirement = { kind: 'public' };
const PERSON: Requirement = { kind: 'person' };
const MEMBER: Requirement = { kind: 'member' };
const ADMIN: Requirement = { kind: 'admin' };
const OWNER: Requirement = { kind: 'owner' };
const scope = (name: Scope, personOnly = false): Requirement => ({ kind: 'scope', scope: name, personOnly });

const ROUTES: Record<string, Requirement> = {
  'POST /auth/signup': PUBLIC,
  'POST /auth/verify-email': PUBLIC,
  'POST /auth/login': PUBLIC,
  'POST /auth/logout': PUBLIC,
  'POST /auth/password/forgot': PUBLIC,
  'POST /auth/password/reset': PUBLIC,
  'POST /auth/mfa/verify': PUBLIC,
  'POST /auth/magic-link': PUBLIC,
  'POST /auth/invitations/{token}/accept': PUBLIC,
  'POST /auth/passkeys/login/options': PUBLIC,
  'POST /auth/passkeys/login/verify': PUBLIC,
  // Sign-in with Google, Microsoft and GitHub: browser redirects, and the list of providers.
  'GET /auth/oauth/providers': PUBLIC,
  'GET /auth/oauth/{provider}/start': PUBLIC,
  'GET /auth/oauth/{provider}/callback': PUBLIC,
  'GET /v1/config': PUBLIC,
  'POST /v1/ingest': PUBLIC,
  'GET /share/{token}': PUBLIC,
  'GET /share/{token}/chunks/{seq}': PUBLIC,
  'GET /share/{token}/assets': PUBLIC,
  'GET /share/{token}/assets/{sha256}': PUBLIC,
  // Stripe's webhook: no credentials, the Stripe-Signature header instead.
  'POST /v1/billing/stripe/webhook': PUBLIC,
  // Organization SSO: which connection serves an address, the SAML service provider's metadata.
  'GET /auth/sso/lookup': PUBLIC,
  'GET /auth/sso/{connectionId}/metadata': PUBLIC,

  'GET /v1/me': { kind: 'person', token: true },
  'PATCH /v1/me': PERSON,
  'POST /v1/me/password': PERSON,
  // A token has no sessions: it is answered that (none listed, none ended).
  'GET /v1/me/sessions': { kind: 'person', token: true },
  'DELETE /v1/me/sessions': { kind: 'person', token: true },
  'DELETE /v1/me/sessions/{id}': { kind: 'person', token: true },
  'POST /v1/me/mfa/enroll': PERSON,
  'POST /v1/me/mfa/confirm': PERSON,
  'POST /v1/me/mfa/disable': PERSON,
  'POST /v1/me/mfa/recovery-codes': PERSON,
  'GET /v1/me/passkeys': PERSON,
  'POST /v1/me/passkeys/registration/options': PERSON,
  'POST /v1/me/passkeys/registration/verify': PERSON,
  'PATCH /v1/me/passkeys/{id}': PERSON,
  'DELETE /v1/me/passkeys/{id}': PERSON,
  'GET /v1/me/identities': PERSON,
  'DELETE /v1/me/identities/{id}': PERSON,

  'GET /v1/orgs': PERSON,
  'POST /v1/orgs': PERSON,
  'GET /v1/orgs/{orgId}': MEMBER,
  'PATCH /v1/orgs/{orgId}': ADMIN,
  'GET /v1/orgs/{orgId}/members': MEMBER,
  'PATCH /v1/orgs/{orgId}/members/{userId}': ADMIN,
  // Removing another member takes an admin; leaving (one's own id) any member: the walk removes another.
  'DELETE /v1/orgs/{orgId}/members/{userId}': ADMIN,
  'POST /v1/orgs/{orgId}/invitations': ADMIN,
  'GET /v1/orgs/{orgId}/invitations': ADMIN,
  'DELETE /v1/orgs/{orgId}/invitations/{invitationId}': ADMIN,
  'GET /v1/orgs/{orgId}/audit': ADMIN,
  'GET /v1/orgs/{orgId}/billing': ADMIN,
  'GET /v1/orgs/{orgId}/billing/invoices': ADMIN,
  'POST /v1/orgs/{orgId}/billing/checkout': OWNER,
  'POST /v1/orgs/{orgId}/billing/portal': OWNER,
  // The deployment's license: any signed-in person.
  'GET /v1/license': PERSON,
  'GET /v1/orgs/{orgId}/ai/settings': MEMBER,
  'PATCH /v1/orgs/{orgId}/ai/settings': ADMIN,
  'GET /v1/orgs/{orgId}/usage': MEMBER,
  'PATCH /v1/orgs/{orgId}/billing/caps': ADMIN,
  'GET /v1/orgs/{orgId}/domains': ADMIN,
  'POST /v1/orgs/{orgId}/domains': ADMIN,
  'POST /v1/orgs/{orgId}/domains/{id}/verify': ADMIN,
  'DELETE /v1/orgs/{orgId}/domains/{id}': ADMIN,
  'POST /v1/orgs/{orgId}/erasure': ADMIN,
  'GET /v1/orgs/{orgId}/erasure': ADMIN,
  'GET /v1/orgs/{orgId}/erasure/{erasureId}': ADMIN,
  'POST /v1/orgs/{orgId}/dsar': ADMIN,
  'GET /v1/orgs/{orgId}/dsar': ADMIN,
  'GET /v1/orgs/{orgId}/dsar/{id}': ADMIN,
  'GET /v1/orgs/{orgId}/dsar/{id}/archive': ADMIN,
  'GET /v1/orgs/{orgId}/sso': ADMIN,
  'POST /v1/orgs/{orgId}/sso': ADMIN,
  'GET /v1/orgs/{orgId}/sso/settings': ADMIN,
  'PATCH /v1/orgs/{orgId}/sso/settings': ADMIN,
  'GET /v1/orgs/{orgId}/sso/{connectionId}': ADMIN,
  'PATCH /v1/orgs/{orgId}/sso/{connectionId}': ADMIN,
  'DELETE /v1/orgs/{orgId}/sso/{connectionId}': ADMIN,
  'GET /v1/orgs/{orgId}/projects': MEMBER,
  'POST /v1/orgs/{orgId}/projects': ADMIN,
  'GET /v1/orgs/{orgId}/tokens': ADMIN,
  'POST /v1/orgs/{orgId}/tokens': ADMIN,
  'DELETE /v1/orgs/{orgId}/tokens/{tokenId}': ADMIN,

  'GET /v1/projects/current': scope('settings:read'),
  'GET /v1/projects/{id}': scope('settings:read'),
  'PATCH /v1/projects/{id}': scope('settings:write'),
  'POST /v1/projects/{id}/rotate-key': scope('settings:write'),
  'DELETE /v1/projects/{id}': scope('settings:write', true),

  'GET /v1/sessions': scope('sessions:read'),
  'GET /v1/sessions/{id}': scope('sessions:read'),
  'GET /v1/sessions/{id}/chunks/{seq}': scope('sessions:read'),
  'GET /v1/sessions/{id}/events': scope('sessions:read'),
  'GET /v1/sessions/{id}/issues': scope('sessions:read'),
  'GET /v1/sessions/{id}/calls': scope('sessions:read'),
  'GET /v1/sessions/{id}/traces': scope('sessions:read'),
  'GET /v1/sessions/{id}/assets': scope('sessions:read'),
  'GET /v1/sessions/{id}/transcript': scope('sessions:read'),
  'GET /v1/sessions/{id}/summary': scope('sessions:read'),
  'POST /v1/sessions/{id}/explain': scope('sessions:read'),
  'POST /v1/sessions/{id}/repro': scope('sessions:read'),
  'GET /v1/assets/{sha256}': scope('sessions:read'),
  'POST /v1/sessions/{id}/share': scope('sessions:write'),
  'GET /v1/visits/{id}': scope('sessions:read'),
  'POST /v1/otlp/traces': scope('otlp:write'),
  'POST /v1/otlp/logs': scope('otlp:write'),
  // Funnels are read and written as sessions are.
  'GET /v1/funnels': scope('sessions:read'),
  'POST /v1/funnels': scope('sessions:write'),
  'GET /v1/funnels/suggestions': scope('sessions:read'),
  'GET /v1/funnels/{id}': scope('sessions:read'),
  'PATCH /v1/funnels/{id}': scope('sessions:write'),
  'DELETE /v1/funnels/{id}': scope('sessions:write'),
  'GET /v1/funnels/{id}/results': scope('sessions:read'),

  'GET /v1/calls': scope('calls:read'),
  'GET /v1/calls/overview': scope('calls:read'),
  'GET /v1/calls/{id}': scope('calls:read'),

  'GET /v1/issues': scope('issues:read'),
  'PATCH /v1/issues': scope('issues:write'),
  'GET /v1/issues/{id}': scope('issues:read'),
  'PATCH /v1/issues/{id}': scope('issues:write'),
  'GET /v1/issues/{id}/sessions': scope('issues:read'),
  'POST /v1/issues/{id}/explain': scope('issues:read'),
  'POST /v1/issues/{id}/draft-pr': scope('issues:read'),
  'GET /v1/errors': scope('issues:read'),
  'GET /v1/errors/{fingerprint}': scope('issues:read'),

  'GET /v1/vitals': scope('sessions:read'),
  'GET /v1/heatmaps': scope('sessions:read'),
  'GET /v1/releases': scope('sessions:read'),
  'GET /v1/dashboard/overview': scope('sessions:read'),

  'GET /v1/notifications/channels': scope('notifications:read'),
  'POST /v1/notifications/channels': scope('notifications:write'),
  'GET /v1/notifications/channels/{id}': scope('notifications:read'),
  'PATCH /v1/notifications/channels/{id}': scope('notifications:write'),
  'DELETE /v1/notifications/channels/{id}': scope('notifications:write'),
  'POST /v1/notifications/channels/{id}/rotate-secret': scope('notifications:write'),
  'POST /v1/notifications/channels/{id}/test': scope('notifications:write'),
  'GET /v1/notifications/rules': scope('notifications:read'),
  'POST /v1/notifications/rules': scope('notifications:write'),
  'GET /v1/notifications/rules/{id}': scope('notifications:read'),
  'PATCH /v1/notifications/rules/{id}': scope('notifications:write'),
  'DELETE /v1/notifications/rules/{id}': scope('notifications:write'),
  'GET /v1/notifications/deliveries': scope('notifications:read'),
  'GET /v1/notifications/deliveries/{id}': scope('notifications:read'),
  'POST /v1/notifications/deliveries/{id}/replay': scope('notifications:write'),
  'GET /v1/inbox': scope('notifications:read'),
  'POST /v1/inbox/{id}/ack': scope('notifications:write'),

  'GET /v1/sourcemaps': scope('sourcemaps:read'),
  'POST /v1/sourcemaps': scope('sourcemaps:write'),
  'GET /v1/symbolicate': scope('sourcemaps:read'),
  // Symbolication changes nothing: a POST that reads.
  'POST /v1/symbolicate': scope('sourcemaps:read'),

  'GET /v1/ai/jobs/{id}': scope('ai:read'),
  'GET /v1/ai/digests': scope('ai:read'),
  'GET /v1/ai/usage': scope('ai:read'),
  'POST /v1/ai/feedback': scope('ai:write'),
  'POST /v1/ai/chat': scope('ai:write'),
  // Search reads sessions, calls and issues: any one of their read scopes, each type for its own.
  'POST /v1/search': { kind: 'anyScope', scopes: ['sessions:read', 'calls:read', 'issues:read'] },
  // The MCP endpoint: any read scope; each tool checks its own.
  'POST /mcp': { kind: 'anyScope', scopes: ['sessions:read', 'calls:read', 'issues:read'] },
};

/** A caller of the walk. */
type Caller =
  | { kind: 'anonymous' }
  | { kind: 'token'; scope: Scope; token: string }
  | { kind: 'person'; role: Role | 'outsider'; cookie: string; csrf: string };

function describeCaller(caller: Caller): string {
  if (caller.kind === 'anonymous') return 'no credentials';
  if (caller.kind === 'token') return `token with ${caller.scope}`;
  return caller.role === 'outsider' ? 'a person of another organization' : `a ${caller.role}`;
}

/** The statuses a caller may get for a route: `allowed`, or the refusals expected. */
function expected(route: string, requirement: Requirement, caller: Caller): 'allowed' | number[] {
  if (caller.kind === 'anonymous') return [401];
  const pathProject = /\/v1\/projects\/\{id\}/.test(route);
  switch (requirement.kind) {
    case 'public':
      return 'allowed';
    case 'person':
      if (caller.kind === 'token') return requirement.token === true ? 'allowed' : [403];
      return 'allowed';
    case 'member':
    case 'admin':
    case 'owner':
      if (caller.kind === 'token') return [403];
      if (caller.role === 'outsider') return [404];
      if (requirement.kind === 'member') return 'allowed';
      if (requirement.kind === 'owner') return caller.role === 'owner' ? 'allowed' : [403];
      return caller.role === 'owner' || caller.role === 'admin' ? 'allowed' : [403];
    case 'scope':
      if (caller.kind === 'token') {
        if (requirement.personOnly === true) return [403];
        return caller.scope === requirement.scope ? 'allowed' : [403];
      }
      if (caller.role === 'outsider') return pathProject ? [404] : [403];
      return scopesOfRole(caller.role).has(requirement.scope) ? 'allowed' : [403];
    case 'anyScope': {
      if (caller.kind === 'token') return requirement.scopes.includes(caller.scope) ? 'allowed' : [403];
      if (caller.role === 'outsider') return [403];
      const held = scopesOfRole(caller.role);
      return requirement.scopes.some((one) => held.has(one)) ? 'allowed' : [403];
    }
  }
}

/** Tables whose every row the walk compares before and after refused calls. */
const WATCHED_TABLES = [
  'organizations',
  'organization_members',
  'organization_invitations',
  'projects',
  'api_tokens',
  'audit_log',
  'users',
  'user_mfa',
  'passkeys',
  'oauth_identities',
  'sessions',
  'share_links',
  'funnels',
  'issue_clusters',
  'notification_channels',
  'notification_rules',
  'notification_events',
  'deliveries',
  'sourcemap_files',
  'billing_accounts',
  'billing_events',
  'deployment_license',
  'dsar_requests',
  'sso_connections',
  'sso_identities',
];

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('who may call what, on %s', (engine) => {
  let test: TestApp;
  const client = accountsClient(
    () => test,
    () => smtp,
    engine === 'pglite' ? '10.41' : '10.42',
  );
  let orgId: string;
  let projectId: string;
  const callers: Caller[] = [{ kind: 'anonymous' }];

  /** Every row of the watched tables, as one text per table. */
  async function snapshot(): Promise<string[]> {
    const rows: string[] = [];
    for (const table of WATCHED_TABLES) {
      const result = await sql<{ digest: string | null }>`
        select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest
        from ${sql.table(table)} t`.execute(test.database.database);
      rows.push(`${table}:${result.rows[0]?.digest}`);
    }
    return rows;
  }

  beforeAll(async () => {
    test = await createTestApp(engine, { logger: false }, { SVC_SMTP_URL: smtp.url });
    const owner = await client.signedIn(`walk-owner-${engine}@example.com`);
    const as = { cookie: owner.cookie, csrf: owner.csrf };
    orgId = expectJson(await client.send('POST', '/v1/orgs', { name: 'Walk' }, as), 201).id;
    projectId = expectJson(
      await client.send('POST', `/v1/orgs/${orgId}/projects`, { name: 'Walked' }, as),
      201,
    ).id;
    callers.push({ kind: 'person', role: 'owner', cookie: owner.cookie, csrf: owner.csrf });
    for (const role of ['admin', 'member', 'viewer'] as const) {
      const email = `walk-${role}-${engine}@example.com`;
      expectJson(await client.send('POST', `/v1/orgs/${orgId}/invitations`, { email, role }, as), 201);
      const token = linkToken(await smtp.nextMessage(email), test.configuration.appUrl, 'accept-invitation');
      const accepted = await client.send(
        'POST',
        `/auth/invitations/${token}/accept`,
        { password: PASSWORD },
        { address: client.nextAddress() },
      );
      const body = expectJson(accepted, 200);
      callers.push({
        kind: 'person',
        role,
        cookie: client.sessionCookie(accepted) as string,
        csrf: body.csrfToken,
      });
    }
    const outsider = await client.signedIn(`walk-outsider-${engine}@example.com`);
    expectJson(
      await client.send(
        'POST',
        '/v1/orgs',
        { name: 'Elsewhere' },
        { cookie: outsider.cookie, csrf: outsider.csrf },
      ),
      201,
    );
    callers.push({ kind: 'person', role: 'outsider', cookie: outsider.cookie, csrf: outsider.csrf });
    for (const name of SCOPES) {
      const created = expectJson(
        await client.send('POST', `/v1/orgs/${orgId}/tokens`, { name, projectId, scopes: [name] }, as),
        201,
      );
      callers.push({ kind: 'token', scope: name, token: created.token });
    }
  });
  afterAll(async () => {
    await test?.close();
  });

  it('has every route of the OpenAPI document in the table, and nothing else', async () => {
    const document = expectJson(await test.app.inject({ url: '/openapi.json' }), 200);
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(Object.keys(ROUTES).sort());
  });

  it('answers each caller as the table says, and a refused call changes nothing', async () => {
    const fill = (path: string) =>
      path
        .replace('{orgId}', orgId)
        .replace(/^\/v1\/projects\/\{id\}/, `/v1/projects/${projectId}`)
        .replace('{seq}', '0')
        .replace(/\{[A-Za-z]+\}/g, 'nothing_here');
    // The project's deletion last: the walk's other calls need the project.
    const routes = Object.entries(ROUTES)
      .filter(([, requirement]) => requirement.kind !== 'public')
      .sort(
        ([a], [b]) => Number(a === 'DELETE /v1/projects/{id}') - Number(b === 'DELETE /v1/projects/{id}'),
      );
    const failures: string[] = [];
    for (const [route, requirement] of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const call = (caller: Caller): Promise<LightMyRequestResponse> =>
        test.app.inject({
          method: method as 'GET',
          url: fill(path),
          remoteAddress: '10.43.0.1',
          headers:
            caller.kind === 'token'
              ? { authorization: `Bearer ${caller.token}` }
              : caller.kind === 'person'
                ? {
                    cookie: `service_session=${caller.cookie}`,
                    'x-service-csrf': caller.csrf,
                    'x-service-project': projectId,
                  }
                : {},
        });
      // Refused callers first (tokens before people), each checked to change nothing; then the allowed.
      const judged = callers.map((caller) => ({ caller, expectation: expected(route, requirement, caller) }));
      const refused = judged.filter((entry) => entry.expectation !== 'allowed');
      const allowed = judged.filter((entry) => entry.expectation === 'allowed');
      const before = await snapshot();
      for (const { caller, expectation } of refused) {
        const response = await call(caller);
        if (!(expectation as number[]).includes(response.statusCode))
          failures.push(
            `${route} by ${describeCaller(caller)}: ${response.statusCode}, expected ${expectation}`,
          );
        else expect(response.json()).toMatchObject({ code: expect.any(String), error: expect.any(String) });
      }
      const after = await snapshot();
      const changed = after.filter((row, index) => row !== before[index]);
      if (changed.length > 0) failures.push(`${route}: refused calls changed ${changed.join(', ')}`);
      for (const { caller } of allowed) {
        const response = await call(caller);
        if (response.statusCode === 401 || response.statusCode === 403 || response.statusCode >= 500)
          failures.push(
            `${route} by ${describeCaller(caller)}: ${response.statusCode} ${response.body.slice(0, 200)}`,
          );
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
