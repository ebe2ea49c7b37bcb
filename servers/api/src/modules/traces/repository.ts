import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { NewLogRecord, NewSpan } from '../../platform/database/tables/traces.table.ts';
import { meter } from '../usage/index.ts';
import type { DecodedLogRecord, DecodedSpan } from './otlp.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** Rows per insert statement (well under PostgreSQL's 65,535 parameters). */
const ROWS_PER_INSERT = 500;

const dayOf = (time: Date) => time.toISOString().slice(0, 10);

/**
 * Stores spans; a span already stored (same trace and span id: an exporter's retry) is kept as
 * it was.
 *
 * @example
 * ```ts
 * await insertSpans(database, project.id, decoded.items);
 * ```
 */
export async function insertSpans(executor: Executor, projectId: string, spans: readonly DecodedSpan[]) {
  const rows: NewSpan[] = spans.map((span) => ({
    project_id: projectId,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    service: span.service,
    start_time: span.startTime,
    end_time: span.endTime,
    duration_ms: span.durationMs,
    status_code: span.statusCode,
    status_message: span.statusMessage,
    attributes: JSON.stringify(span.attributes),
    resource_attributes: JSON.stringify(span.resourceAttributes),
    session_id: span.sessionId,
    day: dayOf(span.startTime),
  }));
  let inserted = 0;
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const [result] = await executor
      .insertInto('spans')
      .values(rows.slice(start, start + ROWS_PER_INSERT))
      .onConflict((conflict) => conflict.columns(['project_id', 'trace_id', 'span_id']).doNothing())
      .execute();
    inserted += Number(result?.numInsertedOrUpdatedRows ?? 0);
  }
  // Spans sent again (the same ids) are neither stored nor counted twice.
  await meter(executor, projectId, { spans: inserted });
}

/**
 * Stores log records.
 *
 * @example
 * ```ts
 * await insertLogRecords(database, project.id, decoded.items);
 * ```
 */
export async function insertLogRecords(
  executor: Executor,
  projectId: string,
  records: readonly DecodedLogRecord[],
) {
  const rows: NewLogRecord[] = records.map((record) => ({
    project_id: projectId,
    time: record.time,
    trace_id: record.traceId,
    span_id: record.spanId,
    severity_number: record.severityNumber,
    severity_text: record.severityText,
    body: record.body,
    attributes: JSON.stringify(record.attributes),
    service: record.service,
    session_id: record.sessionId,
    day: dayOf(record.time),
  }));
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await executor
      .insertInto('log_records')
      .values(rows.slice(start, start + ROWS_PER_INSERT))
      .execute();
  }
  await meter(executor, projectId, { log_records: rows.length });
}

/** Whether the project has the session. */
export async function sessionExists(executor: Executor, projectId: string, sessionId: string) {
  const row = await executor
    .selectFrom('sessions')
    .select('id')
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The most traces a session's reading returns (the earliest). */
const MAX_SESSION_TRACES = 200;
/** The most spans and log records read for them. */
const MAX_ROWS = 10_000;

/**
 * The spans and log records of a session's traces: the traces its requests carried (their trace
 * ids, `trace` signals written at ingest) and every trace with a span carrying the session's id
 * (`session.id`), all of their spans (of every service), and the log records of those traces.
 */
export async function readSessionTraces(executor: Executor, projectId: string, sessionId: string) {
  const linked = executor
    .selectFrom('session_signals')
    .select(['name as trace_id', 't as at'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('kind', '=', 'trace');
  const attributed = executor
    .selectFrom('spans')
    .select(['trace_id', 'start_time as at'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId);
  const traceIds = (
    await executor
      .selectFrom(linked.unionAll(attributed).as('link'))
      .select('link.trace_id')
      .groupBy('link.trace_id')
      .orderBy((expression) => expression.fn.min('link.at'))
      .orderBy('link.trace_id')
      .limit(MAX_SESSION_TRACES)
      .execute()
  ).map((row) => row.trace_id);
  if (traceIds.length === 0) return { spans: [], logs: [] };
  const spans = await executor
    .selectFrom('spans')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('trace_id', 'in', traceIds)
    .orderBy('start_time')
    .orderBy('span_id')
    .limit(MAX_ROWS)
    .execute();
  const logs = await executor
    .selectFrom('log_records')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('trace_id', 'in', traceIds)
    .orderBy('time')
    .limit(MAX_ROWS)
    .execute();
  return { spans, logs };
}

/** Rows one statement of the retention sweep deletes at most (of each table). */
export const RETENTION_BATCH_ROWS = 5_000;

/**
 * Deletes up to `batchRows` of the project's spans and as many log records of days before
 * `today - retentionDays` (UTC), found by the `(project_id, day)` indexes; returns how many rows
 * went. A short statement holds its locks briefly: the sweep calls it again while a table had more.
 *
 * @example
 * ```ts
 * await deleteExpiredTelemetry(database, project.id, 14, new Date());
 * ```
 */
export async function deleteExpiredTelemetry(
  executor: Executor,
  projectId: string,
  retentionDays: number,
  now: Date,
  batchRows = RETENTION_BATCH_ROWS,
): Promise<{ spans: number; logRecords: number }> {
  const cutoff = sql<Date>`${dayOf(new Date(now.getTime() - retentionDays * 86_400_000))}::date`;
  // `ctid` (the row's place) picks the batch: `log_records` has no key, and both engines have it.
  const deleteBatch = (table: 'spans' | 'log_records') =>
    sql`
    delete from ${sql.table(table)} where ctid in (
      select ctid from ${sql.table(table)}
      where project_id = ${projectId} and day < ${cutoff}
      limit ${batchRows})`.execute(executor);
  const spans = await deleteBatch('spans');
  const logRecords = await deleteBatch('log_records');
  return { spans: Number(spans.numAffectedRows ?? 0), logRecords: Number(logRecords.numAffectedRows ?? 0) };
}
