import type { ColumnType, Insertable, Selectable } from 'kysely';

/** A span sent over OTLP (modules/traces). JSON objects are stored as text. */
export interface SpansTable {
  project_id: string;
  /** 32 lowercase hex digits. */
  trace_id: string;
  /** 16 lowercase hex digits. */
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  /** The resource's `service.name`. */
  service: string | null;
  start_time: Date;
  end_time: Date;
  duration_ms: number;
  status_code: number;
  status_message: string | null;
  /** JSON text of the span's attributes. */
  attributes: string;
  /** JSON text of the resource's attributes. */
  resource_attributes: string;
  /** The `session.id` attribute of the span or its resource. */
  session_id: string | null;
  /** The UTC day of the start (written YYYY-MM-DD, read as a Date at UTC
   * midnight), what retention deletes by. */
  day: ColumnType<Date, string, string>;
}

/** A log record sent over OTLP (modules/traces). */
export interface LogRecordsTable {
  project_id: string;
  time: Date;
  trace_id: string | null;
  span_id: string | null;
  severity_number: number;
  severity_text: string | null;
  body: string | null;
  /** JSON text of the record's attributes. */
  attributes: string;
  service: string | null;
  session_id: string | null;
  /** The UTC day of `time` (as `spans.day`). */
  day: ColumnType<Date, string, string>;
}

export type Span = Selectable<SpansTable>;
export type NewSpan = Insertable<SpansTable>;
export type NewLogRecord = Insertable<LogRecordsTable>;
