import { type Kysely, sql, type Transaction } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import { assetBlobKey } from '../assets/index.ts';
import { meter } from '../usage/index.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** What a deletion removed: rows per table, and `blobs` queued for removal from the blob store. */
export type Removed = Record<string, number>;

/** How many rows a delete removed. */
export async function deleted(query: {
  executeTakeFirst(): Promise<{ numDeletedRows: bigint }>;
}): Promise<number> {
  return Number((await query.executeTakeFirst()).numDeletedRows);
}

/** Adds `more` into `into` (a receipt accumulates what each step removed). */
export function addRemoved(into: Removed, more: Removed): Removed {
  for (const [key, count] of Object.entries(more)) if (count > 0) into[key] = (into[key] ?? 0) + count;
  return into;
}

/**
 * The tables that hold a session's data by `(project_id, session_id)`, deleted in this order
 * (what is derived first, the session row last). Calls' own tables go by call id before these.
 */
const BY_SESSION = [
  'processing_jobs',
  'insight_jobs',
  'insight_progress',
  'asset_jobs',
  'asset_progress',
  'call_progress',
  'call_findings',
  'call_items',
  'calls',
  'page_views',
  'click_facts',
  'session_assets',
  'session_signals',
  'share_links',
  'spans',
  'log_records',
  'chunks',
] as const;

/**
 * Deletes sessions of one project everywhere they live, in the caller's transaction: the session
 * rows and every row derived from them (chunks, signals, calls with their tracks, series pieces,
 * items and findings, processing, facts and archiving jobs and progress, page views and clicks,
 * archived assets only they referenced, share links, spans and log records sent with their id,
 * the AI's explanations of them and ratings of those), issue occurrences with their clusters corrected (first and last
 * seen recomputed, a cluster left with no occurrence deleted), and queues their blobs in
 * `blob_deletions`, which {@link drainBlobDeletions} removes once this commits. Their stored bytes
 * are metered as removed (negative `stored_bytes`) on the day `now` falls on; the other usage
 * counts stay, as counts. Deleting sessions that are gone already removes nothing.
 *
 * The caller holds the rows still: the sessions' rows are locked first, so a concurrent deletion of
 * the same sessions waits and then finds nothing.
 *
 * @example
 * ```ts
 * const removed = await database.transaction().execute((transaction) =>
 *   deleteSessions(transaction, project.id, ['ses_1', 'ses_2'], new Date()));
 * await drainBlobDeletions(database, blobStore);
 * ```
 */
export async function deleteSessions(
  transaction: Transaction<Database>,
  projectId: string,
  sessionIds: readonly string[],
  now: Date,
): Promise<Removed> {
  const removed: Removed = {};
  if (sessionIds.length === 0) return removed;
  const sessions = await transaction
    .selectFrom('sessions')
    .select(['id', 'stored_bytes'])
    .where('project_id', '=', projectId)
    .where('id', 'in', sessionIds)
    .orderBy('id')
    .forUpdate()
    .execute();
  // Rows of a session whose row never committed (a chunk indexed without it) go too.
  const ids = [...sessionIds];

  const chunkBlobs = await transaction
    .selectFrom('chunks')
    .select('blob_key')
    .where('project_id', '=', projectId)
    .where('session_id', 'in', ids)
    .execute();
  const callIds = (
    await transaction
      .selectFrom('calls')
      .select('id')
      .where('project_id', '=', projectId)
      .where('session_id', 'in', ids)
      .execute()
  ).map((row) => row.id);
  const assetHashes = (
    await transaction
      .selectFrom('session_assets')
      .select('sha256')
      .distinct()
      .where('project_id', '=', projectId)
      .where('session_id', 'in', ids)
      .where('sha256', 'is not', null)
      .execute()
  ).map((row) => row.sha256 as string);

  if (callIds.length > 0) {
    for (const table of ['call_tracks', 'call_series_pieces'] as const) {
      removed[table] = await deleted(
        transaction.deleteFrom(table).where('project_id', '=', projectId).where('call_id', 'in', callIds),
      );
    }
  }

  const occurrences = await transaction
    .deleteFrom('cluster_occurrences')
    .where('project_id', '=', projectId)
    .where('session_id', 'in', ids)
    .returning('cluster_id')
    .execute();
  removed.cluster_occurrences = occurrences.length;
  const clusterIds = [...new Set(occurrences.map((row) => row.cluster_id))].sort();
  if (clusterIds.length > 0) addRemoved(removed, await correctClusters(transaction, projectId, clusterIds));

  for (const table of BY_SESSION) {
    removed[table] = await deleted(
      transaction.deleteFrom(table).where('project_id', '=', projectId).where('session_id', 'in', ids),
    );
  }
  removed.ai_jobs = await deleted(
    transaction
      .deleteFrom('ai_jobs')
      .where('project_id', '=', projectId)
      .where('kind', '=', 'explain_session')
      .where(sql<string>`input->>'sessionId'`, 'in', ids),
  );
  // Ratings of the AI's answers about these sessions (their comments may quote them).
  removed.ai_feedback = await deleted(
    transaction.deleteFrom('ai_feedback').where('project_id', '=', projectId).where('subject_id', 'in', ids),
  );
  removed.sessions = await deleted(
    transaction.deleteFrom('sessions').where('project_id', '=', projectId).where('id', 'in', ids),
  );

  // Archived assets no other session of the project references any more.
  const orphanHashes: string[] = [];
  if (assetHashes.length > 0) {
    const stillUsed = new Set(
      (
        await transaction
          .selectFrom('session_assets')
          .select('sha256')
          .distinct()
          .where('project_id', '=', projectId)
          .where('sha256', 'in', assetHashes)
          .execute()
      ).map((row) => row.sha256),
    );
    orphanHashes.push(...assetHashes.filter((hash) => !stillUsed.has(hash)));
    if (orphanHashes.length > 0) {
      removed.asset_fetches = await deleted(
        transaction
          .deleteFrom('asset_fetches')
          .where('project_id', '=', projectId)
          .where('sha256', 'in', orphanHashes),
      );
    }
  }

  const blobKeys = [
    ...chunkBlobs.map((row) => row.blob_key),
    ...orphanHashes.map((hash) => assetBlobKey(projectId, hash)),
  ];
  removed.blobs = await queueBlobDeletions(transaction, projectId, blobKeys);

  const storedBytes = sessions.reduce((total, session) => total + Number(session.stored_bytes), 0);
  if (storedBytes > 0) await meter(transaction, projectId, { stored_bytes: -storedBytes }, now);
  for (const key of Object.keys(removed)) if (removed[key] === 0) delete removed[key];
  return removed;
}

/**
 * After occurrences were deleted: clusters left with none are deleted (their extra fingerprints
 * with them); the others get first and last seen from the occurrences they keep. `count24h` and
 * the other counts are counted from the occurrences, so they are right already.
 */
export async function correctClusters(
  transaction: Transaction<Database>,
  projectId: string,
  clusterIds: readonly string[],
): Promise<Removed> {
  const empty = await transaction
    .deleteFrom('issue_clusters')
    .where('project_id', '=', projectId)
    .where('id', 'in', clusterIds)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('cluster_occurrences')
            .select(sql`1`.as('one'))
            .whereRef('cluster_occurrences.project_id', '=', 'issue_clusters.project_id')
            .whereRef('cluster_occurrences.cluster_id', '=', 'issue_clusters.id'),
        ),
      ),
    )
    .executeTakeFirst();
  await sql`
    update issue_clusters set
      first_seen_at = seen.first_seen_at,
      last_seen_at = seen.last_seen_at
    from (
      select cluster_id, min(seen_at) as first_seen_at, max(seen_at) as last_seen_at
      from cluster_occurrences
      where project_id = ${projectId} and cluster_id in (${sql.join(clusterIds)})
      group by cluster_id
    ) as seen
    where issue_clusters.project_id = ${projectId} and issue_clusters.id = seen.cluster_id`.execute(
    transaction,
  );
  return { issue_clusters: Number(empty.numDeletedRows) };
}

/** Queues blobs for removal after the caller's transaction commits; returns how many were new. */
async function queueBlobDeletions(
  executor: Executor,
  projectId: string,
  blobKeys: readonly string[],
): Promise<number> {
  let queued = 0;
  for (let start = 0; start < blobKeys.length; start += 1_000) {
    const result = await executor
      .insertInto('blob_deletions')
      .values(blobKeys.slice(start, start + 1_000).map((blob_key) => ({ blob_key, project_id: projectId })))
      .onConflict((conflict) => conflict.column('blob_key').doNothing())
      .executeTakeFirst();
    queued += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  return queued;
}

/** How many queued blob deletions one {@link drainBlobDeletions} round takes. */
const DRAIN_BATCH = 500;

/**
 * Removes queued blobs from the blob store, then their queue rows, `batch` at a time until the
 * queue is empty; returns how many went. A blob already gone is not an error (removal is
 * idempotent), so a crash anywhere only means the next drain removes it again. Any number of
 * processes may drain at once.
 *
 * @example
 * ```ts
 * await drainBlobDeletions(database, blobStore); // after deleteSessions committed
 * ```
 */
export async function drainBlobDeletions(
  database: Kysely<Database>,
  blobStore: BlobStore,
  options: { batch?: number; limit?: number } = {},
): Promise<number> {
  const batch = options.batch ?? DRAIN_BATCH;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let drained = 0;
  while (drained < limit) {
    const keys = (
      await database
        .selectFrom('blob_deletions')
        .select('blob_key')
        .orderBy('queued_at')
        .orderBy('blob_key')
        .limit(Math.min(batch, limit - drained))
        .execute()
    ).map((row) => row.blob_key);
    if (keys.length === 0) break;
    for (const key of keys) await blobStore.delete(key);
    await database.deleteFrom('blob_deletions').where('blob_key', 'in', keys).execute();
    drained += keys.length;
    if (keys.length < batch) break;
  }
  return drained;
}
