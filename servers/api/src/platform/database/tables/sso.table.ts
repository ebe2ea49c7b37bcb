import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

/** An organization's connection to its identity provider (migration 2026-12-23-sso). */
export interface SsoConnectionsTable {
  /** `sso_<ULID>`. */
  id: string;
  organization_id: string;
  type: 'saml' | 'oidc';
  name: string;
  /** The role of a person who joins through this connection (never owner). */
  default_role: ColumnType<'admin' | 'member' | 'viewer', 'admin' | 'member' | 'viewer' | undefined>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  /** SAML: the IdP's entity id (the assertions' issuer). */
  saml_idp_entity_id: string | null;
  /** SAML: the IdP's single sign-on URL (HTTP-Redirect binding). */
  saml_sso_url: string | null;
  /** SAML: the IdP's signing certificates (PEM), more than one while the IdP rotates. */
  saml_certificates: JSONColumnType<string[], string[] | undefined, string[]>;
  /** OIDC: the issuer, discovered at `<issuer>/.well-known/openid-configuration`. */
  oidc_issuer: string | null;
  oidc_client_id: string | null;
  /** OIDC: the client secret, sealed with the master key (`sealBlob`, bound to the connection id). */
  oidc_client_secret_sealed: Uint8Array | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type SsoConnection = Selectable<SsoConnectionsTable>;

/** A domain an organization claims, verified by a DNS TXT record (migration 2026-12-23-sso). */
export interface SsoDomainsTable {
  /** `dom_<ULID>`. */
  id: string;
  organization_id: string;
  /** Lower case, without a trailing dot (`example.com`). */
  domain: string;
  /** The TXT record's value that proves control of the domain. */
  verification_token: string;
  /** Null until a lookup found the record; cleared when a re-check no longer finds it. */
  verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_checked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_check_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type SsoDomain = Selectable<SsoDomainsTable>;
