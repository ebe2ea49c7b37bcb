import { type Kysely, sql } from 'kysely';

// Privacy requests and retention (issue 25; servers/api/README.md, Privacy requests and
// retention):
// - `blob_deletions`: the blobs of deleted rows, queued in the transaction that deletes the rows
//   and removed from the blob store after it commits. A crash between the two leaves the queue,
//   which the privacy worker drains: no blob outlives its rows for long, and none is lost track of.
// - `erasure_requests`: an end user's erasure, done in bounded steps by the privacy worker; the
//   subject (user id, e-mail) is kept only while it runs, then cleared: a salted hash stays, so the
//   receipt can be matched to a person who asks again, and the receipt counts what was removed.
// - indexes that erasure and retention read by: log records by session, sessions by e-mail.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table blob_deletions (
      blob_key text primary key,
      project_id text not null,
      queued_at timestamptz not null default now()
    )`.execute(database);
  await sql`
    create table erasure_requests (
      id text primary key,
      organization_id text not null references organizations (id) on delete cascade,
      subject_hash bytea not null,
      user_id text,
      email text,
      user_id_given boolean not null,
      email_given boolean not null,
      status text not null default 'queued',
      requested_by text,
      receipt jsonb not null default '{}'::jsonb,
      sessions_erased integer not null default 0,
      error text,
      locked_until timestamptz,
      attempts integer not null default 0,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz
    )`.execute(database);
  await sql`create index erasure_requests_listing on erasure_requests (organization_id, id desc)`.execute(
    database,
  );
  await sql`create index erasure_requests_due on erasure_requests (created_at) where status in ('queued', 'running')`.execute(
    database,
  );
  await sql`create index log_records_session on log_records (project_id, session_id) where session_id is not null`.execute(
    database,
  );
  await sql`create index sessions_project_email on sessions (project_id, lower(user_email)) where user_email is not null`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop index sessions_project_email`.execute(database);
  await sql`drop index log_records_session`.execute(database);
  await sql`drop table erasure_requests`.execute(database);
  await sql`drop table blob_deletions`.execute(database);
}
