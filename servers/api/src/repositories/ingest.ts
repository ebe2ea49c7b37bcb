import type { Chunk } from '@svc/protocol';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../database/schema.ts';
import type { NewSession } from '../database/tables/sessions.table.ts';
import type { ChunkSummary } from '../ingest/chunk-summary.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** How an indexed chunk is identified for duplicate detection: its content hash and its blob. */
export interface IndexedChunk {
  contentSha256: Uint8Array;
  blobKey: string;
}

/** The index row of `(project, session, seq)`, if that chunk was already received. */
export async function findIndexedChunk(
  database: Executor,
  place: { projectId: string; sessionId: string; seq: number },
): Promise<IndexedChunk | undefined> {
  const row = await database
    .selectFrom('chunks')
    .select(['content_sha256', 'blob_key'])
    .where('project_id', '=', place.projectId)
    .where('session_id', '=', place.sessionId)
    .where('seq', '=', place.seq)
    .executeTakeFirst();
  return row === undefined ? undefined : { contentSha256: row.content_sha256, blobKey: row.blob_key };
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

/** Rows per INSERT of signals: 10 columns each stays far below PostgreSQL's 65 535 parameters. */
const SIGNAL_BATCH = 1_000;

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

const USER_COLUMNS = ['user_id', 'user_email', 'user_name'] as const satisfies ReadonlyArray<
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

/** `array_position` over the severities, lowest first: 0 for null. */
function severityRank(column: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`coalesce(array_position(array['info', 'low', 'medium', 'high', 'critical']::text[], ${column}), 0)`;
}

/**
 * Indexes one chunk whose blob is durable, inside the caller's transaction: upserts the session
 * (merging this chunk into its aggregates, whatever order chunks arrive in), inserts the chunk row
 * and its signals. Throws a unique violation (`isUniqueViolation`) when `(project, session, seq)`
 * is already indexed; the caller's transaction then rolls back and nothing changes.
 *
 * Merge rules: `started_at` is the earliest and `last_event_at` the latest any chunk showed,
 * `duration_ms` their difference; counts and bytes add up; `level` is the highest severity;
 * `max_seq` the highest seq. Meta fields come from the first chunk (seq 0) whenever it is there;
 * a later chunk's meta only fills what is still empty. The user is the one of the last `identify`
 * event received, else `meta.user`.
 *
 * @example
 * ```ts
 * await database.transaction().execute((transaction) => recordChunk(transaction, record));
 * ```
 */
export async function recordChunk(transaction: Transaction<Database>, record: ChunkRecord): Promise<void> {
  const { chunk, summary } = record;
  const session = (column: string) => sql.ref(`sessions.${column}`);
  const excluded = (column: string) => sql.ref(`excluded.${column}`);
  const metaWins = chunk.seq === 0;
  const merged: Record<string, RawBuilder<unknown>> = {};
  for (const column of META_COLUMNS) {
    merged[column] = metaWins
      ? sql`coalesce(${excluded(column)}, ${session(column)})`
      : sql`coalesce(${session(column)}, ${excluded(column)})`;
  }
  // The user's fields move together: an identify replaces them, meta.user only fills an empty user.
  const userWins = summary.user?.source === 'identify';
  for (const column of USER_COLUMNS) {
    merged[column] = userWins
      ? sql`${excluded(column)}`
      : sql`case when ${session('user_id')} is null then ${excluded(column)} else ${session(column)} end`;
  }

  await transaction
    .insertInto('sessions')
    .values(sessionRowOf(record))
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'id']).doUpdateSet({
        ...merged,
        started_at: sql<Date>`least(${session('started_at')}, ${excluded('started_at')})`,
        last_event_at: sql<Date>`greatest(${session('last_event_at')}, ${excluded('last_event_at')})`,
        duration_ms: sql<number>`greatest(0, round(extract(epoch from (greatest(${session('last_event_at')}, ${excluded('last_event_at')}) - least(${session('started_at')}, ${excluded('started_at')}))) * 1000))::bigint`,
        error_count: sql<number>`${session('error_count')} + ${excluded('error_count')}`,
        level: sql<
          string | null
        >`case when ${severityRank(excluded('level'))} > ${severityRank(session('level'))} then ${excluded('level')} else ${session('level')} end`,
        chunk_count: sql<number>`${session('chunk_count')} + 1`,
        max_seq: sql<number>`greatest(${session('max_seq')}, ${excluded('max_seq')})`,
        stored_bytes: sql<number>`${session('stored_bytes')} + ${excluded('stored_bytes')}`,
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute();

  await transaction
    .insertInto('chunks')
    .values({
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
      first_event_at: summary.firstEventAt === undefined ? null : new Date(summary.firstEventAt),
      last_event_at: summary.lastEventAt === undefined ? null : new Date(summary.lastEventAt),
      sent_at: new Date(chunk.sentAt),
    })
    .execute();

  for (let start = 0; start < summary.signals.length; start += SIGNAL_BATCH) {
    await transaction
      .insertInto('session_signals')
      .values(
        summary.signals.slice(start, start + SIGNAL_BATCH).map((signal) => ({
          project_id: record.projectId,
          session_id: chunk.sessionId,
          seq: chunk.seq,
          event_index: signal.eventIndex,
          t: new Date(signal.t),
          kind: signal.kind,
          severity: signal.severity,
          name: signal.name,
          message: signal.message,
          details: JSON.stringify(signal.details),
        })),
      )
      .execute();
  }
}
