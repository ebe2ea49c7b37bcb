import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { AssetStatus, NewSessionAsset } from '../../platform/database/tables/assets.table.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** The blob store key of an archived content: per project, by its SHA-256. */
export const assetBlobKey = (projectId: string, sha256: string) => `assets/${projectId}/${sha256}`;

/** The last fetch of `url` for the project, if it is younger than `since`. */
export async function recentFetch(executor: Executor, projectId: string, url: string, since: Date) {
  return executor
    .selectFrom('asset_fetches')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('url', '=', url)
    .where('fetched_at', '>', since)
    .executeTakeFirst();
}

/**
 * Records a fetch of `url` (replacing the previous one of the project's).
 *
 * @example
 * ```ts
 * await saveFetch(database, projectId, { url, status: 'failed', error: 'HTTP 404', fetched_at: new Date() });
 * ```
 */
export async function saveFetch(
  executor: Executor,
  projectId: string,
  fetch: {
    url: string;
    status: AssetStatus;
    sha256?: string | null;
    content_type?: string | null;
    bytes?: number | null;
    error?: string | null;
    fetched_at: Date;
  },
) {
  const row = {
    project_id: projectId,
    url: fetch.url,
    status: fetch.status,
    sha256: fetch.sha256 ?? null,
    content_type: fetch.content_type ?? null,
    bytes: fetch.bytes ?? null,
    error: fetch.error ?? null,
    fetched_at: fetch.fetched_at,
  };
  await executor
    .insertInto('asset_fetches')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'url']).doUpdateSet({
        status: row.status,
        sha256: row.sha256,
        content_type: row.content_type,
        bytes: row.bytes,
        error: row.error,
        fetched_at: row.fetched_at,
      }),
    )
    .execute();
}

/** Whether the project already stored a content (so its blob exists). */
export async function contentKnown(executor: Executor, projectId: string, sha256: string) {
  const row = await executor
    .selectFrom('asset_fetches')
    .select('sha256')
    .where('project_id', '=', projectId)
    .where('sha256', '=', sha256)
    .where('status', '=', 'archived')
    .executeTakeFirst();
  return row !== undefined;
}

/** Links the session to what its URLs were archived as; a URL it already has keeps its first. */
export async function linkSessionAssets(executor: Executor, rows: readonly NewSessionAsset[]) {
  if (rows.length === 0) return;
  await executor
    .insertInto('session_assets')
    .values([...rows])
    .onConflict((conflict) => conflict.columns(['project_id', 'session_id', 'url']).doNothing())
    .execute();
}

/** The URLs the session's snapshots referenced, in the order they were archived. */
export async function readSessionAssets(executor: Executor, projectId: string, sessionId: string) {
  return executor
    .selectFrom('session_assets')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .orderBy('fetched_at')
    .orderBy('url')
    .execute();
}

/** The media type of an archived content of the project, or undefined when it has none such. */
export async function archivedContentType(executor: Executor, projectId: string, sha256: string) {
  const row = await executor
    .selectFrom('session_assets')
    .select('content_type')
    .where('project_id', '=', projectId)
    .where('sha256', '=', sha256)
    .where('status', '=', 'archived')
    .limit(1)
    .executeTakeFirst();
  return row?.content_type ?? undefined;
}

/**
 * For a stylesheet's rewriting: the content each of `urls` was archived as by the sessions that
 * linked the stylesheet `sha256` (the latest), so fonts and images stay those of the same day.
 */
export async function archivedAlongside(
  executor: Executor,
  projectId: string,
  sha256: string,
  urls: readonly string[],
): Promise<Map<string, string>> {
  if (urls.length === 0) return new Map();
  const rows = await executor
    .selectFrom('session_assets as asset')
    .select(['asset.url', 'asset.sha256'])
    .where('asset.project_id', '=', projectId)
    .where('asset.url', 'in', [...urls])
    .where('asset.status', '=', 'archived')
    .where(
      'asset.session_id',
      'in',
      sql<string>`(select session_id from session_assets where project_id = ${projectId} and sha256 = ${sha256})`,
    )
    .orderBy('asset.fetched_at', 'desc')
    .execute();
  const found = new Map<string, string>();
  for (const row of rows) if (row.sha256 !== null && !found.has(row.url)) found.set(row.url, row.sha256);
  return found;
}

/** The last chunk the archiving job read of the session (-1: none). */
export async function consumedSeq(executor: Executor, projectId: string, sessionId: string) {
  const row = await executor
    .selectFrom('asset_progress')
    .select('consumed_seq')
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row?.consumed_seq ?? -1;
}

/** Moves the session's watermark forward (never back). */
export async function saveConsumedSeq(executor: Executor, projectId: string, sessionId: string, seq: number) {
  await executor
    .insertInto('asset_progress')
    .values({ project_id: projectId, session_id: sessionId, consumed_seq: seq, updated_at: new Date() })
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'session_id']).doUpdateSet({
        consumed_seq: sql<number>`greatest(asset_progress.consumed_seq, excluded.consumed_seq)`,
        updated_at: sql<Date>`excluded.updated_at`,
      }),
    )
    .execute();
}
