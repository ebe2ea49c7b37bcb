import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { unauthorized } from '../../platform/http/errors.ts';
import { findProjectByApiToken } from './api-tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The project bound to the request's API token (set by `fastify.authenticate`). */
    project: Project;
  }
  interface FastifyInstance {
    /** onRequest hook: `Authorization: Bearer <API token>` → `request.project`, or 401. */
    authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

const BEARER = /^Bearer\s+(\S{1,512})\s*$/i;

/**
 * API token authentication. Routes opt in with `onRequest: fastify.authenticate` (or a hook on
 * their encapsulated context); every query they run is then scoped by `request.project.id`.
 */
export const authenticationPlugin = fastifyPlugin(
  async (fastify: FastifyInstance) => {
    fastify.decorateRequest('project', null as unknown as Project);
    fastify.decorate('authenticate', async (request: FastifyRequest) => {
      const header = request.headers.authorization;
      if (header === undefined) throw unauthorized('Send an API token: Authorization: Bearer <token>');
      const match = BEARER.exec(header);
      if (match === null) throw unauthorized('The Authorization header must be "Bearer <token>"');
      const found = await findProjectByApiToken(fastify.database, match[1] as string);
      if (found === undefined) throw unauthorized('The API token is not valid (unknown or revoked)');
      request.project = found.project;
    });
  },
  { name: 'authentication', dependencies: ['services'] },
);
