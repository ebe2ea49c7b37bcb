import Fastify, { type FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project } from '../database/tables/projects.table.ts';
import { ALL_SCOPES, authenticationPlugin, type RequestAuth } from './authentication.ts';
import { ApiError } from './errors.ts';

// The plugin over a resolver of its own: what it sets on the request, and how it refuses.

const project = { id: 'prj_1', organization_id: 'org_1' } as Project;
const auth: RequestAuth = {
  caller: { type: 'api_token', id: 'tok_1' },
  organizationId: 'org_1',
  project,
  role: 'admin',
  scopes: ALL_SCOPES,
};

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
});

async function build(): Promise<{ app: FastifyInstance; tokens: string[] }> {
  const tokens: string[] = [];
  const instance = Fastify();
  instance.setErrorHandler((error, _request, reply) => {
    if (!ApiError.isInstance(error)) throw error;
    reply.status(error.status).send({ error: error.message, code: error.code });
  });
  await instance.register(fastifyPlugin(async () => {}, { name: 'services' }));
  await instance.register(authenticationPlugin, {
    bearer: async (token) => {
      tokens.push(token);
      if (token === 'svc_reader')
        return { ...auth, caller: { type: 'api_token', id: 'tok_2' }, scopes: new Set(['sessions:read']) };
      return token === 'svc_good' ? auth : undefined;
    },
  });
  instance.post('/things', { onRequest: instance.authorize('sessions') }, async () => ({ changed: true }));
  instance.post(
    '/search',
    { onRequest: instance.authorize('sessions'), config: { scope: 'sessions:read' } },
    async () => ({ found: [] }),
  );
  instance.get('/calls', { onRequest: instance.authorize('calls') }, async () => ({ calls: [] }));
  instance.get('/who', { onRequest: instance.authorize('sessions') }, async (request) => ({
    caller: request.auth.caller,
    project: request.auth.project.id,
    role: request.auth.role,
    scopes: [...request.auth.scopes].sort(),
  }));
  app = instance;
  return { app: instance, tokens };
}

describe('authenticationPlugin', () => {
  it("sets request.auth to the resolver's caller for a bearer token it knows", async () => {
    const { app, tokens } = await build();
    const response = await app.inject({ url: '/who', headers: { authorization: 'Bearer svc_good' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      caller: { type: 'api_token', id: 'tok_1' },
      project: 'prj_1',
      role: 'admin',
      scopes: [...ALL_SCOPES].sort(),
    });
    expect(tokens).toEqual(['svc_good']);
  });

  it('answers 401 unauthorized without a header, with a malformed one, or for a token the resolver refuses', async () => {
    const { app, tokens } = await build();
    for (const [headers, message] of [
      [{}, 'Send an API token: Authorization: Bearer <token>'],
      [{ authorization: 'Basic abc' }, 'The Authorization header must be "Bearer <token>"'],
      [
        { authorization: 'Bearer svc_unknown' },
        'The API token is not valid (unknown, revoked, expired, or its project deleted)',
      ],
    ] as const) {
      const response = await app.inject({ url: '/who', headers });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ error: message, code: 'unauthorized' });
    }
    // Only a well-formed bearer token reaches the resolver.
    expect(tokens).toEqual(['svc_unknown']);
  });

  it("needs the route's scope: <area>:read to read, <area>:write to change, or the route's own", async () => {
    const { app } = await build();
    const reader = { authorization: 'Bearer svc_reader' };
    expect((await app.inject({ url: '/who', headers: reader })).statusCode).toBe(200);
    const write = await app.inject({ method: 'POST', url: '/things', headers: reader });
    expect(write.statusCode).toBe(403);
    expect(write.json()).toEqual({
      error: 'This API token lacks the sessions:write scope',
      code: 'unauthorized',
    });
    const calls = await app.inject({ url: '/calls', headers: reader });
    expect(calls.statusCode).toBe(403);
    expect(calls.json().error).toBe('This API token lacks the calls:read scope');
    // A POST that only reads says so in its config.
    expect((await app.inject({ method: 'POST', url: '/search', headers: reader })).statusCode).toBe(200);
    const full = { authorization: 'Bearer svc_good' };
    expect((await app.inject({ method: 'POST', url: '/things', headers: full })).json()).toEqual({
      changed: true,
    });
  });
});
