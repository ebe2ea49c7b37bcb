import { type Kysely, sql } from 'kysely';

// Organization SSO (issue 26; servers/api/README.md, Organization SSO): an organization's
// connections to its identity provider (SAML 2.0 or OpenID Connect), the domains it claims and
// verifies by DNS, and whether it requires SSO of the people of its verified domains.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table sso_connections (
      id text primary key,
      organization_id text not null references organizations (id) on delete cascade,
      type text not null check (type in ('saml', 'oidc')),
      name text not null,
      default_role text not null default 'member' check (default_role in ('admin', 'member', 'viewer')),
      enabled boolean not null default true,
      saml_idp_entity_id text,
      saml_sso_url text,
      saml_certificates jsonb not null default '[]',
      oidc_issuer text,
      oidc_client_id text,
      oidc_client_secret_sealed bytea,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check (type <> 'saml' or (saml_idp_entity_id is not null and saml_sso_url is not null)),
      check (type <> 'oidc' or (oidc_issuer is not null and oidc_client_id is not null))
    )
  `.execute(database);
  await sql`create index sso_connections_organization on sso_connections (organization_id)`.execute(database);
  await sql`
    create table sso_domains (
      id text primary key,
      organization_id text not null references organizations (id) on delete cascade,
      domain text not null,
      verification_token text not null,
      verified_at timestamptz,
      last_checked_at timestamptz,
      last_check_error text,
      created_at timestamptz not null default now(),
      unique (organization_id, domain)
    )
  `.execute(database);
  // A domain may be claimed by several organizations, and verified by one.
  await sql`create unique index sso_domains_verified on sso_domains (domain) where verified_at is not null`.execute(
    database,
  );
  await sql`alter table organizations add column sso_required boolean not null default false`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter table organizations drop column sso_required`.execute(database);
  await sql`drop table sso_domains`.execute(database);
  await sql`drop table sso_connections`.execute(database);
}
