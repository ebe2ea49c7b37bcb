import type { ColumnType, Insertable, JSONColumnType, Selectable } from 'kysely';

/**
 * Per session, what incremental call processing computed from the items consumed so far
 * (`progress`: a `SessionProgress` of src/calls/call-progress.ts) and the watermark of what it
 * consumed. No row: the next job computes the session from all its items.
 */
export interface CallProgressTable {
  project_id: string;
  session_id: string;
  /** Bumped by every write; a job writes only over the version it read. */
  version: number;
  /** Every chunk with `seq <= consumed_seq` exists and its call items are consumed. */
  consumed_seq: number;
  /** The latest `sent_at` and `received_at` of those chunks. */
  consumed_sent_at: Date | null;
  consumed_received_at: Date | null;
  /** JSON text (migration 2026-11-29-call-job-cost): nothing queries inside it. */
  progress: string;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/**
 * A piece of a call's series written after the series in its row: the connection series
 * (`track_id` '') or one track's, from sample `first_sample` on.
 */
export interface CallSeriesSegmentsTable {
  project_id: string;
  call_id: string;
  track_id: string;
  first_sample: number;
  sample_count: number;
  series: JSONColumnType<Record<string, unknown[]>>;
}

export type CallProgressRow = Selectable<CallProgressTable>;
export type NewCallProgressRow = Insertable<CallProgressTable>;
export type CallSeriesSegment = Selectable<CallSeriesSegmentsTable>;
export type NewCallSeriesSegment = Insertable<CallSeriesSegmentsTable>;
