import { type Kysely, sql } from 'kysely';

// Usage and caps (issue 25; servers/api/README.md, Usage and caps):
// - `usage_daily`: what each project used per UTC day (sessions started, chunks and bytes
//   ingested, bytes stored, calls and call seconds, OTLP spans and log records, AI tokens), added
//   to in the statement or transaction of the work itself (ingest's batch, a call's processing,
//   an OTLP export, a model call), so the count is exact and costs one upsert per batch.
//   `organization_id` is kept with each row: usage outlives a deleted project.
// - `usage_caps`: an organization's own monthly caps (null: none beyond the plan's).
// - `usage_thresholds`: each threshold (80 %, 100 %) reached, once per metric and month: the
//   `usage.threshold` event fires when its row is inserted; the 100 % row's time is when the
//   cap was reached (sessions already started may finish for a while after it).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table usage_daily (
      project_id text not null,
      day date not null,
      organization_id text not null references organizations (id) on delete cascade,
      sessions bigint not null default 0,
      chunks bigint not null default 0,
      ingested_bytes bigint not null default 0,
      stored_bytes bigint not null default 0,
      calls bigint not null default 0,
      call_seconds bigint not null default 0,
      spans bigint not null default 0,
      log_records bigint not null default 0,
      ai_tokens bigint not null default 0,
      primary key (project_id, day)
    )`.execute(database);
  await sql`create index usage_daily_organization on usage_daily (organization_id, day)`.execute(database);
  await sql`
    create table usage_caps (
      organization_id text primary key references organizations (id) on delete cascade,
      sessions bigint,
      stored_bytes bigint,
      ai_tokens bigint,
      updated_by text,
      updated_at timestamptz not null default now()
    )`.execute(database);
  await sql`
    create table usage_thresholds (
      organization_id text not null references organizations (id) on delete cascade,
      month date not null,
      metric text not null,
      percent integer not null,
      used bigint not null,
      cap bigint not null,
      reached_at timestamptz not null default now(),
      primary key (organization_id, month, metric, percent)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table usage_thresholds`.execute(database);
  await sql`drop table usage_caps`.execute(database);
  await sql`drop table usage_daily`.execute(database);
}
