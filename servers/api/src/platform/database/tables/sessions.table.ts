import type { ColumnType, Insertable, Selectable } from 'kysely';

/** int8 columns: both engines are set to return them as numbers (see createDatabase). */
type BigintColumn = ColumnType<number, number | undefined, number>;

export interface SessionsTable {
  project_id: string;
  id: string;
  visit_id: string | null;
  started_at: Date;
  last_event_at: Date;
  duration_ms: BigintColumn;
  url: string | null;
  referrer: string | null;
  user_agent: string | null;
  browser_name: string | null;
  browser_version: string | null;
  os_name: string | null;
  os_version: string | null;
  device: string | null;
  viewport_width: number | null;
  viewport_height: number | null;
  release: string | null;
  environment: string | null;
  user_id: string | null;
  user_email: string | null;
  user_name: string | null;
  /** Seq of the chunk whose `identify` set the user (null: from `meta.user`, or none). */
  user_seq: number | null;
  recording_mode: string | null;
  sdk_name: string | null;
  sdk_version: string | null;
  error_count: ColumnType<number, number | undefined, number>;
  level: string | null;
  chunk_count: ColumnType<number, number | undefined, number>;
  max_seq: ColumnType<number, number | undefined, number>;
  stored_bytes: BigintColumn;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type Session = Selectable<SessionsTable>;
export type NewSession = Insertable<SessionsTable>;
