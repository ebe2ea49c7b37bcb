import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

export interface ProjectsTable {
  id: string;
  organization_id: string;
  name: string;
  project_key: string;
  previous_project_key: string | null;
  previous_project_key_expires_at: Date | null;
  wrapped_data_key: Uint8Array;
  settings: JSONColumnType<Record<string, unknown>>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  /** Set when the project is deleted: its key, tokens and data are out of reach from then on. */
  deleted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type Project = Selectable<ProjectsTable>;
