import type { ColumnType } from 'kysely';

/**
 * The durable processing queue: one row per session with something to process after ingest (its
 * calls, its errors and findings for issue clusters, its custom events for notification rules).
 */
export interface ProcessingJobsTable {
  project_id: string;
  session_id: string;
  /** Bumped by every chunk to process: a worker deletes the row only if it did not move. */
  generation: ColumnType<number, number | undefined, number>;
  due_at: Date;
  /** A worker holds the job until then (a crashed worker's job is taken again after it). */
  locked_until: Date | null;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  /** When its last run finished: a worker that coalesces leaves it for a moment after. */
  finished_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
