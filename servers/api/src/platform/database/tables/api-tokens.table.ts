import type { ColumnType, JSONColumnType } from 'kysely';

export interface ApiTokensTable {
  id: string;
  project_id: string;
  name: string;
  token_hash: Uint8Array;
  /** The scopes it was created with; null: every scope (a project's full-access token). */
  scopes: JSONColumnType<string[], string | null | undefined, string | null> | null;
  /** When it stops working; null: never. */
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The person who created it; null for the first start's and the CLI's tokens. */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
  last_used_at: Date | null;
  revoked_at: Date | null;
}
