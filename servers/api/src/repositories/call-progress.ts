import type { CallEvent, CallSample } from '@svc/protocol';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { PlacedCallItem } from '../calls/call-progress.ts';
import { joinSeries, type Series } from '../calls/series.ts';
import { insertBatches } from '../database/insert-batches.ts';
import type { Database } from '../database/schema.ts';

// The state of incremental call processing (migration 2026-11-28-incremental-calls): a
// session's progress row, the chunks after its watermark, and the series pieces appended to its
// calls.

type Executor = Kysely<Database> | Transaction<Database>;

/** A session's stored progress and its watermark. */
export interface StoredCallProgress {
  version: number;
  /** Every chunk with `seq <= consumedSeq` exists and its call items are consumed. */
  consumedSeq: number;
  /** The latest `sentAt` and arrival of those chunks. */
  consumedSentAt: Date | null;
  consumedReceivedAt: Date | null;
  /** The `SessionProgress` JSON, as stored (the caller checks its version). */
  progress: unknown;
}

/** The session's progress row, or undefined (none yet, or reset for a recomputation). */
export async function findCallProgress(
  database: Executor,
  projectId: string,
  sessionId: string,
): Promise<StoredCallProgress | undefined> {
  const row = await database
    .selectFrom('call_progress')
    .select(['version', 'consumed_seq', 'consumed_sent_at', 'consumed_received_at', 'progress'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        version: row.version,
        consumedSeq: row.consumed_seq,
        consumedSentAt: row.consumed_sent_at,
        consumedReceivedAt: row.consumed_received_at,
        progress: row.progress,
      };
}

/**
 * Writes a session's progress over the version that was read (`undefined`: there was no row).
 * Returns false, writing nothing, when another job wrote it (or a reprocessing reset it) since:
 * the caller's transaction must then be given up and the job run again.
 */
export async function saveCallProgress(
  transaction: Transaction<Database>,
  projectId: string,
  sessionId: string,
  values: Omit<StoredCallProgress, 'version' | 'progress'> & { progress: object },
  readVersion: number | undefined,
): Promise<boolean> {
  const columns = {
    consumed_seq: values.consumedSeq,
    consumed_sent_at: values.consumedSentAt,
    consumed_received_at: values.consumedReceivedAt,
    progress: JSON.stringify(values.progress) as never,
    updated_at: sql<Date>`now()`,
  };
  if (readVersion === undefined) {
    const inserted = await transaction
      .insertInto('call_progress')
      .values({ project_id: projectId, session_id: sessionId, version: 1, ...columns })
      .onConflict((conflict) => conflict.columns(['project_id', 'session_id']).doNothing())
      .returning('version')
      .execute();
    return inserted.length === 1;
  }
  const updated = await transaction
    .updateTable('call_progress')
    .set({ ...columns, version: readVersion + 1 })
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('version', '=', readVersion)
    .returning('version')
    .execute();
  return updated.length === 1;
}

/**
 * Deletes the progress of every session (of one project, or of all), in the caller's
 * transaction: their next jobs compute them from all their items.
 */
export async function deleteCallProgress(database: Executor, projectId?: string): Promise<void> {
  let query = database.deleteFrom('call_progress');
  if (projectId !== undefined) query = query.where('project_id', '=', projectId);
  await query.execute();
}

/** A chunk of a session as processing sees it. */
export interface SessionChunk {
  seq: number;
  blobKey: string;
  callItemCount: number;
  sentAt: Date;
  receivedAt: Date;
  /** Its call items are in `call_items` already. */
  consumed: boolean;
}

/**
 * The session's chunks after `afterSeq`, in seq order, each with whether its call items were
 * consumed: an index range of `chunks` and one probe of `call_items` per chunk with call items.
 */
export async function findChunksAfter(
  database: Executor,
  projectId: string,
  sessionId: string,
  afterSeq: number,
): Promise<SessionChunk[]> {
  const rows = await database
    .selectFrom('chunks')
    .select(['seq', 'blob_key', 'call_item_count', 'sent_at', 'received_at'])
    .select(({ and, eb, exists, selectFrom }) =>
      and([
        eb('chunks.call_item_count', '>', 0),
        exists(
          selectFrom('call_items')
            .select(sql.lit(1).as('one'))
            .whereRef('call_items.project_id', '=', 'chunks.project_id')
            .whereRef('call_items.session_id', '=', 'chunks.session_id')
            .whereRef('call_items.seq', '=', 'chunks.seq'),
        ),
      ]).as('consumed'),
    )
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({
    seq: row.seq,
    blobKey: row.blob_key,
    callItemCount: row.call_item_count,
    sentAt: row.sent_at,
    receivedAt: row.received_at,
    consumed: row.consumed === true,
  }));
}

/** Every stored call item of the session, at its place (in no particular order). */
export async function findCallItems(
  database: Executor,
  projectId: string,
  sessionId: string,
): Promise<PlacedCallItem[]> {
  const rows = await database
    .selectFrom('call_items')
    .select(['seq', 'event_index', 'item'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .execute();
  return rows.map((row) => ({
    seq: row.seq,
    index: row.event_index,
    item: row.item as unknown as CallSample | CallEvent,
  }));
}

/** The stored samples of one peer connection of the session, in session order. */
export async function findCallSamples(
  database: Executor,
  projectId: string,
  sessionId: string,
  pc: string,
): Promise<CallSample[]> {
  const rows = await database
    .selectFrom('call_items')
    .select('item')
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('pc', '=', pc)
    .where('type', '=', 'call.sample')
    .orderBy('t')
    .orderBy('seq')
    .orderBy('event_index')
    .execute();
  return rows.map((row) => row.item as unknown as CallSample);
}

/** A series piece to append to a call: its connection series (`trackId` '') or a track's. */
export interface SeriesSegment {
  callId: string;
  trackId: string;
  firstSample: number;
  series: Series;
}

/** Appends series pieces (each after the samples already stored for its series). */
export async function insertSeriesSegments(
  transaction: Transaction<Database>,
  projectId: string,
  segments: readonly SeriesSegment[],
): Promise<void> {
  const rows = segments.map((segment) => ({
    project_id: projectId,
    call_id: segment.callId,
    track_id: segment.trackId,
    first_sample: segment.firstSample,
    sample_count: segment.series.t?.length ?? 0,
    series: JSON.stringify(segment.series) as never,
  }));
  for (const batch of insertBatches(rows, 500)) {
    await transaction.insertInto('call_series_segments').values(batch).execute();
  }
}

/** Deletes every appended piece of these calls' series. */
export async function deleteSeriesSegments(
  transaction: Transaction<Database>,
  projectId: string,
  callIds: readonly string[],
): Promise<void> {
  if (callIds.length === 0) return;
  await transaction
    .deleteFrom('call_series_segments')
    .where('project_id', '=', projectId)
    .where('call_id', 'in', callIds)
    .execute();
}

/** The appended pieces of a call's series, per track id ('' for the connection), in order. */
export async function findSeriesSegments(
  database: Executor,
  projectId: string,
  callId: string,
): Promise<Map<string, Series[]>> {
  const rows = await database
    .selectFrom('call_series_segments')
    .select(['track_id', 'series'])
    .where('project_id', '=', projectId)
    .where('call_id', '=', callId)
    .orderBy('track_id')
    .orderBy('first_sample')
    .execute();
  const pieces = new Map<string, Series[]>();
  for (const row of rows) {
    const list = pieces.get(row.track_id) ?? [];
    list.push(row.series as Series);
    pieces.set(row.track_id, list);
  }
  return pieces;
}

/**
 * Folds a call's appended pieces into the series of its rows (`calls.series`, each
 * `call_tracks.series`) and deletes them: done once a call is closed, so a finished call is
 * stored as if it had been computed at once.
 */
export async function foldSeriesSegments(
  transaction: Transaction<Database>,
  projectId: string,
  callId: string,
): Promise<void> {
  const pieces = await findSeriesSegments(transaction, projectId, callId);
  if (pieces.size === 0) return;
  const connection = pieces.get('');
  if (connection !== undefined) {
    const call = await transaction
      .selectFrom('calls')
      .select('series')
      .where('project_id', '=', projectId)
      .where('id', '=', callId)
      .executeTakeFirstOrThrow();
    await transaction
      .updateTable('calls')
      .set({ series: JSON.stringify(joinSeries([call.series as Series, ...connection])) as never })
      .where('project_id', '=', projectId)
      .where('id', '=', callId)
      .execute();
  }
  const trackIds = [...pieces.keys()].filter((trackId) => trackId !== '');
  if (trackIds.length > 0) {
    const tracks = await transaction
      .selectFrom('call_tracks')
      .select(['track_id', 'series'])
      .where('project_id', '=', projectId)
      .where('call_id', '=', callId)
      .where('track_id', 'in', trackIds)
      .execute();
    for (const track of tracks) {
      await transaction
        .updateTable('call_tracks')
        .set({
          series: JSON.stringify(
            joinSeries([track.series as Series, ...(pieces.get(track.track_id) ?? [])]),
          ) as never,
        })
        .where('project_id', '=', projectId)
        .where('call_id', '=', callId)
        .where('track_id', '=', track.track_id)
        .execute();
    }
  }
  await deleteSeriesSegments(transaction, projectId, [callId]);
}
