import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../test/http.ts';
import { postChunk, validChunkFixture } from '../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../test/test-app.ts';
import { ENGINES } from '../test/test-database.ts';
import { createSession, insertUser } from './modules/accounts/repository.ts';
import { queueAiJob } from './modules/ai/index.ts';
import { linkIdentity } from './modules/oauth/repository.ts';
import { createDsarWorker } from './modules/privacy/dsar-worker.ts';
import { IDP_CERTIFICATE } from './modules/sso/sso.fixture.ts';

// What reasonable HTTP clients send, on every route the OpenAPI document lists: an empty body
// with `Content-Type: application/json`, charset parameters, `+json` and `text/plain` types,
// trailing and doubled slashes, HEAD. Project routes are called with the test project's API
// token, routes about people (`/v1/me`, `/v1/orgs`) as the owner of its organization, signed in.

interface Operation {
  method: string;
  path: string;
  hasBody: boolean;
  /** A browser flow answered with a redirect (its OpenAPI responses are 302). */
  redirects: boolean;
}

const WEBHOOK = { type: 'webhook', name: 'hook', url: 'http://127.0.0.1:9/webhooks' };

describe.each(ENGINES)('HTTP clients on %s', (engine) => {
  let test: TestApp;
  let operations: Operation[];
  /** Real resources of the test project, by the path segment before their `{id}`. */
  const ids: Record<string, string> = {};
  /** The owner's session cookie and CSRF token. */
  let person: Record<string, string>;
  /** A project of the organization for `DELETE /v1/projects/{id}` (the others need theirs). */
  let spareProjectId: string;

  const personUrl = (method: string, url: string) =>
    /^\/v1\/(me|orgs|license)(\/|$|\?)/.test(url) ||
    (method === 'DELETE' && url === `/v1/projects/${spareProjectId}`);
  const request = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
    test.app.inject({
      method: method as 'GET',
      url,
      headers: { ...(personUrl(method, url) ? person : test.first.headers), ...headers },
      ...(payload === undefined ? {} : { payload }),
    });

  async function ok(method: string, url: string, body?: unknown): Promise<Json> {
    const response = await request(
      method,
      url,
      body === undefined ? {} : { 'content-type': 'application/json' },
      body === undefined ? undefined : JSON.stringify(body),
    );
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }

  /** An operation's URL with the test project's resources in its path parameters. */
  function urlOf(path: string, method = 'GET'): string {
    // The routes with required query parameters.
    if (path === '/v1/config') return `/v1/config?key=${test.first.projectKey}`;
    if (path === '/v1/heatmaps') return '/v1/heatmaps?route=/&kind=click';
    if (path === '/auth/sso/lookup') return '/auth/sso/lookup?email=ada@example.com';
    if (path === '/v1/symbolicate') return '/v1/symbolicate?file=https://x.example/a.js&line=1&column=1';
    if (method === 'DELETE' && path === '/v1/projects/{id}') return `/v1/projects/${spareProjectId}`;
    return path.replace(/([^/]+)\/\{(\w+)\}/g, (_whole, segment: string, parameter: string) => {
      const id = ids[segment];
      if (id === undefined)
        throw new Error(`No test resource for {${parameter}} after /${segment}/ in ${path}`);
      return `${segment}/${id}`;
    });
  }

  beforeAll(async () => {
    test = await createTestApp(engine);
    const document = (await test.app.inject('/openapi.json')).json();
    operations = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          hasBody: operation.requestBody !== undefined,
          redirects: operation.responses?.['302'] !== undefined,
        })),
    );

    // The owner of the test project's organization, signed in, and a member they can remove.
    const database = test.database.database;
    const organizationId = test.first.project.organization_id;
    const owner = await insertUser(database, {
      email: `owner-${engine}@example.com`,
      name: undefined,
      passwordHash: 'not used',
      emailVerified: true,
    });
    const member = await insertUser(database, {
      email: `member-${engine}@example.com`,
      name: undefined,
      passwordHash: 'not used',
      emailVerified: true,
    });
    if (owner === undefined || member === undefined) throw new Error('users not created');
    await database
      .insertInto('organization_members')
      .values([
        { organization_id: organizationId, user_id: owner.id, role: 'owner' },
        { organization_id: organizationId, user_id: member.id, role: 'member' },
      ])
      .execute();
    const session = await createSession(database, { userId: owner.id, ip: undefined, userAgent: undefined });
    person = {
      cookie: `service_session=${session.secret}`,
      'x-service-csrf': session.csrfToken,
      'x-service-project': test.first.project.id,
    };
    spareProjectId = (await ok('POST', `/v1/orgs/${organizationId}/projects`, { name: 'spare' })).id;
    ids.orgs = organizationId;
    ids.members = member.id;
    // A passkey of the owner (modules/passkeys; its tests register real ones).
    ids.passkeys = (
      await database
        .insertInto('passkeys')
        .values({
          id: `pk_${ulid()}`,
          user_id: owner.id,
          credential_id: `cred-${engine}`,
          public_key: new Uint8Array([1]),
          device_type: 'singleDevice',
          name: 'walked',
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    ids.invitations = (
      await ok('POST', `/v1/orgs/${organizationId}/invitations`, { email: `invited-${engine}@example.com` })
    ).id;
    ids.tokens = (
      await ok('POST', `/v1/orgs/${organizationId}/tokens`, {
        name: 'revoked by the test',
        projectId: test.first.project.id,
        scopes: ['sessions:read'],
      })
    ).id;

    const channel = (await ok('POST', '/v1/notifications/channels', WEBHOOK)).channel;
    ids.channels = channel.id;
    ids.rules = (
      await ok('POST', '/v1/notifications/rules', {
        name: 'new problems',
        channelIds: [channel.id],
        source: { type: 'cluster', events: ['cluster.created'] },
      })
    ).id;
    // A SAML connection of the organization (modules/sso): its settings and its SP metadata.
    ids.sso = (
      await ok('POST', `/v1/orgs/${organizationId}/sso`, {
        type: 'saml',
        name: 'Corp',
        entityId: 'https://idp.example.com/metadata',
        ssoUrl: 'https://idp.example.com/sso',
        certificates: [IDP_CERTIFICATE],
      })
    ).id;
    ids.domains = (
      await ok('POST', `/v1/orgs/${organizationId}/domains`, { domain: `tolerance-${engine}.example` })
    ).id;
    // A provider for the sign-in flows (not configured here: they redirect to the login page), and
    // an identity linked to the owner (modules/oauth), who has a password and may unlink it.
    ids.oauth = 'google';
    const identity = await linkIdentity(database, {
      userId: owner.id,
      provider: 'github',
      subject: `tolerance-${engine}`,
      email: owner.email,
    });
    ids.identities = identity?.id as string;
    ids.erasure = (
      await ok('POST', `/v1/orgs/${organizationId}/erasure`, { userId: 'nobody-in-particular' })
    ).id;
    ids.funnels = (
      await ok('POST', '/v1/funnels', {
        name: 'call to end',
        steps: [
          { type: 'pageview', route: '/call' },
          { type: 'event', name: 'call_ended' },
        ],
      })
    ).id;
    // A session with the recorded Chromium calls: a call, findings, issue clusters, inbox items.
    const recorded = JSON.parse((await validChunkFixture('call')).toString('utf8'));
    const error = {
      t: recorded.events[0].t,
      type: 'error',
      name: 'TypeError',
      message: 'Cannot read properties of undefined',
      stack:
        'TypeError: Cannot read properties of undefined\n    at join (https://app.example/call.js:1:200)',
      source: 'onerror',
    };
    const chunk = { ...recorded, visitId: `vis_${ulid()}`, events: [error, ...recorded.events] };
    const ingested = await postChunk(test.app, test.first.projectKey, Buffer.from(JSON.stringify(chunk)));
    expect(ingested.statusCode).toBe(200);
    await test.processingWorker.runUntilIdle();
    ids.sessions = chunk.sessionId;
    ids.chunks = '0';
    ids.visits = chunk.visitId;
    ids.calls = (await ok('GET', '/v1/calls')).items[0].id;
    ids.issues = (await ok('GET', '/v1/issues')).items[0].id;
    ids.errors = (await ok('GET', '/v1/errors')).items[0].fingerprint;
    ids.projects = test.first.project.id;
    ids.deliveries = (await ok('POST', `/v1/notifications/channels/${channel.id}/test`)).deliveryId;
    const share = await ok('POST', `/v1/sessions/${chunk.sessionId}/share`, { expiresInHours: 1 });
    ids.share = share.token;
    // A stylesheet the session's snapshot referenced, archived (modules/assets).
    const css = Buffer.from('body { color: black }');
    ids.assets = createHash('sha256').update(css).digest('hex');
    await test.processingDependencies.blobStore.put(`assets/${test.first.project.id}/${ids.assets}`, css);
    await database
      .insertInto('session_assets')
      .values({
        project_id: test.first.project.id,
        session_id: chunk.sessionId,
        url: 'https://app.example/site.css',
        kind: 'stylesheet',
        status: 'archived',
        sha256: ids.assets,
        content_type: 'text/css',
        bytes: css.length,
        error: null,
        fetched_at: new Date(),
      })
      .execute();
    // An AI job of the project (modules/ai), as the hourly scheduler queues them.
    ids.jobs = (
      await queueAiJob(database, {
        projectId: test.first.project.id,
        kind: 'anomaly_scan',
        input: { hour: '2026-11-17T14:00:00.000Z' },
      })
    ).id;
    // The relay fallback of the recorded calls opened a cluster: its cluster.created is in the inbox.
    ids.inbox = (await ok('GET', '/v1/inbox')).items[0].id;
    // An access request of the organization about the session's end user, gathered (modules/privacy).
    ids.dsar = (await ok('POST', `/v1/orgs/${ids.orgs}/dsar`, { userId: 'u_8842' })).id;
    await createDsarWorker({ database, log: test.app.log }).runUntilIdle();
  });
  afterAll(async () => {
    await test?.close();
  });

  it('answers an empty body on a route that needs one with its usual 400 about the body', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, {}] as Array<Record<string, string>>) {
      const response = await request('POST', '/v1/notifications/channels', headers, '');
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error: expect.stringMatching(/^Invalid body/), code: 'invalid' });
    }
  });

  it('reads the charset parameter, +json types and JSON sent as text/plain', async () => {
    const create = async (contentType: string, payload: string | Buffer) => {
      const response = await test.app.inject({
        method: 'POST',
        url: '/v1/notifications/channels',
        headers: { ...test.first.headers, 'content-type': contentType },
        payload,
      });
      return response;
    };
    const body = (name: string) => JSON.stringify({ ...WEBHOOK, name });
    for (const contentType of [
      'application/json;charset=UTF-8',
      'application/json; charset="utf-8"',
      'Application/JSON',
      'text/plain;charset=UTF-8', // fetch(url, { method: 'POST', body: JSON.stringify(x) })
      'application/vnd.api+json',
    ]) {
      const response = await create(contentType, body(`café ${contentType}`));
      expect(response.statusCode, `${contentType}: ${response.body}`).toBe(201);
      expect(response.json().channel.name).toBe(`café ${contentType}`);
    }
    const latin1 = await create('application/json; charset=ISO-8859-1', Buffer.from(body('café'), 'latin1'));
    expect(latin1.statusCode).toBe(201);
    expect(latin1.json().channel.name).toBe('café');
    const bom = await create('application/json', `\uFEFF${body('bom')}`);
    expect(bom.statusCode).toBe(201);

    const unknown = await create('application/json; charset=x-klingon', body('x'));
    expect(unknown.statusCode).toBe(415);
    expect(unknown.json()).toEqual({
      error: 'The charset "x-klingon" is not supported: send UTF-8',
      code: 'invalid',
    });
    const notJson = await create('text/plain', 'name=x');
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().code).toBe('invalid');
    // Fastify's prototype-poisoning check still holds.
    const poisoned = await create('application/json', '{"__proto__":{"admin":true},"type":"webhook"}');
    expect(poisoned.statusCode).toBe(400);

    const channel = (await create('application/json', body('patch me'))).json().channel;
    const patched = await request(
      'PATCH',
      `/v1/notifications/channels/${channel.id}`,
      { 'content-type': 'application/merge-patch+json' },
      JSON.stringify({ name: 'patched' }),
    );
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().name ?? patched.json().channel?.name).toBe('patched');
  });

  it('answers HEAD on every GET route as GET does, without a body', async () => {
    const gets = operations.filter((operation) => operation.method === 'GET');
    expect(gets.length).toBeGreaterThan(20);
    for (const operation of gets) {
      const url = urlOf(operation.path);
      const get = await request('GET', url);
      const head = await request('HEAD', url);
      const status = operation.redirects ? 302 : 200;
      expect(get.statusCode, `GET ${url}: ${get.body}`).toBe(status);
      expect(head.statusCode, `HEAD ${url}`).toBe(status);
      expect(head.body).toBe('');
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
    }
  });

  it('ignores a trailing slash and doubled slashes', async () => {
    for (const operation of operations.filter((candidate) => candidate.method === 'GET')) {
      const url = urlOf(operation.path);
      const [path, query] = url.split('?');
      const slashed = await request('GET', `${path}/${query === undefined ? '' : `?${query}`}`);
      expect(slashed.statusCode, `GET ${path}/: ${slashed.body}`).toBe(operation.redirects ? 302 : 200);
    }
    const doubled = await request('GET', '//v1//calls');
    expect(doubled.statusCode).toBe(200);
    expect(doubled.json().items.length).toBeGreaterThan(0);
  });

  // Last: it deletes the channel and the rule the other tests read.
  it('accepts Content-Type: application/json with an empty body on every route that takes no body', async () => {
    // Ingest reads its bodies itself (a chunk is required; see modules/sessions/ingest-routes.ts),
    // and so do the multipart upload of source maps (modules/sourcemaps/routes.ts) and Stripe's
    // webhook (the signed bytes; modules/billing/stripe-webhook-routes.ts).
    const bodiless = operations.filter(
      (operation) =>
        ['POST', 'PUT', 'PATCH', 'DELETE'].includes(operation.method) &&
        !operation.hasBody &&
        operation.path !== '/v1/ingest' &&
        operation.path !== '/v1/sourcemaps' &&
        operation.path !== '/v1/billing/stripe/webhook',
    );
    // The spec's three and every other one (inbox ack, deletes), deletes last: rules before the
    // channel they use.
    expect(bodiless.map((operation) => `${operation.method} ${operation.path}`)).toEqual(
      expect.arrayContaining([
        'POST /v1/notifications/channels/{id}/test',
        'POST /v1/notifications/channels/{id}/rotate-secret',
        'POST /v1/notifications/deliveries/{id}/replay',
        'POST /v1/inbox/{id}/ack',
      ]),
    );
    bodiless.sort(
      (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE') || b.path.localeCompare(a.path),
    );
    for (const operation of bodiless) {
      for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
        if (operation.method === 'DELETE' && contentType !== 'application/json') continue;
        const response = await request(
          operation.method,
          urlOf(operation.path, operation.method),
          { 'content-type': contentType },
          '',
        );
        // Without a billing provider the portal has nothing to open: its 409 says so (the body
        // was read as no body, else this would be the 400 about the body).
        if (operation.path === '/v1/orgs/{orgId}/billing/portal') {
          expect(response.statusCode, response.body).toBe(409);
          expect(response.json().error).toMatch(/^Billing is not configured on this deployment/);
          continue;
        }
        // No DNS server publishes the claimed domain's record here: verify's 409 says what the
        // lookup found (the body was read as no body).
        if (operation.path === '/v1/orgs/{orgId}/domains/{id}/verify') {
          expect(response.statusCode, response.body).toBe(409);
          expect(response.json().error).toMatch(/ is not verified: the DNS lookup of _svc-verification\./);
          continue;
        }
        expect(response.statusCode, `${operation.method} ${operation.path}: ${response.body}`).toBeLessThan(
          300,
        );
      }
    }
    // What they did happened: the channel and rule are gone.
    expect((await request('GET', `/v1/notifications/channels/${ids.channels}`)).statusCode).toBe(404);
    expect((await request('GET', `/v1/notifications/rules/${ids.rules}`)).statusCode).toBe(404);
  });
});
