import { type Kysely, sql } from 'kysely';

// AI jobs (servers/api/README.md, AI jobs, anomalies and digests): the durable queue of the
// scheduled and long work of issue 24 (anomaly scans, digests, and explanations to come), one row
// per job, claimed by any server process with src/platform/jobs/queue.ts's claim.
//
// - `kind`: `anomaly_scan`, `digest`, `explain_session`, `explain_issue`.
// - `dedupe_key`: what a scheduler creates once (`anomaly:<project>:<hour>`), unique per project;
//   jobs without one (null) are never deduplicated (a unique constraint holds nulls distinct).
// - `status`: `queued` (waiting, or waiting for a retry), `running` (claimed), `succeeded`,
//   `failed` (after `max_attempts`, its `error` kept).
// - `due_at`, `locked_until`, `attempts`, `last_error`: the queue's columns (queue.ts).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table ai_jobs (
      project_id text not null references projects (id) on delete cascade,
      id text not null,
      kind text not null,
      dedupe_key text,
      input jsonb not null default '{}'::jsonb,
      status text not null default 'queued'
        check (status in ('queued', 'running', 'succeeded', 'failed')),
      result jsonb,
      error text,
      due_at timestamptz not null,
      locked_until timestamptz,
      attempts integer not null default 0,
      max_attempts integer not null default 5,
      last_error text,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz,
      primary key (project_id, id),
      unique (project_id, dedupe_key)
    )`.execute(database);
  await sql`create index ai_jobs_due on ai_jobs (due_at) where status in ('queued', 'running')`.execute(
    database,
  );
  await sql`create index ai_jobs_finished on ai_jobs (finished_at) where finished_at is not null`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table ai_jobs`.execute(database);
}
