import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Project } from '../database/tables/projects.table.ts';
import { unauthorized } from './errors.ts';

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

export type Scope = (typeof SCOPES)[number];

/**
 * Who is calling and on what (set by `fastify.authenticate`). Today the caller is an API token,
 * bound to one project, acting as that project's admin with every scope; people, their
 * organizations' roles and tokens of fewer scopes arrive with accounts and fill the same shape.
 */
export interface RequestAuth {
  caller: { type: 'api_token'; id: string };
  organizationId: string;
  /** The project every query of the request is scoped to. */
  project: Project;
  role: 'admin';
  scopes: ReadonlySet<Scope>;
}

/** Every scope: what a project's API token may do today. */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

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

/** How the plugin finds the caller: the modules that know callers provide it. */
export interface AuthenticationOptions {
  /** The caller of a bearer token, or undefined when the token is unknown, revoked or expired. */
  bearer(token: string): Promise<RequestAuth | undefined>;
}

/**
 * Authentication, one plugin for every kind of caller: `Authorization: Bearer <token>` resolved
 * by `options.bearer` (today projects' API tokens; the accounts module adds its own tokens and the
 * dashboard's cookie sessions). Routes opt in with `onRequest: fastify.authenticate` (or a hook on
 * their encapsulated context); every query they run is then scoped by `request.auth.project.id`.
 */
export const authenticationPlugin = fastifyPlugin(
  async (fastify: FastifyInstance, options: AuthenticationOptions) => {
    fastify.decorateRequest('auth', null as unknown as RequestAuth);
    fastify.decorate('authenticate', async (request: FastifyRequest) => {
      const header = request.headers.authorization;
      if (header === undefined) throw unauthorized('Send an API token: Authorization: Bearer <token>');
      const match = BEARER.exec(header);
      if (match === null) throw unauthorized('The Authorization header must be "Bearer <token>"');
      const auth = await options.bearer(match[1] as string);
      if (auth === undefined) throw unauthorized('The API token is not valid (unknown or revoked)');
      request.auth = auth;
    });
  },
  { name: 'authentication', dependencies: ['services'] },
);
