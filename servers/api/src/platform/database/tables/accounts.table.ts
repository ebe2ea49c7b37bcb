import type { ColumnType, Selectable } from 'kysely';

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  email_verified_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type User = Selectable<UsersTable>;

export interface EmailVerificationTokensTable {
  token_hash: Uint8Array;
  user_id: string;
  email: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface UserSessionsTable {
  id: string;
  user_id: string;
  token_hash: Uint8Array;
  csrf_token: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Date;
  ip: string | null;
  user_agent: string | null;
}

/** The one-time links of a password reset (`POST /auth/password/forgot`). */
export interface PasswordResetTokensTable {
  token_hash: Uint8Array;
  user_id: string;
  email: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}
