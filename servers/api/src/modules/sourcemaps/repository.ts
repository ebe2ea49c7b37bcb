import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { NewSourcemapFile, SourcemapFile } from '../../platform/database/tables/sourcemaps.table.ts';

// The rows of uploaded bundles and maps (their bytes are in the blob store under `blob_key`).

type Executor = Kysely<Database>;

/** Inserts the rows of one upload, all or none (one transaction). */
export async function insertSourcemapFiles(
  database: Executor,
  rows: readonly NewSourcemapFile[],
): Promise<void> {
  if (rows.length === 0) return;
  await database.transaction().execute(async (transaction) => {
    await transaction
      .insertInto('sourcemap_files')
      .values([...rows])
      .execute();
  });
}

/** A page of the project's files, newest first, after the id `before` (exclusive). */
export async function findSourcemapFilesPage(
  database: Executor,
  projectId: string,
  options: { release?: string; before?: string; limit: number },
): Promise<SourcemapFile[]> {
  let query = database.selectFrom('sourcemap_files').selectAll().where('project_id', '=', projectId);
  if (options.release !== undefined) query = query.where('release', '=', options.release);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  return query.orderBy('id', 'desc').limit(options.limit).execute();
}

/**
 * The map a frame of a script uploaded under one of `urls` uses. The newest bundle with that URL
 * (of `release` when given) decides: when it carries a debug id, only the map of that debug id is
 * used (the bundle's id is authoritative: a map of another build is never taken); otherwise the
 * map uploaded for the release at `<url>.map`, unless that map belongs to another build. Without
 * a release, only files uploaded without one are matched by URL.
 */
export async function findMapFor(
  database: Executor,
  projectId: string,
  urls: readonly string[],
  release: string | undefined,
): Promise<SourcemapFile | undefined> {
  if (urls.length === 0) return undefined;
  let bundles = database
    .selectFrom('sourcemap_files')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('kind', '=', 'bundle')
    .where('url', 'in', [...urls]);
  if (release !== undefined) bundles = bundles.where('release', '=', release);
  const bundle = await bundles.orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (bundle?.debug_id != null) {
    return database
      .selectFrom('sourcemap_files')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('kind', '=', 'map')
      .where('debug_id', '=', bundle.debug_id)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
  const map = await database
    .selectFrom('sourcemap_files')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('kind', '=', 'map')
    .where(
      'url',
      'in',
      urls.map((url) => `${url}.map`),
    )
    .where((where) => (release === undefined ? where('release', 'is', null) : where('release', '=', release)))
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  // A map with a debug id belongs to the build of that id: found by URL, it is used only when no
  // bundle was uploaded for the URL (a bundle there without that id is another build).
  if (map?.debug_id != null && bundle !== undefined) return undefined;
  return map;
}
