import Fastify, { type FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project } from '../database/tables/projects.table.ts';
import { ALL_SCOPES, authenticationPlugin, type RequestAuth, type SignedInPerson } from './authentication.ts';
import { ApiError } from './errors.ts';

// The plugin with the session cookie: its resolvers are the test's own, so what the plugin does
// with their answers (CSRF, the project header, membership) is all that is checked here.

const person: SignedInPerson = { userId: 'usr_1', sessionId: 'sgn_1', csrfToken: 'csrf-of-session-1' };
const project = { id: 'proj_1', organization_id: 'org_1' } as Project;
const memberAuth: RequestAuth = {
  caller: { type: 'user', id: 'usr_1' },
  organizationId: 'org_1',
  project,
  role: 'admin',
  scopes: ALL_SCOPES,
};

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
});

async function build(withMembership: boolean) {
  const instance = Fastify();
  instance.setErrorHandler((error, _request, reply) => {
    if (!ApiError.isInstance(error)) throw error;
    reply.status(error.status).send({ error: error.message, code: error.code });
  });
  await instance.register(fastifyPlugin(async () => {}, { name: 'services' }));
  await instance.register(authenticationPlugin, {
    bearer: async () => undefined,
    session: async (secret) => (secret === 'secret-1' ? person : undefined),
    ...(withMembership
      ? {
          projectAccess: async (who, projectId) =>
            who.userId === 'usr_1' && projectId === 'proj_1' ? memberAuth : undefined,
        }
      : {}),
  });
  const changes: string[] = [];
  instance.post('/v1/things', { onRequest: instance.authorize('sessions') }, async (request) => {
    changes.push(request.auth.project.id);
    return { caller: request.auth.caller, project: request.auth.project.id, person: request.person };
  });
  instance.get('/v1/things', { onRequest: instance.authorize('sessions') }, async (request) => ({
    caller: request.auth.caller,
  }));
  instance.get('/v1/me', { onRequest: instance.authenticateCaller }, async (request) => ({
    person: request.person,
  }));
  app = instance;
  return { app: instance, changes };
}

const cookie = 'service_session=secret-1';

describe('authenticationPlugin with the session cookie', () => {
  it("sets request.auth to the person's membership, the person as caller, after the CSRF check", async () => {
    const { app, changes } = await build(true);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/things',
      headers: { cookie, 'x-service-csrf': person.csrfToken, 'x-service-project': 'proj_1' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ caller: { type: 'user', id: 'usr_1' }, project: 'proj_1', person });
    expect(changes).toEqual(['proj_1']);
    // A read needs no CSRF token.
    const read = await app.inject({ url: '/v1/things', headers: { cookie, 'x-service-project': 'proj_1' } });
    expect(read.json()).toEqual({ caller: { type: 'user', id: 'usr_1' } });
  });

  it('refuses, before the route runs: no CSRF token or a wrong one (403), another project (403), no project (400), an ended session (401)', async () => {
    const { app, changes } = await build(true);
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ cookie, 'x-service-project': 'proj_1' }, 403, 'Send the X-Service-CSRF header'],
      [
        { cookie, 'x-service-project': 'proj_1', 'x-service-csrf': 'csrf-of-session-2' },
        403,
        'does not match',
      ],
      [
        { cookie, 'x-service-project': 'proj_2', 'x-service-csrf': person.csrfToken },
        403,
        'not a member of project "proj_2"',
      ],
      [{ cookie, 'x-service-csrf': person.csrfToken }, 400, 'X-Service-Project'],
      [{ cookie: 'service_session=ended', 'x-service-csrf': person.csrfToken }, 401, 'The session has ended'],
    ];
    for (const [headers, status, message] of cases) {
      const response = await app.inject({ method: 'POST', url: '/v1/things', headers });
      expect(response.statusCode, JSON.stringify(headers)).toBe(status);
      expect(response.json().error).toContain(message);
      expect(response.json().code).toBe(status === 400 ? 'invalid' : 'unauthorized');
    }
    expect(changes).toEqual([]);
  });

  it('makes a person a member of no project without a membership resolver', async () => {
    const { app, changes } = await build(false);
    const response = await app.inject({
      method: 'POST',
      url: '/v1/things',
      headers: { cookie, 'x-service-csrf': person.csrfToken, 'x-service-project': 'proj_1' },
    });
    expect(response.statusCode).toBe(403);
    expect(changes).toEqual([]);
  });

  it('gives routes about the caller the person, or 401 without a session', async () => {
    const { app } = await build(false);
    expect((await app.inject({ url: '/v1/me', headers: { cookie } })).json()).toEqual({ person });
    const none = await app.inject({ url: '/v1/me' });
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe('unauthorized');
  });
});
