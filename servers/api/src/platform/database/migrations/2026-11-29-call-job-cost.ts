import { type Kysely, sql } from 'kysely';

// What a live call job costs, whatever the store:
//
// - `call_progress.progress` becomes text. Nothing queries inside it; as jsonb every job paid for
//   parsing it into jsonb when writing and printing it back when reading (on PGlite ~0.3 ms a job
//   for 4.5 KB of JSON), where the job parses and writes the JSON text itself anyway.
// - `call_series_segments` (a row per series piece: the connection's and each track's, five rows
//   a job for a call with four tracks) becomes `call_series_pieces`: a row per job and call, its
//   pieces as JSON text `[[trackId, firstSample, series], ...]` keyed by where the connection piece
//   starts. Existing segments are copied, those of one call with the same `first_sample` into one
//   row (a track's segments start at most where the connection's does, so no key is taken twice).
// - `call_tracks.sample_count` counts the samples of its row's series only; readers add those of
//   the pieces, so a live job no longer updates four track rows. Open calls' counts are set so.
// - `call_jobs.finished_at`: when a job's last run finished. A worker that coalesces leaves a
//   session's job for a moment after it, so the chunks that arrive meanwhile become one job.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table call_progress alter column progress type text using progress::text`.execute(database);

  await sql`
    create table call_series_pieces (
      project_id text not null references projects (id),
      call_id text not null,
      first_sample integer not null,
      series text not null,
      primary key (project_id, call_id, first_sample)
    )`.execute(database);
  await sql`
    insert into call_series_pieces (project_id, call_id, first_sample, series)
    select project_id, call_id, first_sample,
      jsonb_agg(jsonb_build_array(track_id, first_sample, series) order by track_id)::text
    from call_series_segments
    group by project_id, call_id, first_sample`.execute(database);
  await sql`
    update call_tracks set sample_count = sample_count - pieces.samples
    from (
      select project_id, call_id, track_id, sum(sample_count)::integer as samples
      from call_series_segments where track_id <> ''
      group by project_id, call_id, track_id
    ) as pieces
    where call_tracks.project_id = pieces.project_id and call_tracks.call_id = pieces.call_id
      and call_tracks.track_id = pieces.track_id`.execute(database);
  await sql`drop table call_series_segments`.execute(database);

  await sql`alter table call_jobs add column finished_at timestamptz`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter table call_jobs drop column finished_at`.execute(database);
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
  await sql`
    insert into call_series_segments (project_id, call_id, track_id, first_sample, sample_count, series)
    select pieces.project_id, pieces.call_id, piece->>0, (piece->>1)::integer,
      jsonb_array_length(piece->2->'t'), piece->2
    from call_series_pieces as pieces, jsonb_array_elements(pieces.series::jsonb) as piece`.execute(database);
  await sql`
    update call_tracks set sample_count = sample_count + segments.samples
    from (
      select project_id, call_id, track_id, sum(sample_count)::integer as samples
      from call_series_segments where track_id <> ''
      group by project_id, call_id, track_id
    ) as segments
    where call_tracks.project_id = segments.project_id and call_tracks.call_id = segments.call_id
      and call_tracks.track_id = segments.track_id`.execute(database);
  await sql`drop table call_series_pieces`.execute(database);
  await sql`alter table call_progress alter column progress type jsonb using progress::jsonb`.execute(
    database,
  );
}
