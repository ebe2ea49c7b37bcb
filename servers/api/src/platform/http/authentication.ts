import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Project } from '../database/tables/projects.table.ts';
import { forbidden, invalid, notFound, unauthorized } from './errors.ts';

/**
 * What a caller may do, by area: reading, and changing. A route checks the scope it needs; a
 * token carries the scopes it was created with, a person those of their role.
 */
export const SCOPES = [
  'sessions:read',
  'sessions:write',
  'calls:read',
  'issues:read',
  'issues:write',
  'notifications:read',
  'notifications:write',
  'settings:read',
  'settings:write',
  'otlp:write',
  'sourcemaps:read',
  'sourcemaps:write',
  'ai:read',
  'ai:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** The areas of project-scoped routes; a route of area A needs `A:read`, or `A:write` to change. */
export type ScopeArea =
  | 'sessions'
  | 'calls'
  | 'issues'
  | 'notifications'
  | 'settings'
  | 'sourcemaps'
  | 'otlp'
  | 'ai';

/** A person's role in an organization (servers/api/README.md, Roles). */
export type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** Whether a string names a scope (tokens are created with a list of them). */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Who calls: a project's API token, or a person signed in with the dashboard's session cookie. */
type Caller = { type: 'api_token'; id: string } | { type: 'user'; id: string };

/**
 * Who is calling and on what (set by `fastify.authorize`). An API token is bound to one project
 * and holds the scopes it was created with; a signed-in person acts on the project of
 * `X-Service-Project` through their membership of its organization, with the scopes of their
 * role.
 */
export interface RequestAuth {
  caller: Caller;
  organizationId: string;
  /** The project every query of the request is scoped to. */
  project: Project;
  /** The person's role in the project's organization; null for an API token. */
  role: Role | null;
  scopes: ReadonlySet<Scope>;
}

/** A person signed in with the session cookie: their user id, the session and its CSRF token. */
export interface SignedInPerson {
  userId: string;
  sessionId: string;
  csrfToken: string;
}

/** Every scope: what a project's API token may do today. */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

/** The dashboard session's cookie (the spec's name). */
export const SESSION_COOKIE = 'service_session';
/** The header carrying the session's CSRF token on state-changing requests. */
const CSRF_HEADER = 'x-service-csrf';
/** The header naming the project a signed-in person acts on. */
const PROJECT_HEADER = 'x-service-project';
/** Methods that change nothing: no CSRF token needed, and a `:read` scope is enough. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The scope a project-scoped route needs, when its area and method do not say it (a POST that
     * only reads, say). Read by `fastify.authorize`.
     */
    scope?: Scope;
    /**
     * A route that answers with what the caller may read of several areas: it needs at least one
     * of these scopes (instead of `scope` and the area's), and narrows its answer to those the
     * caller holds (`POST /v1/search`: sessions, calls, issues). Read by `fastify.authorize`.
     */
    anyScope?: readonly Scope[];
    /**
     * The path parameter naming the project the route acts on (`/v1/projects/:id`): a person's
     * project comes from it rather than from `X-Service-Project`, and a token bound to another
     * project gets 404.
     */
    projectParam?: string;
    /**
     * A route for people only (a person's own account, organizations, deleting a project): an API
     * token gets 403 before anything else is looked at. Read by `fastify.authorize` and
     * `fastify.authenticateCaller`.
     */
    personOnly?: boolean;
  }
  interface FastifyRequest {
    /** The caller, their organization, project and role (set by `fastify.authorize`). */
    auth: RequestAuth;
    /**
     * The person of the session cookie (set by `fastify.authorize` and
     * `fastify.authenticateCaller` when the request came with one), else null.
     */
    person: SignedInPerson | null;
  }
  interface FastifyInstance {
    /**
     * The onRequest hook of a project-scoped area's routes: `Authorization: Bearer <API token>`,
     * or the session cookie (with `X-Service-CSRF` on state-changing requests and the project in
     * `X-Service-Project`) → `request.auth`; then the scope the route needs (`<area>:read`, or
     * `<area>:write` for a method that changes something, or the route's `config.scope`, or one
     * of its `config.anyScope`) must be one the caller holds. Else 401, 403 or 400.
     */
    authorize(area: ScopeArea): (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /**
     * onRequest hook of routes about the caller itself (`/v1/me`): a bearer token →
     * `request.auth`, or the session cookie (CSRF as above) → `request.person`; else 401.
     */
    authenticateCaller(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

const BEARER = /^Bearer\s+(\S{1,512})\s*$/i;

/** How the plugin finds the caller: the modules that know callers provide it. */
export interface AuthenticationOptions {
  /** The caller of a bearer token, or undefined when the token is unknown, revoked or expired. */
  bearer(token: string): Promise<RequestAuth | undefined>;
  /**
   * The person of a session cookie's value, or undefined when the session is unknown or ended
   * (signed out, idle or past its absolute end). Without it, cookies are ignored.
   */
  session?(secret: string): Promise<SignedInPerson | undefined>;
  /**
   * What a signed-in person may do in a project (their membership), or undefined when they are
   * no member of it. Without it, a person is a member of no project (403 on project routes).
   */
  projectAccess?(person: SignedInPerson, projectId: string): Promise<RequestAuth | undefined>;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Marks every route the plugin `fastify` declares from now on as for people only (`personOnly`):
 * an API token gets 403 there before its body is read.
 */
export function forPeopleOnly(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    route.config = { ...route.config, personOnly: true };
  });
}

function tokenRefused() {
  return forbidden('An API token acts for a project, not a person: sign in with the session cookie');
}

/** The signed-in person of the request, or 403 for an API token (it acts for a project). */
export function personOf(request: FastifyRequest): SignedInPerson {
  if (request.person === null) throw tokenRefused();
  return request.person;
}

/**
 * For a state-changing request made with the session cookie: 403 unless `X-Service-CSRF` holds
 * the session's CSRF token (compared in constant time). A page of another site can make the
 * browser send the cookie, but cannot read the token to send it along.
 */
export function checkCsrf(request: FastifyRequest, csrfToken: string): void {
  if (SAFE_METHODS.has(request.method)) return;
  const sent = singleHeader(request.headers[CSRF_HEADER]);
  if (sent === undefined || sent === '')
    throw forbidden(
      'Send the X-Service-CSRF header with the csrfToken of the sign-in (also in GET /v1/me): a state-changing request made with the session cookie needs it',
    );
  const expected = Buffer.from(csrfToken, 'utf8');
  const given = Buffer.from(sent, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw forbidden("The X-Service-CSRF header does not match this session's CSRF token");
}

/**
 * Authentication, one plugin for every kind of caller: `Authorization: Bearer <token>` resolved
 * by `options.bearer` (today projects' API tokens), and the dashboard's session cookie
 * (`service_session`) resolved by `options.session` (accounts' sessions), with its CSRF check.
 * A request with a bearer token is judged by the token alone. Routes opt in with
 * `onRequest: fastify.authorize(area)` (or a hook on their encapsulated context); every query they
 * run is then scoped by `request.auth.project.id`.
 */
export const authenticationPlugin = fastifyPlugin(
  async (fastify: FastifyInstance, options: AuthenticationOptions) => {
    if (!fastify.hasRequestDecorator('cookies')) await fastify.register(cookie);
    fastify.decorateRequest('auth', null as unknown as RequestAuth);
    fastify.decorateRequest('person', null);

    /** The bearer token's caller; undefined without an Authorization header. */
    async function bearerCaller(request: FastifyRequest): Promise<RequestAuth | undefined> {
      const header = request.headers.authorization;
      if (header === undefined) return undefined;
      const match = BEARER.exec(header);
      if (match === null) throw unauthorized('The Authorization header must be "Bearer <token>"');
      const auth = await options.bearer(match[1] as string);
      if (auth === undefined)
        throw unauthorized('The API token is not valid (unknown, revoked, expired, or its project deleted)');
      return auth;
    }

    /** The session cookie's person (CSRF checked); undefined without a session cookie. */
    async function signedInPerson(request: FastifyRequest): Promise<SignedInPerson | undefined> {
      const secret = request.cookies[SESSION_COOKIE];
      if (options.session === undefined || secret === undefined || secret === '') return undefined;
      const person = secret.length > 128 ? undefined : await options.session(secret);
      if (person === undefined)
        throw unauthorized('The session has ended (signed out or expired): sign in again');
      checkCsrf(request, person.csrfToken);
      request.person = person;
      return person;
    }

    /** The caller and project of a project-scoped request (bearer, or cookie and header). */
    async function projectCaller(request: FastifyRequest): Promise<RequestAuth> {
      const param = request.routeOptions.config.projectParam;
      const fromPath =
        param === undefined ? undefined : (request.params as Record<string, string | undefined>)[param];
      const auth = await bearerCaller(request);
      if (auth !== undefined) {
        // A token sees only its own project: any other id is "not found", never "forbidden".
        if (fromPath !== undefined && fromPath !== auth.project.id)
          throw notFound(`No project ${fromPath.slice(0, 64)}`);
        return auth;
      }
      const person = await signedInPerson(request);
      if (person === undefined) throw unauthorized('Send an API token: Authorization: Bearer <token>');
      if (fromPath !== undefined) {
        const access = fromPath.length > 64 ? undefined : await options.projectAccess?.(person, fromPath);
        if (access === undefined) throw notFound(`No project ${fromPath.slice(0, 64)}`);
        return access;
      }
      const projectId = singleHeader(request.headers[PROJECT_HEADER]);
      if (projectId === undefined || projectId === '')
        throw invalid(
          'Send the project to act on in the X-Service-Project header (signed in with the session cookie)',
        );
      const access = projectId.length > 64 ? undefined : await options.projectAccess?.(person, projectId);
      if (access === undefined)
        throw forbidden(`You are not a member of project ${JSON.stringify(projectId.slice(0, 64))}`);
      return access;
    }

    fastify.decorate('authorize', (area: ScopeArea) => async (request: FastifyRequest) => {
      const auth = await projectCaller(request);
      request.auth = auth;
      if (request.routeOptions.config.personOnly === true && auth.caller.type === 'api_token')
        throw tokenRefused();
      const { scope, anyScope } = request.routeOptions.config;
      const needed = anyScope ?? [
        scope ?? (`${area}:${SAFE_METHODS.has(request.method) ? 'read' : 'write'}` as Scope),
      ];
      if (!needed.some((one) => auth.scopes.has(one))) {
        const named = needed.length === 1 ? `${needed[0]}` : `one of ${needed.join(', ')}`;
        throw forbidden(
          auth.caller.type === 'api_token'
            ? needed.length === 1
              ? `This API token lacks the ${named} scope`
              : `This API token lacks a scope this needs: ${named}`
            : `Your role (${auth.role}) does not allow this: it needs ${named}`,
        );
      }
    });

    fastify.decorate('authenticateCaller', async (request: FastifyRequest) => {
      const auth = await bearerCaller(request);
      if (auth !== undefined) {
        if (request.routeOptions.config.personOnly === true) throw tokenRefused();
        request.auth = auth;
        return;
      }
      const person = await signedInPerson(request);
      if (person === undefined)
        throw unauthorized('Sign in (the service_session cookie of POST /auth/login) or send an API token');
    });
  },
  { name: 'authentication', dependencies: ['services'] },
);
