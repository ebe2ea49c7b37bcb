import type { ColumnType } from 'kysely';

/**
 * Per session, what incremental call processing computed from the items consumed so far
 * (`progress`: a `SessionProgress` of src/modules/calls/call-progress.ts) and the watermark of what it
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
 * What one job appended to a call's series while it is open, after the series in its rows: JSON
 * text of `[trackId, firstSample, series]` entries, the connection's (`trackId` '') and each
 * track's with new samples. `first_sample` is where the connection entry starts: a key, as every
 * appending job starts a new one.
 */
export interface CallSeriesPiecesTable {
  project_id: string;
  call_id: string;
  first_sample: number;
  series: string;
}
