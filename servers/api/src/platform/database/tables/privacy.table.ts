import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

/** A blob whose rows are deleted, removed from the blob store after the commit (migration 2026-12-21-privacy). */
export interface BlobDeletionsTable {
  blob_key: string;
  project_id: string;
  queued_at: ColumnType<Date, Date | undefined, never>;
}

/** Where an erasure stands. */
type ErasureStatus = 'queued' | 'running' | 'completed' | 'failed';

/** An end user's erasure across an organization's projects (src/modules/privacy/erasure.ts). */
export interface ErasureRequestsTable {
  /** `era_<ULID>`. */
  id: string;
  organization_id: string;
  /** 16 random bytes of salt, then SHA-256 of salt and subject: who, without keeping who. */
  subject_hash: Uint8Array;
  /** The subject's user id (`identify`) while the erasure runs; cleared when it is done. */
  user_id: string | null;
  /** The subject's e-mail address while the erasure runs; cleared when it is done. */
  email: string | null;
  user_id_given: boolean;
  email_given: boolean;
  status: ColumnType<ErasureStatus, ErasureStatus | undefined, ErasureStatus>;
  /** The person who asked (`usr_…`), or null for an API token's or the CLI's. */
  requested_by: string | null;
  /** What was removed so far: rows per table, blobs, sessions. */
  receipt: JSONColumnType<Record<string, number>>;
  sessions_erased: ColumnType<number, number | undefined, number>;
  error: string | null;
  locked_until: Date | null;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
  started_at: Date | null;
  finished_at: Date | null;
}

export type ErasureRequest = Selectable<ErasureRequestsTable>;
