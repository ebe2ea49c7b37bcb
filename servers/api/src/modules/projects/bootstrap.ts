import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import { createOrganization, findFirstOrganization } from '../orgs/index.ts';
import { createApiTokenRecord } from './api-tokens.ts';
import { createProject } from './projects.ts';

/** What a new user needs to send data and read it back. */
export interface ProjectCredentials {
  orgId: string;
  projectId: string;
  projectKey: string;
  apiToken: string;
}

/** Where the first project's credentials are kept for later starts (mode 0600). */
const FIRST_PROJECT_FILE = 'first-project.json';

/**
 * Creates an organization, a project, its key and an API token, in one transaction.
 *
 * @example
 * ```ts
 * const credentials = await createProjectWithToken(database, masterKey, { name: 'Web app' });
 * ```
 */
export async function createProjectWithToken(
  database: Kysely<Database>,
  masterKey: MasterKey,
  options: { name: string; organizationName?: string },
): Promise<ProjectCredentials> {
  return database.transaction().execute(async (transaction) => {
    const organization =
      (await findFirstOrganization(transaction)) ??
      (await createOrganization(transaction, options.organizationName ?? 'My organization'));
    const project = await createProject(transaction, {
      organizationId: organization.id,
      name: options.name,
      masterKey,
    });
    const { token } = await createApiTokenRecord(transaction, {
      projectId: project.id,
      name: 'created with the project',
    });
    return {
      orgId: organization.id,
      projectId: project.id,
      projectKey: project.project_key,
      apiToken: token,
    };
  });
}

/**
 * The embedded server's first start: when the store has no organization yet, create one with a
 * project and a token and keep the credentials in `<data dir>/first-project.json` (0600) so
 * later starts can print them again (the database keeps only the token's hash). Returns the
 * credentials, or null when the store already had data but no credentials file.
 */
export async function ensureFirstProject(
  database: Kysely<Database>,
  masterKey: MasterKey,
  dataDirectory: string,
): Promise<{ credentials: ProjectCredentials; created: boolean } | null> {
  const path = join(dataDirectory, FIRST_PROJECT_FILE);
  const saved = await readFile(path, 'utf8').then(
    (text) => JSON.parse(text) as ProjectCredentials,
    () => null,
  );
  if (saved !== null) return { credentials: saved, created: false };
  if ((await findFirstOrganization(database)) !== undefined) return null;
  const credentials = await createProjectWithToken(database, masterKey, { name: 'My first project' });
  await writeFile(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return { credentials, created: true };
}

/** The start-up banner: credentials and a ready-to-paste curl example. */
export function formatWelcome(credentials: ProjectCredentials, baseUrl: string, created: boolean): string {
  return [
    '',
    created ? 'Created your first project:' : 'Your first project (kept in the data directory):',
    `  organization  ${credentials.orgId}`,
    `  project       ${credentials.projectId}`,
    `  project key   ${credentials.projectKey}   (public: goes into the SDK's init call)`,
    `  API token     ${credentials.apiToken}   (secret: for the REST API)`,
    '',
    'Try it:',
    `  curl -s ${baseUrl}/v1/projects/current -H 'Authorization: Bearer ${credentials.apiToken}'`,
    '',
  ].join('\n');
}
