import type { ColumnType } from 'kysely';

/** int8 columns: both engines are set to return them as numbers (see createDatabase). */
type BigintColumn = ColumnType<number, number | undefined, number>;

/** What a project used on a UTC day (migration 2026-12-18-usage). */
export interface UsageDailyTable {
  project_id: string;
  day: ColumnType<Date, string, string>;
  organization_id: string;
  sessions: BigintColumn;
  chunks: BigintColumn;
  ingested_bytes: BigintColumn;
  /** Bytes added to (and, negative, removed from) the blob store that day. */
  stored_bytes: BigintColumn;
  calls: BigintColumn;
  call_seconds: BigintColumn;
  spans: BigintColumn;
  log_records: BigintColumn;
  ai_tokens: BigintColumn;
}

/** An organization's own monthly caps; null: none beyond the plan's. */
export interface UsageCapsTable {
  organization_id: string;
  sessions: ColumnType<number | null, number | null | undefined, number | null>;
  stored_bytes: ColumnType<number | null, number | null | undefined, number | null>;
  ai_tokens: ColumnType<number | null, number | null | undefined, number | null>;
  updated_by: string | null;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** A threshold of a monthly cap reached (once per organization, month, metric and percent). */
export interface UsageThresholdsTable {
  organization_id: string;
  month: ColumnType<Date, string, string>;
  metric: string;
  percent: number;
  used: BigintColumn;
  cap: BigintColumn;
  reached_at: ColumnType<Date, Date | undefined, never>;
}

/** A day's total of a metric sent to the billing provider (or skipped), once. */
export interface UsageReportsTable {
  organization_id: string;
  day: ColumnType<Date, string, string>;
  metric: string;
  quantity: BigintColumn;
  status: 'reported' | 'skipped';
  reason: string | null;
  reported_at: ColumnType<Date, Date | undefined, never>;
}
