import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

/** What an AI job does (migration 2026-12-14-ai-jobs). */
export type AiJobKind = 'anomaly_scan' | 'digest' | 'explain_session' | 'explain_issue';

/** Where an AI job stands. */
export type AiJobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/**
 * The AI jobs' queue (src/modules/ai/jobs.ts): scheduled and long work any server process takes,
 * with the queue's columns of src/platform/jobs/queue.ts.
 */
export interface AiJobsTable {
  project_id: string;
  /** `job_<ULID>`. */
  id: string;
  kind: AiJobKind;
  /** Unique per project where set: a scheduler in N processes creates the job once. */
  dedupe_key: string | null;
  input: JSONColumnType<Record<string, unknown>>;
  status: ColumnType<AiJobStatus, AiJobStatus | undefined, AiJobStatus>;
  /** What the handler resolved with (succeeded jobs). */
  result: ColumnType<unknown, string | null | undefined, string | null>;
  /** Why the job failed for good (failed jobs). */
  error: string | null;
  due_at: Date;
  locked_until: Date | null;
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  started_at: Date | null;
  finished_at: Date | null;
}

export type AiJob = Selectable<AiJobsTable>;
