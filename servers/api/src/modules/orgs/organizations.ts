import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Organization } from '../../platform/database/tables/organizations.table.ts';
import { createId } from '../../platform/ids.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export async function createOrganization(database: Executor, name: string): Promise<Organization> {
  return database
    .insertInto('organizations')
    .values({ id: createId('org'), name })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The oldest organization, if any (the embedded server's first-start bootstrap uses it). */
export async function findFirstOrganization(database: Executor): Promise<Organization | undefined> {
  return database.selectFrom('organizations').selectAll().orderBy('id').limit(1).executeTakeFirst();
}
