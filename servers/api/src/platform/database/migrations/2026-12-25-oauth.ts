import { type Kysely, sql } from 'kysely';

// Sign-in with Google, Microsoft and GitHub (issue 26; servers/api/README.md, Sign-in with
// Google, Microsoft and GitHub): the identities linked to an account, the flows under way (one row
// per sign-in started, used once, for 10 minutes, bound to the browser that started it), and the
// accounts an identity made, with the unknown password they were given (while it is unchanged,
// the person has no password of their own).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table oauth_identities (
      id text primary key,
      user_id text not null references users (id) on delete cascade,
      provider text not null check (provider in ('google', 'microsoft', 'github')),
      subject text not null,
      email text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      unique (provider, subject)
    )`.execute(database);
  await sql`create index oauth_identities_user on oauth_identities (user_id)`.execute(database);
  await sql`
    create table oauth_flows (
      state_hash bytea primary key,
      browser_hash bytea not null,
      provider text not null,
      return_to text,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(database);
  await sql`create index oauth_flows_expiry on oauth_flows (expires_at)`.execute(database);
  await sql`
    create table oauth_created_accounts (
      user_id text primary key references users (id) on delete cascade,
      initial_password_hash text not null,
      created_at timestamptz not null default now()
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table oauth_created_accounts`.execute(database);
  await sql`drop table oauth_flows`.execute(database);
  await sql`drop table oauth_identities`.execute(database);
}
