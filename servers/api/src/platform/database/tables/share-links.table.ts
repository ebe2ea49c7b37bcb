import type { ColumnType, Selectable } from 'kysely';

export interface ShareLinksTable {
  id: string;
  project_id: string;
  session_id: string;
  token_hash: Uint8Array;
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type ShareLink = Selectable<ShareLinksTable>;
