import type { Insertable } from 'kysely';
import type { SessionJobsTable } from './session-jobs.table.ts';

/**
 * `archived`: the content is in the blob store under its sha256; `failed`: the fetch failed
 * (`error` says why); `refused`: not fetched (an origin outside the project's allowed origins, or
 * an address the destination policy refuses).
 */
export type AssetStatus = 'archived' | 'failed' | 'refused';

/** What a snapshot referenced: a stylesheet (`<link rel=stylesheet>`, `@import`), a font or an image. */
export type AssetKind = 'stylesheet' | 'font' | 'image';

/** The last fetch of a URL for a project (modules/assets): reused for a day. */
export interface AssetFetchesTable {
  project_id: string;
  url: string;
  status: AssetStatus;
  /** Lowercase hex SHA-256 of the content; null when the fetch failed. */
  sha256: string | null;
  /** The media type as served, without parameters (`text/css`). */
  content_type: string | null;
  bytes: number | null;
  error: string | null;
  fetched_at: Date;
}

/** A URL a session referenced and what it was archived as (modules/assets). */
export interface SessionAssetsTable {
  project_id: string;
  session_id: string;
  url: string;
  kind: AssetKind;
  status: AssetStatus;
  sha256: string | null;
  content_type: string | null;
  bytes: number | null;
  error: string | null;
  fetched_at: Date;
}

/** The archiving job's queue: one row per session with new full snapshots. */
export type AssetJobsTable = SessionJobsTable;

/** Per session, the last chunk the archiving job read. */
export interface AssetProgressTable {
  project_id: string;
  session_id: string;
  consumed_seq: number;
  updated_at: Date;
}

export type NewSessionAsset = Insertable<SessionAssetsTable>;
