import { type Kysely, sql } from 'kysely';

// Anomalies and digests (servers/api/README.md, AI jobs, anomalies and digests).
//
// - `ai_anomalies`: one row per anomaly that fired, keyed by project, metric and the hour it is
//   about, so each fires once whichever process scans first (`on conflict do nothing`, as
//   `insight_alerts`). `details` holds the webhook's `data.anomaly`; `event_id` the notification
//   event written with it (null when no rule matched).
// - `ai_digests`: one digest per project, period (`daily`, `weekly`) and start, its `content`
//   the numbers and links the `ai.digest` webhook carries as `data.digest`.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table ai_anomalies (
      project_id text not null references projects (id) on delete cascade,
      metric text not null,
      hour timestamptz not null,
      value double precision not null,
      score double precision not null,
      details jsonb not null,
      event_id text,
      created_at timestamptz not null default now(),
      primary key (project_id, metric, hour)
    )`.execute(database);
  await sql`create index ai_anomalies_hour on ai_anomalies (project_id, hour)`.execute(database);

  await sql`
    create table ai_digests (
      project_id text not null references projects (id) on delete cascade,
      id text not null,
      period text not null check (period in ('daily', 'weekly')),
      period_start timestamptz not null,
      period_end timestamptz not null,
      content jsonb not null,
      event_id text,
      created_at timestamptz not null default now(),
      primary key (project_id, id),
      unique (project_id, period, period_start)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table ai_digests`.execute(database);
  await sql`drop table ai_anomalies`.execute(database);
}
