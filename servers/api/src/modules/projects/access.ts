import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { RequestAuth, SignedInPerson } from '../../platform/http/authentication.ts';
import { MEMBERSHIP_IN_FORCE, scopesOfRole } from '../orgs/index.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * What a signed-in person may do in a project, for the authentication plugin: the scopes of
 * their role in the project's organization; undefined when they are no member of it, or the
 * project is deleted. One statement (the project joined to the membership).
 */
export async function projectAccess(
  database: Executor,
  person: SignedInPerson,
  projectId: string,
): Promise<RequestAuth | undefined> {
  const row = await database
    .selectFrom('projects')
    .innerJoin('organization_members', (join) =>
      join
        .onRef('organization_members.organization_id', '=', 'projects.organization_id')
        .on('organization_members.user_id', '=', person.userId),
    )
    .selectAll('projects')
    .select('organization_members.role as member_role')
    .where('projects.id', '=', projectId)
    .where('projects.deleted_at', 'is', null)
    .where(MEMBERSHIP_IN_FORCE)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const { member_role: role, ...project } = row;
  return {
    caller: { type: 'user', id: person.userId },
    organizationId: project.organization_id,
    project: project as Project,
    role,
    scopes: scopesOfRole(role),
  };
}
