import type { ColumnType } from 'kysely';

/** An AuthnRequest this server sent to a SAML IdP (migration 2026-12-27-saml). */
export interface SamlRequestsTable {
  /** The request's `ID`, which the response's `InResponseTo` repeats. */
  id: string;
  connection_id: string;
  /** A response to it is accepted until then (about ten minutes), once. */
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** An assertion id a SAML connection accepted, refused again until it expires (migration 2026-12-27-saml). */
export interface SamlAssertionsTable {
  connection_id: string;
  assertion_id: string;
  /** The assertion's own NotOnOrAfter (plus the skew): a replay after it fails the time check. */
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}
