import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { unauthorized } from '../../platform/http/errors.ts';
import { findProjectByApiToken } from './api-tokens.ts';

/**
 * What a caller may do, by area: reading, and changing. A route checks the scope it needs; a
 * token carries the scopes it was created with, a person those of their role.
 */
const SCOPES = [
  'sessions:read',
  'calls:read',
  'issues:read',
  'issues:write',
  'notifications:read',
  'notifications:write',
  'settings:read',
  'settings:write',
] as const;

type Scope = (typeof SCOPES)[number];

/**
 * Who is calling and on what (set by `fastify.authenticate`). Today the caller is an API token,
 * bound to one project, acting as that project's admin with every scope; people, their
 * organizations' roles and tokens of fewer scopes arrive with accounts and fill the same shape.
 */
interface RequestAuth {
  caller: { type: 'api_token'; id: string };
  organizationId: string;
  /** The project every query of the request is scoped to. */
  project: Project;
  role: 'admin';
  scopes: ReadonlySet<Scope>;
}

/** Every scope: what a project's API token may do today. */
const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, their organization, project and role (set by `fastify.authenticate`). */
    auth: RequestAuth;
  }
  interface FastifyInstance {
    /** onRequest hook: `Authorization: Bearer <API token>` → `request.auth`, or 401. */
    authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

const BEARER = /^Bearer\s+(\S{1,512})\s*$/i;

/**
 * API token authentication. Routes opt in with `onRequest: fastify.authenticate` (or a hook on
 * their encapsulated context); every query they run is then scoped by `request.auth.project.id`.
 */
export const authenticationPlugin = fastifyPlugin(
  async (fastify: FastifyInstance) => {
    fastify.decorateRequest('auth', null as unknown as RequestAuth);
    fastify.decorate('authenticate', async (request: FastifyRequest) => {
      const header = request.headers.authorization;
      if (header === undefined) throw unauthorized('Send an API token: Authorization: Bearer <token>');
      const match = BEARER.exec(header);
      if (match === null) throw unauthorized('The Authorization header must be "Bearer <token>"');
      const found = await findProjectByApiToken(fastify.database, match[1] as string);
      if (found === undefined) throw unauthorized('The API token is not valid (unknown or revoked)');
      request.auth = {
        caller: { type: 'api_token', id: found.tokenId },
        organizationId: found.project.organization_id,
        project: found.project,
        role: 'admin',
        scopes: ALL_SCOPES,
      };
    });
  },
  { name: 'authentication', dependencies: ['services'] },
);
