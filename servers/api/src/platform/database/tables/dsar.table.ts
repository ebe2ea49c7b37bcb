import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

/** Where an access request is (migration 2026-12-22-dsar). */
type DsarStatus = 'queued' | 'running' | 'ready' | 'failed' | 'expired';

/** One session of the subject, as the request's job found it. */
interface DsarManifestSession {
  projectId: string;
  id: string;
  chunks: number;
  /** The chunks' JSON bytes (inflated, decrypted). */
  bytes: number;
}

/** One call of the subject. */
interface DsarManifestCall {
  projectId: string;
  id: string;
  sessionId: string;
}

/** What the job gathered: the lists the archive is built from, and their counts. */
export interface DsarManifest {
  totals: {
    projects: number;
    sessions: number;
    chunks: number;
    bytes: number;
    calls: number;
    errors: number;
    customEvents: number;
  };
  projects: Array<{ projectId: string; name: string; sessions: number; calls: number }>;
  /** Emptied when the request expires: only the counts stay. */
  sessions: DsarManifestSession[];
  calls: DsarManifestCall[];
}

/** An end user's access request, and its job (src/platform/jobs/queue.ts's shape). */
export interface DsarRequestsTable {
  id: string;
  organization_id: string;
  /** Whom it is about: kept while the request is live, null once it expired or failed. */
  subject_user_id: string | null;
  subject_email: string | null;
  status: ColumnType<DsarStatus, DsarStatus | undefined, DsarStatus>;
  manifest: JSONColumnType<DsarManifest | null, string | null | undefined, string | null>;
  error: ColumnType<string | null, string | null | undefined, string | null>;
  /** The person who asked (a user id). */
  requested_by: string | null;
  due_at: ColumnType<Date, Date | undefined, Date>;
  locked_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
  started_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  ready_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** When the archive stops being served (set when it is ready). */
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type DsarRequest = Selectable<DsarRequestsTable>;
