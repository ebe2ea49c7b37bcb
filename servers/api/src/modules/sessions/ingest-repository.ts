import type { Chunk } from '@svc/protocol';
import { CompiledQuery, type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { insertBatches } from '../../platform/database/insert-batches.ts';
import { preparedStatement } from '../../platform/database/prepared-statement.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { NewSession } from '../../platform/database/tables/sessions.table.ts';
import { meterStatement } from '../usage/index.ts';
import type { ChunkSummary } from './chunk-summary.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** How an indexed chunk is identified for duplicate detection: its content hash and its blob. */
export interface IndexedChunk {
  contentSha256: Uint8Array;
  blobKey: string;
}

/** Where a chunk goes in the index. */
export interface ChunkPlace {
  projectId: string;
  sessionId: string;
  seq: number;
}

/** The index rows of these places that exist, keyed by {@link placeKey}. */
export async function findIndexedChunks(
  database: Executor,
  places: readonly ChunkPlace[],
): Promise<Map<string, IndexedChunk>> {
  const found = new Map<string, IndexedChunk>();
  if (places.length === 0) return found;
  const rows = await database
    .selectFrom('chunks')
    .select(['project_id', 'session_id', 'seq', 'content_sha256', 'blob_key'])
    .where((where) =>
      where.or(
        places.map((place) =>
          where.and({ project_id: place.projectId, session_id: place.sessionId, seq: place.seq }),
        ),
      ),
    )
    .execute();
  for (const row of rows) {
    found.set(placeKey({ projectId: row.project_id, sessionId: row.session_id, seq: row.seq }), {
      contentSha256: row.content_sha256,
      blobKey: row.blob_key,
    });
  }
  return found;
}

/** A string that identifies a {@link ChunkPlace}. */
export function placeKey(place: ChunkPlace): string {
  return `${place.projectId}/${place.sessionId}/${place.seq}`;
}

/** Everything indexed for one stored chunk. */
export interface ChunkRecord {
  projectId: string;
  chunk: Chunk;
  summary: ChunkSummary;
  /** The blob that holds the sealed chunk (already durable). */
  blobKey: string;
  contentSha256: Uint8Array;
  encoding: string;
  receivedBytes: number;
  inflatedBytes: number;
  storedBytes: number;
}

/** Session columns that come from `meta` (and the chunk's `visitId`). */
const META_COLUMNS = [
  'visit_id',
  'url',
  'referrer',
  'user_agent',
  'browser_name',
  'browser_version',
  'os_name',
  'os_version',
  'device',
  'viewport_width',
  'viewport_height',
  'release',
  'environment',
  'recording_mode',
  'sdk_name',
  'sdk_version',
] as const satisfies ReadonlyArray<keyof NewSession>;

const USER_COLUMNS = ['user_id', 'user_email', 'user_name', 'user_seq'] as const satisfies ReadonlyArray<
  keyof NewSession
>;

/** The `sessions` row as if this chunk were the session's only one. */
function sessionRowOf(record: ChunkRecord): NewSession {
  const { chunk, summary } = record;
  const meta = chunk.meta;
  const user = summary.user?.user;
  return {
    project_id: record.projectId,
    id: chunk.sessionId,
    visit_id: chunk.visitId ?? null,
    started_at: new Date(summary.sessionStart),
    last_event_at: new Date(summary.sessionEnd),
    duration_ms: summary.sessionEnd - summary.sessionStart,
    url: meta?.url ?? null,
    referrer: meta?.referrer ?? null,
    user_agent: meta?.userAgent ?? null,
    browser_name: meta?.browser.name ?? null,
    browser_version: meta?.browser.version ?? null,
    os_name: meta?.os.name ?? null,
    os_version: meta?.os.version ?? null,
    device: meta?.device ?? null,
    viewport_width: meta?.viewport.w ?? null,
    viewport_height: meta?.viewport.h ?? null,
    release: meta?.release ?? null,
    environment: meta?.environment ?? null,
    user_id: user?.id ?? null,
    user_email: user === undefined ? null : (user.email ?? null),
    user_name: user === undefined ? null : (user.name ?? null),
    user_seq: summary.user?.source === 'identify' ? chunk.seq : null,
    recording_mode: meta?.recording.mode ?? null,
    sdk_name: meta?.sdk.name ?? null,
    sdk_version: meta?.sdk.version ?? null,
    error_count: summary.errorCount,
    level: summary.level ?? null,
    chunk_count: 1,
    max_seq: chunk.seq,
    stored_bytes: record.storedBytes,
  };
}

/**
 * Queues processing for the sessions of the new chunks (`fresh`), in the statement or
 * transaction that indexes them: a chunk is never indexed without its job.
 * Design: servers/api/docs/ingest.md#queueing-processing (which chunks queue their session).
 */
const PROCESSING_JOBS_UPSERT = sql`
  insert into processing_jobs (project_id, session_id, due_at)
  select distinct project_id, session_id, now() from fresh
  where call_item_count > 0 or error_count > 0
    or (custom_count > 0 and exists (
      select 1 from notification_rules as rules
      where rules.project_id = fresh.project_id and rules.enabled and rules.source ->> 'type' = 'custom'))
    or (refreshes_calls and (
    exists (select 1 from calls where calls.project_id = fresh.project_id and calls.session_id = fresh.session_id)
    or exists (select 1 from processing_jobs as queued
               where queued.project_id = fresh.project_id and queued.session_id = fresh.session_id)))
  order by project_id, session_id
  on conflict (project_id, session_id) do update
    set generation = processing_jobs.generation + 1, due_at = least(processing_jobs.due_at, excluded.due_at)`;

/**
 * Queues the facts job (insights: page views, clicks, vitals) for the sessions of the new chunks
 * that carry more than call items, in the statement or transaction that indexes them, as
 * {@link PROCESSING_JOBS_UPSERT} does for processing.
 */
const INSIGHT_JOBS_UPSERT = sql`
  insert into insight_jobs (project_id, session_id, due_at)
  select distinct project_id, session_id, now() from fresh
  where event_count > call_item_count
  order by project_id, session_id
  on conflict (project_id, session_id) do update
    set generation = insight_jobs.generation + 1, due_at = least(insight_jobs.due_at, excluded.due_at)`;

/**
 * Queues the archiving of assets (modules/assets) for the sessions of the new chunks that carry
 * an rrweb full snapshot, when their project lists allowed origins (assets are fetched only from
 * those), in the statement or transaction that indexes them, as {@link INSIGHT_JOBS_UPSERT}.
 */
const ASSET_JOBS_UPSERT = sql`
  insert into asset_jobs (project_id, session_id, due_at)
  select distinct project_id, session_id, now() from fresh
  where full_snapshot_count > 0 and exists (
    select 1 from projects where projects.id = fresh.project_id
      and jsonb_typeof(projects.settings -> 'allowedOrigins') = 'array'
      and jsonb_array_length(projects.settings -> 'allowedOrigins') > 0)
  order by project_id, session_id
  on conflict (project_id, session_id) do update
    set generation = asset_jobs.generation + 1, due_at = least(asset_jobs.due_at, excluded.due_at)`;

/** `array_position` over the severities, lowest first: 0 for null. */
function severityRank(column: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`coalesce(array_position(array['info', 'low', 'medium', 'high', 'critical']::text[], ${column}), 0)`;
}

/**
 * Indexes a batch of chunks whose blobs are durable, inside the caller's transaction, in a fixed
 * number of statements whatever the batch size (group commit: see `chunk-index-writer.ts`).
 *
 * Design: servers/api/docs/ingest.md (the steps, and the merge rules of a chunk into its session).
 *
 * @returns the blob keys of the records that were new (and are now indexed).
 *
 * @example
 * ```ts
 * const stored = await database.transaction().execute((transaction) => recordChunks(transaction, records));
 * ```
 */
export async function recordChunks(
  transaction: Transaction<Database>,
  records: readonly ChunkRecord[],
  options: { metered?: boolean } = {},
): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  // Rows are written in key order, so concurrent batches on PostgreSQL lock them in the same order.
  const byKey = (a: ChunkRecord, b: ChunkRecord) =>
    compare(a.projectId, b.projectId) ||
    compare(a.chunk.sessionId, b.chunk.sessionId) ||
    a.chunk.seq - b.chunk.seq;

  const inserted = await transaction
    .insertInto('chunks')
    .values([...records].sort(byKey).map(chunkRowOf))
    .onConflict((conflict) => conflict.columns(['project_id', 'session_id', 'seq']).doNothing())
    .returning('blob_key')
    .execute();
  const stored = new Set(inserted.map((row) => row.blob_key));
  const fresh = records.filter((record) => stored.has(record.blobKey));
  /** Sessions created by this batch, per project. */
  const started = new Map<string, number>();

  for (const round of roundsOf(fresh)) {
    // An identify replaces the user, meta.user only fills an empty one: one statement for each.
    const identified = round.filter((record) => record.summary.user?.source === 'identify');
    const others = round.filter((record) => record.summary.user?.source !== 'identify');
    for (const [group, userWins] of [
      [identified, true],
      [others, false],
    ] as const) {
      if (group.length > 0) {
        for (const projectId of await upsertSessions(transaction, group.sort(byKey), userWins))
          started.set(projectId, (started.get(projectId) ?? 0) + 1);
      }
    }
  }
  if (options.metered ?? true) await meterChunks(transaction, fresh, started);

  const signals = fresh.sort(byKey).flatMap((record) =>
    record.summary.signals.map((signal) => ({
      project_id: record.projectId,
      session_id: record.chunk.sessionId,
      seq: record.chunk.seq,
      ...signalRowOf(signal),
      details: JSON.stringify(signal.details),
    })),
  );
  for (const batch of insertBatches(signals, 1_000)) {
    await transaction.insertInto('session_signals').values(batch).execute();
  }

  const withCalls = fresh.filter(
    (record) =>
      record.summary.callItemCount > 0 ||
      record.summary.errorCount > 0 ||
      record.summary.customCount > 0 ||
      record.summary.refreshesCalls,
  );
  const withPages = fresh.filter((record) => record.summary.eventCount > record.summary.callItemCount);
  if (withPages.length > 0) {
    const input = withPages.map((record) => ({
      project_id: record.projectId,
      session_id: record.chunk.sessionId,
      event_count: record.summary.eventCount,
      call_item_count: record.summary.callItemCount,
    }));
    await sql`
      with fresh as (
        select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
          as fresh (project_id text, session_id text, event_count integer, call_item_count integer)
      )
      ${INSIGHT_JOBS_UPSERT}`.execute(transaction);
  }
  const withSnapshots = fresh.filter((record) => record.summary.fullSnapshotCount > 0);
  if (withSnapshots.length > 0) {
    const input = withSnapshots.map((record) => ({
      project_id: record.projectId,
      session_id: record.chunk.sessionId,
      full_snapshot_count: record.summary.fullSnapshotCount,
    }));
    await sql`
      with fresh as (
        select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
          as fresh (project_id text, session_id text, full_snapshot_count integer)
      )
      ${ASSET_JOBS_UPSERT}`.execute(transaction);
  }
  if (withCalls.length > 0) {
    const input = withCalls.map((record) => ({
      project_id: record.projectId,
      session_id: record.chunk.sessionId,
      call_item_count: record.summary.callItemCount,
      error_count: record.summary.errorCount,
      custom_count: record.summary.customCount,
      refreshes_calls: record.summary.refreshesCalls,
    }));
    await sql`
      with fresh as (
        select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
          as fresh (project_id text, session_id text, call_item_count integer, error_count integer,
            custom_count integer, refreshes_calls boolean)
      )
      ${PROCESSING_JOBS_UPSERT}`.execute(transaction);
  }
  return stored;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Splits records into rounds in which each session appears at most once, keeping batch order. */
function roundsOf(records: readonly ChunkRecord[]): ChunkRecord[][] {
  const rounds: ChunkRecord[][] = [];
  const seen = new Map<string, number>();
  for (const record of records) {
    const session = `${record.projectId}/${record.chunk.sessionId}`;
    const round = seen.get(session) ?? 0;
    seen.set(session, round + 1);
    const members = rounds[round] ?? [];
    members.push(record);
    rounds[round] = members;
  }
  return rounds;
}

/** A signal's `session_signals` columns, but its place and `details`. */
function signalRowOf(signal: ChunkSummary['signals'][number]) {
  return {
    event_index: signal.eventIndex,
    t: new Date(signal.t),
    kind: signal.kind,
    severity: signal.severity ?? null,
    name: signal.name,
    message: signal.message,
  };
}

function chunkRowOf(record: ChunkRecord) {
  const { chunk, summary } = record;
  return {
    project_id: record.projectId,
    session_id: chunk.sessionId,
    seq: chunk.seq,
    blob_key: record.blobKey,
    content_sha256: record.contentSha256,
    encoding: record.encoding,
    received_bytes: record.receivedBytes,
    inflated_bytes: record.inflatedBytes,
    stored_bytes: record.storedBytes,
    event_count: summary.eventCount,
    call_item_count: summary.callItemCount,
    first_event_at: summary.firstEventAt === undefined ? null : new Date(summary.firstEventAt),
    last_event_at: summary.lastEventAt === undefined ? null : new Date(summary.lastEventAt),
    sent_at: new Date(chunk.sentAt),
  };
}

/**
 * The `on conflict (project_id, id) do update set` of a session upsert whose rows each carry one
 * chunk (`excluded` is that chunk's session row): the merge rules of servers/api/docs/ingest.md.
 * `userWins`: the chunk's user comes from an `identify` event and replaces the session's.
 */
function sessionMerge(userWins: boolean): Record<string, RawBuilder<unknown>> {
  const session = (column: string) => sql.ref(`sessions.${column}`);
  const excluded = (column: string) => sql.ref(`excluded.${column}`);
  const merged: Record<string, RawBuilder<unknown>> = {};
  // A row carries one chunk, so `excluded.max_seq` is that chunk's seq: seq 0's meta wins.
  for (const column of META_COLUMNS) {
    merged[column] =
      sql`case when ${excluded('max_seq')} = 0 then coalesce(${excluded(column)}, ${session(column)}) else coalesce(${session(column)}, ${excluded(column)}) end`;
  }
  // The user's fields move together. An identify replaces the user unless one from a later seq
  // set it already; `meta.user` only fills an empty one.
  for (const column of USER_COLUMNS) {
    merged[column] = userWins
      ? sql`case when ${session('user_seq')} is null or ${excluded('user_seq')} >= ${session('user_seq')} then ${excluded(column)} else ${session(column)} end`
      : sql`case when ${session('user_id')} is null then ${excluded(column)} else ${session(column)} end`;
  }
  return {
    ...merged,
    started_at: sql<Date>`least(${session('started_at')}, ${excluded('started_at')})`,
    last_event_at: sql<Date>`greatest(${session('last_event_at')}, ${excluded('last_event_at')})`,
    duration_ms: sql<number>`greatest(0, round(extract(epoch from (greatest(${session('last_event_at')}, ${excluded('last_event_at')}) - least(${session('started_at')}, ${excluded('started_at')}))) * 1000))::bigint`,
    error_count: sql<number>`${session('error_count')} + ${excluded('error_count')}`,
    level: sql<
      string | null
    >`case when ${severityRank(excluded('level'))} > ${severityRank(session('level'))} then ${excluded('level')} else ${session('level')} end`,
    chunk_count: sql<number>`${session('chunk_count')} + ${excluded('chunk_count')}`,
    max_seq: sql<number>`greatest(${session('max_seq')}, ${excluded('max_seq')})`,
    stored_bytes: sql<number>`${session('stored_bytes')} + ${excluded('stored_bytes')}`,
    updated_at: sql<Date>`now()`,
  };
}

/**
 * Merges one chunk per session (distinct sessions) into the `sessions` rows.
 *
 * @returns the project of each session the batch created (its row's first chunk)
 */
async function upsertSessions(
  transaction: Transaction<Database>,
  records: readonly ChunkRecord[],
  userWins: boolean,
): Promise<string[]> {
  const rows = await transaction
    .insertInto('sessions')
    .values(records.map(sessionRowOf))
    .onConflict((conflict) => conflict.columns(['project_id', 'id']).doUpdateSet(sessionMerge(userWins)))
    .returning(['project_id', 'chunk_count'])
    .execute();
  return rows.filter((row) => Number(row.chunk_count) === 1).map((row) => row.project_id);
}

/** What ingest meters: sessions started, chunks, their bytes as sent and as stored. */
const INGEST_METRICS = ['sessions', 'chunks', 'ingested_bytes', 'stored_bytes'] as const;

/** Adds the new chunks (and the sessions they started) to their projects' usage of the day. */
async function meterChunks(
  transaction: Transaction<Database>,
  fresh: readonly ChunkRecord[],
  started: ReadonlyMap<string, number>,
): Promise<void> {
  if (fresh.length === 0) return;
  const totals = new Map<string, [number, number, number, number]>();
  for (const record of fresh) {
    const row = totals.get(record.projectId) ?? [started.get(record.projectId) ?? 0, 0, 0, 0];
    row[1] += 1;
    row[2] += record.receivedBytes;
    row[3] += record.storedBytes;
    totals.set(record.projectId, row);
  }
  const input = [...totals].map(([projectId, [sessions, chunks, ingested, stored]]) => ({
    project_id: projectId,
    sessions,
    chunks,
    ingested_bytes: ingested,
    stored_bytes: stored,
  }));
  await sql`${meterStatement(
    sql`select project_id, sessions, chunks, ingested_bytes, stored_bytes
        from jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
          as input (project_id text, sessions bigint, chunks bigint, ingested_bytes bigint, stored_bytes bigint)`,
    INGEST_METRICS,
  )}`.execute(transaction);
}

/** Columns of a `sessions` row as {@link sessionRowOf} writes it, in a fixed order. */
const SESSION_COLUMNS = [
  'project_id',
  'id',
  'started_at',
  'last_event_at',
  'duration_ms',
  ...META_COLUMNS,
  ...USER_COLUMNS,
  'error_count',
  'level',
  'chunk_count',
  'max_seq',
  'stored_bytes',
] as const satisfies ReadonlyArray<keyof NewSession>;

/** Columns of a `chunks` row as {@link chunkRowOf} writes it (`received_at` is the default). */
const CHUNK_COLUMNS = [
  'project_id',
  'session_id',
  'seq',
  'blob_key',
  'content_sha256',
  'encoding',
  'received_bytes',
  'inflated_bytes',
  'stored_bytes',
  'event_count',
  'call_item_count',
  'first_event_at',
  'last_event_at',
  'sent_at',
] as const;

/** Columns of a `session_signals` row, as the signals of one chunk carry them. */
const SIGNAL_COLUMNS = ['event_index', 't', 'kind', 'severity', 'name', 'message', 'details'] as const;

const identifiers = (columns: readonly string[], table?: string) =>
  sql.join(columns.map((column) => (table === undefined ? sql.id(column) : sql.id(table, column))));

/**
 * {@link recordChunks} as one statement, for a batch in which every session appears once (what
 * SDKs send: one request in flight per session). The batch is its one parameter, a `jsonb` array
 * of {@link distinctSessionsInput} rows. Data-modifying CTEs run on one snapshot, so a session can
 * be written only once per statement: batches with a session twice go through
 * {@link recordChunks}.
 */
function distinctSessionsStatement(
  batch: RawBuilder<unknown>,
  metered: boolean,
): RawBuilder<{ blob_key: string }> {
  const sessionsOf = (identified: boolean) => sql`
    insert into sessions (${identifiers(SESSION_COLUMNS)})
    select ${identifiers(SESSION_COLUMNS, 'row')}
    from fresh cross join lateral jsonb_populate_record(null::sessions, fresh.session) as row
    where fresh.identified = ${sql.lit(identified)}
    order by row.project_id, row.id
    on conflict (project_id, id) do update set ${sql.join(
      Object.entries(sessionMerge(identified)).map(([column, value]) => sql`${sql.id(column)} = ${value}`),
    )}
    returning project_id, chunk_count`;
  return sql<{ blob_key: string }>`
    with input as (
      select * from jsonb_to_recordset(${batch}::jsonb) as input (
        project_id text, session_id text, seq integer, blob_key text, content_sha256 text,
        encoding text, received_bytes integer, inflated_bytes integer, stored_bytes integer,
        event_count integer, call_item_count integer, error_count integer, custom_count integer,
        refreshes_calls boolean, full_snapshot_count integer, first_event_at timestamptz,
        last_event_at timestamptz, sent_at timestamptz, identified boolean, session jsonb, signals jsonb
      )
    ),
    inserted as (
      insert into chunks (${identifiers(CHUNK_COLUMNS)})
      select ${sql.join(
        CHUNK_COLUMNS.map((column) =>
          column === 'content_sha256' ? sql`decode(content_sha256, 'hex')` : sql.id(column),
        ),
      )}
      from input
      order by project_id, session_id, seq
      on conflict (project_id, session_id, seq) do nothing
      returning blob_key
    ),
    fresh as (select * from input where blob_key in (select blob_key from inserted)),
    identified_sessions as (${sessionsOf(true)}),
    other_sessions as (${sessionsOf(false)}),
    processing_jobs as (${PROCESSING_JOBS_UPSERT}),
    insight_jobs as (${INSIGHT_JOBS_UPSERT}),
    asset_jobs as (${ASSET_JOBS_UPSERT}),
    ${metered ? sql`usage as (${usageStatement()}),` : sql``}
    signals as (
      insert into session_signals (project_id, session_id, seq, ${identifiers(SIGNAL_COLUMNS)})
      select fresh.project_id, fresh.session_id, fresh.seq, ${identifiers(SIGNAL_COLUMNS, 'signal')}
      from fresh cross join lateral jsonb_to_recordset(fresh.signals) as signal (
        event_index integer, t timestamptz, kind text, severity text, name text, message text,
        details jsonb
      )
      order by fresh.project_id, fresh.session_id, fresh.seq, signal.event_index
    )
    select blob_key from inserted
  `;
}

/**
 * The `usage` CTE of {@link distinctSessionsStatement}: sessions created (their row's first
 * chunk), chunks and bytes of the batch's new chunks, per project.
 */
function usageStatement(): RawBuilder<unknown> {
  return meterStatement(
    sql`
        select fresh.project_id, coalesce(max(started.sessions), 0), count(*), sum(fresh.received_bytes),
          sum(fresh.stored_bytes)
        from fresh left join (
          select project_id, count(*) as sessions
          from (select project_id, chunk_count from identified_sessions
                union all select project_id, chunk_count from other_sessions) as upserted
          where chunk_count = 1 group by project_id
        ) as started on started.project_id = fresh.project_id
        group by fresh.project_id`,
    INGEST_METRICS,
  );
}

/** One row of the batch parameter of {@link distinctSessionsStatement}. */
function distinctSessionsInput(record: ChunkRecord) {
  return {
    ...chunkRowOf(record),
    content_sha256: Buffer.from(record.contentSha256).toString('hex'),
    identified: record.summary.user?.source === 'identify',
    error_count: record.summary.errorCount,
    custom_count: record.summary.customCount,
    refreshes_calls: record.summary.refreshesCalls,
    full_snapshot_count: record.summary.fullSnapshotCount,
    session: sessionRowOf(record),
    signals: record.summary.signals.map((signal) => ({ ...signalRowOf(signal), details: signal.details })),
  };
}

/**
 * The statement's SQL per database, metered and not: it is the same for every batch, so it is
 * compiled once.
 */
const distinctSessionsSql = {
  metered: new WeakMap<Kysely<Database>, string>(),
  unmetered: new WeakMap<Kysely<Database>, string>(),
};

/**
 * Indexes a batch in which every session appears once, in one statement: atomic by itself, so
 * one round trip instead of the five or more of a transaction.
 */
async function recordDistinctSessions(
  database: Kysely<Database>,
  records: readonly ChunkRecord[],
  metered: boolean,
): Promise<Set<string>> {
  const cache = metered ? distinctSessionsSql.metered : distinctSessionsSql.unmetered;
  let text = cache.get(database);
  if (text === undefined) {
    const compiled = distinctSessionsStatement(sql.val('[]'), metered).compile(database);
    if (compiled.parameters.length !== 1) throw new Error('The batch statement must have one parameter');
    text = `${preparedStatement(metered ? 'svc_index_chunks' : 'svc_index_chunks_unmetered')}\n${compiled.sql}`;
    cache.set(database, text);
  }
  const { rows } = await database.executeQuery<{ blob_key: string }>(
    CompiledQuery.raw(text, [JSON.stringify(records.map(distinctSessionsInput))]),
  );
  return new Set(rows.map((row) => row.blob_key));
}

/**
 * Indexes a batch of chunks whose blobs are durable, atomically: in one statement when every
 * session appears once in the batch (the usual case), else in a transaction of
 * {@link recordChunks}. Same result either way. The batch is metered (usage: sessions started,
 * chunks, bytes) in the same statement or transaction; `metered: false` only for the benchmark's
 * baseline.
 *
 * @returns the blob keys of the records that were new (and are now indexed).
 *
 * @example
 * ```ts
 * const stored = await indexChunks(database, records);
 * ```
 */
export async function indexChunks(
  database: Kysely<Database>,
  records: readonly ChunkRecord[],
  options: { metered?: boolean } = {},
): Promise<Set<string>> {
  const metered = options.metered ?? true;
  const sessions = new Set(records.map((record) => `${record.projectId}/${record.chunk.sessionId}`));
  if (sessions.size === records.length) return recordDistinctSessions(database, records, metered);
  return database.transaction().execute((transaction) => recordChunks(transaction, records, { metered }));
}
