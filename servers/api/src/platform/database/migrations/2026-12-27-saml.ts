import { type Kysely, sql } from 'kysely';

// SAML sign-in (issue 26; servers/api/README.md, SAML): the AuthnRequests this server sent, so a
// response's InResponseTo names one of them (consumed once, about ten minutes), and the assertion
// ids it accepted, each refused a second time until the assertion has expired.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table saml_requests (
      id text primary key,
      connection_id text not null references sso_connections (id) on delete cascade,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )
  `.execute(database);
  await sql`create index saml_requests_expiry on saml_requests (expires_at)`.execute(database);
  await sql`
    create table saml_assertions (
      connection_id text not null references sso_connections (id) on delete cascade,
      assertion_id text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      primary key (connection_id, assertion_id)
    )
  `.execute(database);
  await sql`create index saml_assertions_expiry on saml_assertions (expires_at)`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table saml_assertions`.execute(database);
  await sql`drop table saml_requests`.execute(database);
}
