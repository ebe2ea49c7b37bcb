import { type Kysely, sql } from 'kysely';

// Organization SSO's sign-ins (issue 26; servers/api/README.md, Organization SSO): who a
// connection's subject is (`sso_identities`), and the OpenID Connect sign-ins under way
// (`sso_oidc_flows`, single use, bound to the browser that started them).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table sso_identities (
      id text primary key,
      connection_id text not null references sso_connections (id) on delete cascade,
      organization_id text not null references organizations (id) on delete cascade,
      subject text not null,
      user_id text not null references users (id) on delete cascade,
      created_at timestamptz not null default now(),
      last_signed_in_at timestamptz not null default now(),
      unique (connection_id, subject)
    )
  `.execute(database);
  await sql`create index sso_identities_user on sso_identities (user_id)`.execute(database);
  await sql`
    create table sso_oidc_flows (
      id bytea primary key,
      connection_id text not null references sso_connections (id) on delete cascade,
      state text not null,
      nonce text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )
  `.execute(database);
  await sql`create index sso_oidc_flows_expiry on sso_oidc_flows (expires_at)`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table sso_oidc_flows`.execute(database);
  await sql`drop table sso_identities`.execute(database);
}
