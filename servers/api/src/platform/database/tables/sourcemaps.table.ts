import type { ColumnType, Insertable, Selectable } from 'kysely';

export interface SourcemapFilesTable {
  id: string;
  project_id: string;
  release: string | null;
  /** The URL prefix joined with the file's name: `~/static/js/main.js` (`~`: any origin). */
  url: string;
  /** Lowercase UUID of the `//# debugId=` comment (bundle) or the `debugId` field (map). */
  debug_id: string | null;
  kind: 'bundle' | 'map';
  size: number;
  sha256: string;
  blob_key: string;
  /** The user or API token id that uploaded it. */
  uploaded_by: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type SourcemapFile = Selectable<SourcemapFilesTable>;
export type NewSourcemapFile = Insertable<SourcemapFilesTable>;
