import type { Kysely } from 'kysely';
import { recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Organization, Role } from '../../platform/database/tables/organizations.table.ts';
import { createVerifiedUser, signInLink } from '../accounts/index.ts';
import { findFirstOrganization } from './organizations.ts';
import { addMember } from './repository.ts';

// People the operator adds from the command line (`svc create-user`) and the first start's owner.

/** The owner account the embedded server's first start creates, unless `SVC_OWNER_EMAIL` says another. */
export const DEFAULT_OWNER_EMAIL = 'owner@svc.localhost';

/** Who was added where, and the one-time sign-in link when no password was given. */
export interface AddedPerson {
  userId: string;
  email: string;
  organization: Pick<Organization, 'id' | 'name'>;
  role: Role;
  signInLink?: string;
}

/**
 * Creates a verified account and makes it a member of the organization (by default the first
 * one) with the role; without a password, answers a one-time sign-in link (one hour). Recorded in
 * the organization's audit trail as the server's doing (`actor` names the command).
 */
export async function addPerson(
  database: Kysely<Database>,
  appUrl: string,
  options: {
    email: string;
    name?: string | undefined;
    password?: string | undefined;
    organizationId?: string | undefined;
    role: Role;
    actor: string;
  },
): Promise<AddedPerson | { problem: string }> {
  const organization =
    options.organizationId === undefined
      ? await findFirstOrganization(database)
      : await database
          .selectFrom('organizations')
          .selectAll()
          .where('id', '=', options.organizationId)
          .executeTakeFirst();
  if (organization === undefined)
    return {
      problem:
        options.organizationId === undefined
          ? 'There is no organization yet: create a project first (svc create-project)'
          : `No organization ${options.organizationId}`,
    };
  const created = await createVerifiedUser(database, options);
  if ('problem' in created) return created;
  const { user } = created;
  await database.transaction().execute(async (transaction) => {
    await addMember(transaction, organization.id, user.id, options.role);
    await recordAudit(
      transaction,
      organization.id,
      { type: 'system', label: options.actor },
      { ip: null, userAgent: null },
      { action: 'member.joined', target: { type: 'user', id: user.id }, details: { role: options.role } },
    );
  });
  return {
    userId: user.id,
    email: user.email,
    organization: { id: organization.id, name: organization.name },
    role: options.role,
    ...(options.password === undefined ? { signInLink: await signInLink(database, appUrl, user) } : {}),
  };
}
