import { type Kysely, sql } from 'kysely';

// Calls (PROTOCOL.md §2–§5, service-spec "Calls"): what processing derives from the `call.sample`
// and `call.event` items that arrive in chunks.
//
// - `chunks.call_item_count`: call items in the chunk, so processing finds the chunks to read.
// - `call_jobs`: the durable processing queue, one row per session with call data to (re)process.
//   Ingest upserts it in the transaction that indexes the chunk; workers claim due rows with
//   `for update skip locked` and delete them when done (unless `generation` moved on meanwhile).
// - `call_items`: the validated call items of every processed chunk, exactly as sent, keyed by
//   their place in the session (seq, index in the chunk): the input of every recomputation.
// - `calls`: one row per peer connection (`call_<ULID>`), rewritten by every recomputation.
// - `call_tracks`: per-track metric series of a call, as time-aligned arrays.
// - `call_findings`: detector findings, once per (session, peer connection, kind).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table chunks add column call_item_count integer not null default 0`.execute(database);

  await sql`
    create table call_jobs (
      project_id text not null references projects (id),
      session_id text not null,
      generation integer not null default 1,
      due_at timestamptz not null,
      locked_until timestamptz,
      attempts integer not null default 0,
      last_error text,
      primary key (project_id, session_id)
    )`.execute(database);
  await sql`create index call_jobs_due on call_jobs (due_at)`.execute(database);

  await sql`
    create table call_items (
      project_id text not null references projects (id),
      session_id text not null,
      seq integer not null,
      event_index integer not null,
      pc text,
      t timestamptz not null,
      type text not null,
      name text,
      item jsonb not null,
      primary key (project_id, session_id, seq, event_index)
    )`.execute(database);

  await sql`
    create table calls (
      project_id text not null references projects (id),
      id text not null,
      session_id text not null,
      pc text not null,
      started_at timestamptz not null,
      last_item_at timestamptz not null,
      ended_at timestamptz,
      duration_ms bigint,
      state text not null,
      end_reason text,
      setup_ms integer,
      connected boolean not null,
      failed_to_connect boolean not null,
      failure_reason text,
      relayed boolean not null,
      local_types jsonb not null,
      remote_types jsonb not null,
      protocol text,
      network_type text,
      browser_name text,
      browser_version text,
      os_name text,
      os_version text,
      device text,
      release text,
      environment text,
      end_user_id text,
      quality_score smallint,
      codec text,
      codecs jsonb not null,
      sample_count integer not null,
      track_count integer not null,
      issue_kinds jsonb not null,
      issue_count integer not null,
      has_issue boolean not null,
      max_severity text,
      series jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, id),
      unique (project_id, session_id, pc)
    )`.execute(database);
  await sql`create index calls_started on calls (project_id, started_at desc, id desc)`.execute(database);

  await sql`
    create table call_tracks (
      project_id text not null references projects (id),
      call_id text not null,
      track_id text not null,
      kind text not null,
      dir text not null,
      sample_count integer not null,
      series jsonb not null,
      primary key (project_id, call_id, track_id)
    )`.execute(database);

  await sql`
    create table call_findings (
      project_id text not null references projects (id),
      session_id text not null,
      pc text not null,
      kind text not null,
      call_id text,
      severity text not null,
      t timestamptz not null,
      track text,
      evidence jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (project_id, session_id, pc, kind)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  for (const table of ['call_findings', 'call_tracks', 'calls', 'call_items', 'call_jobs'])
    await sql`drop table ${sql.id(table)}`.execute(database);
  await sql`alter table chunks drop column call_item_count`.execute(database);
}
