import type { CallEvent, CallSample } from '@svc/protocol';
import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import { insertBatches } from '../../platform/database/insert-batches.ts';
import { preparedStatement } from '../../platform/database/prepared-statement.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { PlacedCallItem } from './call-progress.ts';
import { joinSeries, type Series, seriesLength } from './series.ts';

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
  /** The `SessionProgress` as stored, JSON text (the caller parses it and checks its version). */
  progress: string;
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
    progress: JSON.stringify(values.progress),
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

/**
 * What one job appends to a call's series: for the connection (`''`) and each track with new
 * samples, `[trackId, firstSample, series]`, the series of the new samples from sample
 * `firstSample` of that series on.
 */
export type SeriesPieces = ReadonlyArray<readonly [trackId: string, firstSample: number, series: Series]>;

/** The row of a call's {@link SeriesPieces}: keyed by where they start in the connection series. */
export interface SeriesPiecesRow {
  callId: string;
  /** The call's samples before these (the connection piece's first sample): unique per call. */
  firstSample: number;
  /** The pieces as JSON text. */
  series: string;
}

/**
 * One job's pieces of a call as a row of `call_series_pieces`: one row whatever the number of
 * tracks (a row per track cost a live job ~0.25 ms each on PGlite), their JSON as text (nothing
 * queries inside it; jsonb would be parsed into numerics and printed back).
 */
export function seriesPiecesRow(callId: string, pieces: SeriesPieces): SeriesPiecesRow {
  const connection = pieces.find(([trackId]) => trackId === '');
  return { callId, firstSample: connection?.[1] ?? pieces[0]?.[1] ?? 0, series: JSON.stringify(pieces) };
}

/** Appends pieces of calls' series (each after the samples already stored for its series). */
export async function insertSeriesPieces(
  transaction: Transaction<Database>,
  projectId: string,
  rows: readonly SeriesPiecesRow[],
): Promise<void> {
  const values = rows.map((row) => ({
    project_id: projectId,
    call_id: row.callId,
    first_sample: row.firstSample,
    series: row.series,
  }));
  for (const batch of insertBatches(values, 500)) {
    await transaction.insertInto('call_series_pieces').values(batch).execute();
  }
}

/** Deletes every appended piece of these calls' series. */
export async function deleteSeriesPieces(
  transaction: Transaction<Database>,
  projectId: string,
  callIds: readonly string[],
): Promise<void> {
  if (callIds.length === 0) return;
  await transaction
    .deleteFrom('call_series_pieces')
    .where('project_id', '=', projectId)
    .where('call_id', 'in', callIds)
    .execute();
}

/** The appended pieces of a call's series, per track id ('' for the connection), in order. */
export async function findSeriesPieces(
  database: Executor,
  projectId: string,
  callId: string,
): Promise<Map<string, Series[]>> {
  const rows = await database
    .selectFrom('call_series_pieces')
    .select('series')
    .where('project_id', '=', projectId)
    .where('call_id', '=', callId)
    .execute();
  const byTrack = new Map<string, Array<[number, Series]>>();
  for (const row of rows) {
    for (const [trackId, firstSample, series] of JSON.parse(row.series) as SeriesPieces) {
      const list = byTrack.get(trackId) ?? [];
      list.push([firstSample, series]);
      byTrack.set(trackId, list);
    }
  }
  const pieces = new Map<string, Series[]>();
  for (const [trackId, list] of byTrack) {
    pieces.set(
      trackId,
      list.sort((a, b) => a[0] - b[0]).map(([, series]) => series),
    );
  }
  return pieces;
}

/**
 * Folds a call's appended pieces into the series of its rows (`calls.series`, each
 * `call_tracks.series` and its `sample_count`) and deletes them: done once a call is closed, so a
 * finished call is stored as if it had been computed at once.
 */
export async function foldSeriesPieces(
  transaction: Transaction<Database>,
  projectId: string,
  callId: string,
): Promise<void> {
  const pieces = await findSeriesPieces(transaction, projectId, callId);
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
      const series = joinSeries([track.series as Series, ...(pieces.get(track.track_id) ?? [])]);
      await transaction
        .updateTable('call_tracks')
        .set({ series: JSON.stringify(series) as never, sample_count: seriesLength(series) })
        .where('project_id', '=', projectId)
        .where('call_id', '=', callId)
        .where('track_id', '=', track.track_id)
        .execute();
    }
  }
  await deleteSeriesPieces(transaction, projectId, [callId]);
}

/** The session's facts a call copies (browser, OS, device, release, user, start, URL). */
export interface CallSessionFacts {
  browser_name: string | null;
  browser_version: string | null;
  os_name: string | null;
  os_version: string | null;
  device: string | null;
  release: string | null;
  environment: string | null;
  user_id: string | null;
  started_at: Date;
  url: string | null;
}

/** A stored finding row as a job reads it (to write only what changed). */
export interface StoredFinding {
  pc: string;
  kind: string;
  call_id: string | null;
  severity: string;
  t: string;
  track: string | null;
  evidence: Record<string, unknown>;
}

/** Columns of a `calls` row as processing writes it (`created_at`, `updated_at` apart). */
export const CALL_COLUMNS = [
  'project_id',
  'id',
  'session_id',
  'pc',
  'started_at',
  'last_item_at',
  'ended_at',
  'duration_ms',
  'state',
  'end_reason',
  'setup_ms',
  'connected',
  'failed_to_connect',
  'failure_reason',
  'relayed',
  'local_types',
  'remote_types',
  'protocol',
  'network_type',
  'browser_name',
  'browser_version',
  'os_name',
  'os_version',
  'device',
  'release',
  'environment',
  'end_user_id',
  'quality_score',
  'codec',
  'codecs',
  'sample_count',
  'track_count',
  'issue_kinds',
  'issue_count',
  'has_issue',
  'max_severity',
  'series',
] as const satisfies ReadonlyArray<keyof Database['calls']>;

/** Columns a recomputation never changes: a call's key and its id. */
export const KEPT_CALL_COLUMNS: ReadonlySet<string> = new Set(['project_id', 'id', 'session_id', 'pc']);

const ITEM_COLUMNS = [
  'project_id',
  'session_id',
  'seq',
  'event_index',
  'pc',
  't',
  'type',
  'name',
  'item',
] as const;

const columnList = (columns: readonly string[], table?: string) =>
  columns.map((column) => (table === undefined ? `"${column}"` : `${table}."${column}"`)).join(', ');

/**
 * The SQL text of a live calls write, as one statement (data-modifying CTEs, atomic by
 * themselves): a run that goes on from its session's progress with its calls still open writes
 * the progress over the version read, the new items, every call's row (the series in the row
 * kept), the rows of new tracks, the new series pieces (a row per call) and the findings when they
 * changed (those that no longer hold deleted). Every write is conditional on the progress write,
 * so nothing is written when another job wrote it first. `then` adds the job's own CTEs (the end
 * of the job, in processing), which may read `input` (`input.payload`, the write's JSON with the
 * caller's extra fields) and `saved` (a row when the progress was written). Two parameters: a
 * jsonb object of {@link LiveCallsWrite} but its progress, and the progress as JSON text.
 */
export function liveCallsStatement(name: string, then: string): string {
  return `${preparedStatement(name)}
  with input as (select $1::jsonb as payload),
  saved as (
    update call_progress as progress set
      version = progress.version + 1,
      consumed_seq = (input.payload->>'consumedSeq')::integer,
      consumed_sent_at = (input.payload->>'consumedSentAt')::timestamptz,
      consumed_received_at = (input.payload->>'consumedReceivedAt')::timestamptz,
      progress = $2::text,
      updated_at = now()
    from input
    where progress.project_id = input.payload->>'projectId'
      and progress.session_id = input.payload->>'sessionId'
      and progress.version = (input.payload->>'readVersion')::integer
    returning progress.version
  ),
  items as (
    insert into call_items (${columnList(ITEM_COLUMNS)})
    select ${columnList(ITEM_COLUMNS, 'row')}
    from input cross join lateral jsonb_populate_recordset(null::call_items, input.payload->'items') as row
    where exists (select 1 from saved)
    order by row.seq, row.event_index
    on conflict do nothing
  ),
  upserted as (
    insert into calls (${columnList(CALL_COLUMNS)})
    select ${columnList(CALL_COLUMNS, 'row')}
    from input cross join lateral jsonb_populate_recordset(null::calls, input.payload->'calls') as row
    where exists (select 1 from saved)
    order by row.pc
    on conflict (project_id, session_id, pc) do update set ${CALL_COLUMNS.filter(
      (column) => !KEPT_CALL_COLUMNS.has(column) && column !== 'series',
    )
      .map((column) => `"${column}" = excluded."${column}"`)
      .join(', ')}, updated_at = now()
    returning id, pc
  ),
  tracks as (
    insert into call_tracks (project_id, call_id, track_id, kind, dir, sample_count, series)
    select input.payload->>'projectId', upserted.id, track.track_id, track.kind, track.dir, 0,
      '{"t": [], "windowMs": []}'::jsonb
    from input
      cross join lateral jsonb_to_recordset(input.payload->'tracks')
        as track (pc text, track_id text, kind text, dir text)
      join upserted on upserted.pc = track.pc
    order by upserted.id, track.track_id
    on conflict (project_id, call_id, track_id) do nothing
  ),
  pieces as (
    insert into call_series_pieces (project_id, call_id, first_sample, series)
    select input.payload->>'projectId', upserted.id, piece.first_sample, piece.series
    from input
      cross join lateral jsonb_to_recordset(input.payload->'pieces')
        as piece (pc text, first_sample integer, series text)
      join upserted on upserted.pc = piece.pc
  ),
  findings as (
    insert into call_findings (project_id, session_id, pc, kind, call_id, severity, t, track, evidence)
    select input.payload->>'projectId', input.payload->>'sessionId', finding.pc, finding.kind, upserted.id,
      finding.severity, finding.t, finding.track, finding.evidence
    from input
      cross join lateral jsonb_to_recordset(
        case when jsonb_typeof(input.payload->'findings') = 'array'
          then input.payload->'findings' else '[]'::jsonb end
      ) as finding (pc text, kind text, severity text, t timestamptz, track text, evidence jsonb)
      left join upserted on upserted.pc = finding.pc
    order by finding.pc, finding.kind
    on conflict (project_id, session_id, pc, kind) do update set call_id = excluded.call_id,
      severity = excluded.severity, t = excluded.t, track = excluded.track, evidence = excluded.evidence,
      updated_at = now()
  ),
  stale as (
    delete from call_findings as stored using input
    where jsonb_typeof(input.payload->'findings') = 'array' and exists (select 1 from saved)
      and stored.project_id = input.payload->>'projectId' and stored.session_id = input.payload->>'sessionId'
      and not exists (
        select 1 from jsonb_to_recordset(
          case when jsonb_typeof(input.payload->'findings') = 'array'
          then input.payload->'findings' else '[]'::jsonb end
        ) as finding (pc text, kind text)
        where finding.pc = stored.pc and finding.kind = stored.kind)
  ),
  ${then}
  select count(*)::integer as saved from saved`;
}

/** What a live calls write writes: rows as JSON (jsonb columns as values, times as ISO). */
export interface LiveCallsWrite {
  projectId: string;
  sessionId: string;
  readVersion: number;
  consumedSeq: number;
  consumedSentAt: Date | null;
  consumedReceivedAt: Date | null;
  progress: object;
  items: ReadonlyArray<Record<(typeof ITEM_COLUMNS)[number], unknown>>;
  calls: ReadonlyArray<Record<(typeof CALL_COLUMNS)[number], unknown>>;
  /** Tracks first seen in this run (their rows hold no sample: the pieces have them). */
  tracks: ReadonlyArray<{ pc: string; track_id: string; kind: string; dir: string }>;
  /** Per call, the row of its new pieces ({@link seriesPiecesRow}). */
  pieces: ReadonlyArray<{ pc: string; first_sample: number; series: string }>;
  /** The session's findings when they changed (`pc` '' for session-wide ones), else null. */
  findings: ReadonlyArray<{
    pc: string;
    kind: string;
    severity: string;
    t: Date;
    track: string | null;
    evidence: object;
  }> | null;
}

/**
 * Runs a statement of {@link liveCallsStatement}: what the transaction of the general case writes
 * when only new items, rows, counts and pieces changed, in one round trip instead of eight.
 * `extra` joins the payload (for the statement's `then`). Returns false, having written nothing,
 * when another job wrote the progress since it was read.
 */
export async function writeLiveCalls(
  database: Kysely<Database>,
  statement: string,
  write: LiveCallsWrite,
  extra: Readonly<Record<string, unknown>> = {},
): Promise<boolean> {
  const { progress, ...rest } = write;
  const { rows } = await database.executeQuery<{ saved: number }>(
    CompiledQuery.raw(statement, [JSON.stringify({ ...rest, ...extra }), JSON.stringify(progress)]),
  );
  return rows[0]?.saved === 1;
}
