import { type Kysely, sql } from 'kysely';

// Passkeys (issue 26; servers/api/README.md, Passkeys): a person's WebAuthn credentials, and the
// short-lived single-use challenges of their registration and of passkey sign-in.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table passkeys (
      id text primary key,
      user_id text not null references users (id) on delete cascade,
      credential_id text not null unique,
      public_key bytea not null,
      counter bigint not null default 0 check (counter >= 0),
      transports jsonb not null default '[]',
      device_type text not null check (device_type in ('singleDevice', 'multiDevice')),
      backed_up boolean not null default false,
      name text not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz
    )
  `.execute(database);
  await sql`create index passkeys_user on passkeys (user_id)`.execute(database);
  await sql`
    create table passkey_challenges (
      challenge_hash bytea primary key,
      kind text not null check (kind in ('registration', 'authentication')),
      user_id text references users (id) on delete cascade,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      check (kind <> 'registration' or user_id is not null)
    )
  `.execute(database);
  await sql`create index passkey_challenges_expiry on passkey_challenges (expires_at)`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table passkey_challenges`.execute(database);
  await sql`drop table passkeys`.execute(database);
}
