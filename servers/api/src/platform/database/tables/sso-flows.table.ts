import type { ColumnType } from 'kysely';

/** Who a connection's subject (OIDC `sub`, SAML NameID) is here (migration 2026-12-26-sso-flows). */
export interface SsoIdentitiesTable {
  /** `idn_<ULID>`. */
  id: string;
  connection_id: string;
  organization_id: string;
  /** The IdP's stable id of the person: the ID token's `sub`, the assertion's NameID. */
  subject: string;
  user_id: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  last_signed_in_at: ColumnType<Date, Date | undefined, Date>;
}

/**
 * An OpenID Connect sign-in under way (migration 2026-12-26-sso-flows): used once, for 10 minutes,
 * by the browser holding the cookie whose SHA-256 is the id (the PKCE verifier is derived from
 * that cookie, so the table holds no secret).
 */
export interface SsoOidcFlowsTable {
  id: Uint8Array;
  connection_id: string;
  state: string;
  nonce: string;
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}
