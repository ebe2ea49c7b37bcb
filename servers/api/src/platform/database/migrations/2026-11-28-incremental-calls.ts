import { type Kysely, sql } from 'kysely';

// Incremental call processing: a job adds a session's new call items to what it computed
// before, instead of recomputing the session from all its items.
//
// - `call_progress`: per session, what processing needs from the items consumed so far (the
//   detector's snapshot, each call's facts, the score's running sums: `progress`, JSON whose
//   size does not grow with the call), and a watermark of what was consumed: every chunk with
//   `seq <= consumed_seq` exists and was read (or carries no call item), and the latest `sentAt`
//   and arrival among those chunks. `version` is bumped by every write: a job writes only over
//   the version it read, so two workers on one session never both win. Deleting a row makes the
//   next job recompute its session from all its items (`svc reprocess-calls` does).
// - `call_series_segments`: pieces of a call's series appended by later jobs (`track_id` '' for
//   the connection series of `calls.series`, else the track of `call_tracks.series`), from
//   sample `first_sample` on; readers join them after the row's series. A job folds them back
//   into the rows once the call is closed.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table call_progress (
      project_id text not null references projects (id),
      session_id text not null,
      version integer not null,
      consumed_seq integer not null,
      consumed_sent_at timestamptz,
      consumed_received_at timestamptz,
      progress jsonb not null,
      updated_at timestamptz not null default now(),
      primary key (project_id, session_id)
    )`.execute(database);

  await sql`
    create table call_series_segments (
      project_id text not null references projects (id),
      call_id text not null,
      track_id text not null,
      first_sample integer not null,
      sample_count integer not null,
      series jsonb not null,
      primary key (project_id, call_id, track_id, first_sample)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table call_series_segments`.execute(database);
  await sql`drop table call_progress`.execute(database);
}
