import { type Kysely, sql } from 'kysely';

// Access requests of end users (issue 25; servers/api/README.md, Privacy requests): one row per
// request of an organization to export what it holds about one of its end users (the person an SDK
// identified: `sessions.user_id` / `user_email`, `calls.end_user_id`). The row is its own durable
// job (src/platform/jobs/queue.ts: `due_at`, `locked_until`, `attempts`, `last_error`): any
// process claims it, gathers the manifest (which sessions and calls, counts and bytes), and the
// archive is built from that manifest on each download, never stored. Whom it is about
// (`subject_user_id`, `subject_email`) is kept only while the request is live: expiry (or failure)
// clears it and the manifest's lists, keeping the counts. Sessions are found by e-mail without an
// index of their own: a request is rare and runs in the background, and ingest's hot table keeps
// the indexes it has.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table dsar_requests (
      id text primary key,
      organization_id text not null references organizations (id) on delete cascade,
      subject_user_id text,
      subject_email text,
      status text not null default 'queued'
        check (status in ('queued', 'running', 'ready', 'failed', 'expired')),
      manifest jsonb,
      error text,
      requested_by text,
      due_at timestamptz not null default now(),
      locked_until timestamptz,
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      ready_at timestamptz,
      expires_at timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(database);
  await sql`create index dsar_requests_organization on dsar_requests (organization_id, id desc)`.execute(
    database,
  );
  // The queue's claim looks at unfinished requests only.
  await sql`
    create index dsar_requests_due on dsar_requests (due_at)
      where status in ('queued', 'running')`.execute(database);
  // The sweep of ready requests whose archive expired.
  await sql`
    create index dsar_requests_expiry on dsar_requests (expires_at)
      where status = 'ready'`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table dsar_requests`.execute(database);
}
