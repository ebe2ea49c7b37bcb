import type { ColumnType, Selectable } from 'kysely';

/** The providers a person may sign in with (migration 2026-12-25-oauth). */
export type OAuthProviderId = 'google' | 'microsoft' | 'github';

/** An identity at a provider, linked to an account (migration 2026-12-25-oauth). */
export interface OAuthIdentitiesTable {
  /** `idn_<ULID>`. */
  id: string;
  user_id: string;
  provider: OAuthProviderId;
  /** The provider's stable id of the person: the ID token's `sub`, GitHub's numeric user id. */
  subject: string;
  /** The address the provider gave at the last sign-in (shown to the person; never a login). */
  email: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type OAuthIdentity = Selectable<OAuthIdentitiesTable>;

/** A sign-in started at a provider: used once, within 10 minutes, by the browser that started it. */
export interface OAuthFlowsTable {
  /** SHA-256 of the `state` sent to the provider. */
  state_hash: Uint8Array;
  /** SHA-256 of the flow cookie's value (it carries the PKCE verifier and the nonce). */
  browser_hash: Uint8Array;
  provider: OAuthProviderId;
  /** A path of the dashboard to land on after signing in. */
  return_to: string | null;
  expires_at: Date;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** An account an identity made, with the random password it was given (no one knows it). */
export interface OAuthCreatedAccountsTable {
  user_id: string;
  /** While `users.password_hash` is still this, the person has set no password of their own. */
  initial_password_hash: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}
