import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { ALL_SCOPES, isScope, type RequestAuth, type Scope } from '../../platform/http/authentication.ts';
import { createId } from '../../platform/ids.ts';
import { createApiToken, hashSecret } from '../../platform/secrets.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** A token as its organization's admins see it: never its secret. */
export interface ApiTokenRow {
  id: string;
  project_id: string;
  name: string;
  scopes: string[] | null;
  expires_at: Date | null;
  created_by: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

/**
 * Creates an API token for a project. The token is returned once; only its hash is stored.
 * Without `scopes` it holds every scope (the first start's and `svc create-project`'s token).
 */
export async function createApiTokenRecord(
  database: Executor,
  options: {
    projectId: string;
    name: string;
    scopes?: readonly Scope[] | undefined;
    expiresAt?: Date | undefined;
    createdBy?: string | undefined;
  },
): Promise<{ id: string; token: string; row: ApiTokenRow }> {
  const token = createApiToken();
  const id = createId('tok');
  const row = await database
    .insertInto('api_tokens')
    .values({
      id,
      project_id: options.projectId,
      name: options.name,
      token_hash: hashSecret(token),
      scopes: options.scopes === undefined ? null : JSON.stringify([...options.scopes].sort()),
      expires_at: options.expiresAt ?? null,
      created_by: options.createdBy ?? null,
      last_used_at: null,
      revoked_at: null,
    })
    .returning([
      'id',
      'project_id',
      'name',
      'scopes',
      'expires_at',
      'created_by',
      'created_at',
      'last_used_at',
    ])
    .executeTakeFirstOrThrow();
  return { id, token, row };
}

/** The scopes a token row holds: every scope for a full-access token (`scopes` null). */
export function tokenScopes(scopes: readonly string[] | null): ReadonlySet<Scope> {
  return scopes === null ? ALL_SCOPES : new Set(scopes.filter(isScope));
}

/**
 * The caller of a project API token, for the authentication plugin: bound to its project, with
 * the token's scopes; undefined when the token is unknown, revoked, expired or its project
 * deleted.
 */
export async function authenticateApiToken(
  database: Executor,
  token: string,
  now = new Date(),
): Promise<RequestAuth | undefined> {
  const row = await database
    .selectFrom('api_tokens')
    .innerJoin('projects', 'projects.id', 'api_tokens.project_id')
    .selectAll('projects')
    .select(['api_tokens.id as token_id', 'api_tokens.scopes as token_scopes'])
    .where('api_tokens.token_hash', '=', hashSecret(token))
    .where('api_tokens.revoked_at', 'is', null)
    .where((where) =>
      where.or([where('api_tokens.expires_at', 'is', null), where('api_tokens.expires_at', '>', now)]),
    )
    .where('projects.deleted_at', 'is', null)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const { token_id: tokenId, token_scopes: scopes, ...project } = row;
  return {
    caller: { type: 'api_token', id: tokenId },
    organizationId: project.organization_id,
    project: project as Project,
    role: null,
    scopes: tokenScopes(scopes),
  };
}

/** The live (not revoked) tokens of an organization's projects, newest first. */
export async function listApiTokens(
  database: Executor,
  organizationId: string,
  projectId?: string | undefined,
): Promise<ApiTokenRow[]> {
  let query = database
    .selectFrom('api_tokens')
    .innerJoin('projects', 'projects.id', 'api_tokens.project_id')
    .select([
      'api_tokens.id',
      'api_tokens.project_id',
      'api_tokens.name',
      'api_tokens.scopes',
      'api_tokens.expires_at',
      'api_tokens.created_by',
      'api_tokens.created_at',
      'api_tokens.last_used_at',
    ])
    .where('projects.organization_id', '=', organizationId)
    .where('projects.deleted_at', 'is', null)
    .where('api_tokens.revoked_at', 'is', null);
  if (projectId !== undefined) query = query.where('api_tokens.project_id', '=', projectId);
  return query.orderBy('api_tokens.id', 'desc').limit(1000).execute();
}

/** Revokes a token of the organization; undefined when it has no such live token. */
export async function revokeApiToken(
  database: Executor,
  organizationId: string,
  tokenId: string,
): Promise<{ id: string; name: string; project_id: string } | undefined> {
  return database
    .updateTable('api_tokens')
    .set({ revoked_at: new Date() })
    .where('id', '=', tokenId)
    .where('revoked_at', 'is', null)
    .where(
      'project_id',
      'in',
      sql<string>`(select id from projects where organization_id = ${organizationId})`,
    )
    .returning(['id', 'name', 'project_id'])
    .executeTakeFirst();
}
