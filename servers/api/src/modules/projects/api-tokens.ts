import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { ALL_SCOPES, type RequestAuth } from '../../platform/http/authentication.ts';
import { createId } from '../../platform/ids.ts';
import { createApiToken, hashSecret } from '../../platform/secrets.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** Creates an API token for a project. The token is returned once; only its hash is stored. */
export async function createApiTokenRecord(
  database: Executor,
  options: { projectId: string; name: string },
): Promise<{ id: string; token: string }> {
  const token = createApiToken();
  const id = createId('tok');
  await database
    .insertInto('api_tokens')
    .values({
      id,
      project_id: options.projectId,
      name: options.name,
      token_hash: hashSecret(token),
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
  return { id, token };
}

/** The project a live (not revoked) API token is bound to. */
async function findProjectByApiToken(
  database: Executor,
  token: string,
): Promise<{ tokenId: string; project: Project } | undefined> {
  const row = await database
    .selectFrom('api_tokens')
    .innerJoin('projects', 'projects.id', 'api_tokens.project_id')
    .selectAll('projects')
    .select('api_tokens.id as token_id')
    .where('api_tokens.token_hash', '=', hashSecret(token))
    .where('api_tokens.revoked_at', 'is', null)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const { token_id: tokenId, ...project } = row;
  return { tokenId, project };
}

/**
 * The caller of a project API token, for the authentication plugin: bound to its project, acting
 * as that project's admin with every scope; undefined when the token is unknown or revoked.
 */
export async function authenticateApiToken(
  database: Executor,
  token: string,
): Promise<RequestAuth | undefined> {
  const found = await findProjectByApiToken(database, token);
  if (found === undefined) return undefined;
  return {
    caller: { type: 'api_token', id: found.tokenId },
    organizationId: found.project.organization_id,
    project: found.project,
    role: 'admin',
    scopes: ALL_SCOPES,
  };
}
