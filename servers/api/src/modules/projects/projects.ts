import { type Kysely, sql, type Transaction } from 'kysely';
import {
  createDataKey,
  type MasterKey,
  unwrapDataKey,
  wrapDataKey,
  wrappingKeyId,
} from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { createId } from '../../platform/ids.ts';
import { createProjectKey } from '../../platform/secrets.ts';
import { DEFAULT_PROJECT_SETTINGS, type ProjectSettings } from './settings.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** How long a rotated project key keeps working, so pages already deployed keep recording. */
export const PROJECT_KEY_GRACE_HOURS = 24;

export async function createProject(
  database: Executor,
  options: { organizationId: string; name: string; masterKey: MasterKey },
): Promise<Project> {
  const { wrappedKey } = createDataKey(options.masterKey);
  return database
    .insertInto('projects')
    .values({
      id: createId('proj'),
      organization_id: options.organizationId,
      name: options.name,
      project_key: createProjectKey(),
      previous_project_key: null,
      previous_project_key_expires_at: null,
      wrapped_data_key: wrappedKey,
      deleted_at: null,
      settings: JSON.stringify(DEFAULT_PROJECT_SETTINGS),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findProjectById(database: Executor, id: string): Promise<Project | undefined> {
  return database.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The organization's projects (not deleted), oldest first. */
export async function listProjects(database: Executor, organizationId: string): Promise<Project[]> {
  return database
    .selectFrom('projects')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .limit(1000)
    .execute();
}

/**
 * Deletes a project: from now on its key ingests nothing, its tokens and members reach nothing,
 * and it is in no list. Its stored data stays until the retention sweep removes it (see
 * servers/api/README.md, Organizations and access). Undefined when there is no such live project.
 */
export async function deleteProject(
  database: Executor,
  projectId: string,
  now = new Date(),
): Promise<Project | undefined> {
  return database
    .updateTable('projects')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', projectId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The project a (current, or rotated and not yet expired) project key belongs to. */
export async function findProjectByKey(
  database: Executor,
  key: string,
  now = new Date(),
): Promise<Project | undefined> {
  return database
    .selectFrom('projects')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where((where) =>
      where.or([
        where('project_key', '=', key),
        where.and([
          where('previous_project_key', '=', key),
          where('previous_project_key_expires_at', '>', now),
        ]),
      ]),
    )
    .executeTakeFirst();
}

/**
 * Gives the project a new key. The old key keeps working for {@link PROJECT_KEY_GRACE_HOURS}
 * (a key rotated before that replaces the previous one at once).
 */
export async function rotateProjectKey(
  database: Executor,
  projectId: string,
  now = new Date(),
): Promise<Project | undefined> {
  return database
    .updateTable('projects')
    .set({
      previous_project_key: sql`project_key`,
      previous_project_key_expires_at: new Date(now.getTime() + PROJECT_KEY_GRACE_HOURS * 3_600_000),
      project_key: createProjectKey(),
      updated_at: now,
    })
    .where('id', '=', projectId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Changes a project's name and settings (those given) in one statement. `undefined` when there is
 * no such project (the caller answers 404).
 */
export async function updateProject(
  database: Executor,
  projectId: string,
  changes: { name?: string | undefined; settings?: ProjectSettings | undefined },
): Promise<Project | undefined> {
  return database
    .updateTable('projects')
    .set({
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.settings === undefined ? {} : { settings: JSON.stringify(changes.settings) }),
      updated_at: new Date(),
    })
    .where('id', '=', projectId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Replaces a project's settings: {@link updateProject} with settings only. */
export function updateProjectSettings(
  database: Executor,
  projectId: string,
  settings: ProjectSettings,
): Promise<Project | undefined> {
  return updateProject(database, projectId, { settings });
}

/** What {@link rewrapDataKeys} did. */
export interface RewrapResult {
  /** Projects whose data key is now wrapped by the current master key and was not before. */
  rewrapped: number;
  /** Projects whose data key the current master key wrapped already. */
  current: number;
}

/**
 * Re-wraps every project's data key under `master` (a master key rotation): each key that another
 * master key wrapped is unwrapped with it ({@link MasterKey.previous}) and wrapped again. The data
 * keys themselves, and so every stored blob, stay as they are. A project is updated only if its
 * wrapped key is still the one read, so running it from several places at once is safe, and so
 * is running it again. Every project, whatever its organization: an operator's tool.
 *
 * @throws {EncryptionError} `wrong_key` for a data key none of the loaded master keys wrapped
 *   (nothing after it is changed; the ones before stay re-wrapped, which is harmless).
 * @example
 * ```ts
 * const { rewrapped } = await rewrapDataKeys(database, master);
 * ```
 */
export async function rewrapDataKeys(database: Kysely<Database>, master: MasterKey): Promise<RewrapResult> {
  const result: RewrapResult = { rewrapped: 0, current: 0 };
  const projects = await database
    .selectFrom('projects')
    .select(['id', 'wrapped_data_key'])
    .orderBy('id')
    .execute();
  for (const project of projects) {
    if (wrappingKeyId(project.wrapped_data_key) === master.id) {
      result.current += 1;
      continue;
    }
    const rewrapped = wrapDataKey(master, unwrapDataKey(master, project.wrapped_data_key));
    const updated = await database
      .updateTable('projects')
      .set({ wrapped_data_key: rewrapped })
      .where('id', '=', project.id)
      .where('wrapped_data_key', '=', project.wrapped_data_key)
      .executeTakeFirst();
    // Zero rows: another run re-wrapped it meanwhile.
    if (updated.numUpdatedRows === 1n) result.rewrapped += 1;
    else result.current += 1;
  }
  return result;
}
