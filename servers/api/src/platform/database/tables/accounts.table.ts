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

/** A person's TOTP secret, sealed; MFA is on once `enabled_at` is set. */
export interface UserMfaTable {
  user_id: string;
  wrapped_key: Uint8Array;
  sealed_secret: Uint8Array;
  enabled_at: Date | null;
  /** bigint: the driver may hand back a string. */
  last_step: ColumnType<string | number | null, number | null, number | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface MfaRecoveryCodesTable {
  code_hash: Uint8Array;
  user_id: string;
  used_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** Between a right password and the second factor at sign-in (`mfaToken`). */
export interface MfaChallengesTable {
  token_hash: Uint8Array;
  user_id: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** The one-time sign-in links of `POST /auth/magic-link`. */
export interface MagicLinkTokensTable {
  token_hash: Uint8Array;
  user_id: string;
  email: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}
