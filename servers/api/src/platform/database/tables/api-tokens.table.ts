import type { ColumnType } from 'kysely';

export interface ApiTokensTable {
  id: string;
  project_id: string;
  name: string;
  token_hash: Uint8Array;
  created_at: ColumnType<Date, Date | undefined, never>;
  last_used_at: Date | null;
  revoked_at: Date | null;
}
