import { type Kysely, sql } from 'kysely';

// OpenTelemetry (servers/api/README.md, OpenTelemetry): spans and log records sent to
// POST /v1/otlp/traces and /v1/otlp/logs.
//
// - `spans`: one row per span; `day` (of the start, UTC) keys the retention sweep's deletes, the
//   trace id the reading of a trace, the session id (a `session.id` attribute) a session's traces.
// - `log_records`: one row per log record, joined to spans by trace id.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table spans (
      project_id text not null,
      trace_id text not null,
      span_id text not null,
      parent_span_id text,
      name text not null,
      kind smallint not null,
      service text,
      start_time timestamptz not null,
      end_time timestamptz not null,
      duration_ms double precision not null,
      status_code smallint not null,
      status_message text,
      attributes text not null,
      resource_attributes text not null,
      session_id text,
      day date not null,
      primary key (project_id, trace_id, span_id)
    )`.execute(database);
  await sql`create index spans_day on spans (project_id, day)`.execute(database);
  await sql`create index spans_session on spans (project_id, session_id) where session_id is not null`.execute(
    database,
  );

  await sql`
    create table log_records (
      project_id text not null,
      time timestamptz not null,
      trace_id text,
      span_id text,
      severity_number smallint not null,
      severity_text text,
      body text,
      attributes text not null,
      service text,
      session_id text,
      day date not null
    )`.execute(database);
  await sql`create index log_records_day on log_records (project_id, day)`.execute(database);
  await sql`create index log_records_trace on log_records (project_id, trace_id) where trace_id is not null`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table log_records`.execute(database);
  await sql`drop table spans`.execute(database);
}
