import type { ColumnType } from 'kysely';

/**
 * A per-session job queue (src/platform/jobs/session-jobs.ts): one row per session with work to
 * do (`insight_jobs`, `asset_jobs`).
 */
export interface SessionJobsTable {
  project_id: string;
  session_id: string;
  /** Bumped by every chunk that brings work: a worker deletes the row only if it did not move. */
  generation: ColumnType<number, number | undefined, number>;
  due_at: Date;
  locked_until: Date | null;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  finished_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
