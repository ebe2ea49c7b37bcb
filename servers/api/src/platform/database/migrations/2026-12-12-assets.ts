import { type Kysely, sql } from 'kysely';

// Archived assets (servers/api/README.md, Archived assets): the stylesheets, fonts and images a
// session's snapshots reference, fetched once and kept content-addressed in the blob store.
//
// - `asset_fetches`: the last fetch of each URL of a project (its content's sha256, or why it
//   failed), so a URL fetched within a day is not fetched again and a failure is not retried
//   before then.
// - `session_assets`: what each session referenced and the content it was archived as, kept
//   apart from the fetches so that a session keeps the content of its day when the URL changes.
// - `asset_jobs`: the archiving job's queue, one row per session with new full snapshots,
//   queued by ingest in the chunk's own statement; `asset_progress` the last chunk it read.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table asset_fetches (
      project_id text not null,
      url text not null,
      status text not null,
      sha256 text,
      content_type text,
      bytes integer,
      error text,
      fetched_at timestamptz not null,
      primary key (project_id, url)
    )`.execute(database);

  await sql`
    create table session_assets (
      project_id text not null,
      session_id text not null,
      url text not null,
      kind text not null,
      status text not null,
      sha256 text,
      content_type text,
      bytes integer,
      error text,
      fetched_at timestamptz not null,
      primary key (project_id, session_id, url)
    )`.execute(database);
  await sql`create index session_assets_sha256 on session_assets (project_id, sha256) where sha256 is not null`.execute(
    database,
  );

  await sql`
    create table asset_jobs (
      project_id text not null,
      session_id text not null,
      generation integer not null default 0,
      due_at timestamptz not null,
      locked_until timestamptz,
      attempts integer not null default 0,
      last_error text,
      finished_at timestamptz,
      primary key (project_id, session_id)
    )`.execute(database);
  await sql`create index asset_jobs_due on asset_jobs (due_at)`.execute(database);

  await sql`
    create table asset_progress (
      project_id text not null,
      session_id text not null,
      consumed_seq integer not null,
      updated_at timestamptz not null,
      primary key (project_id, session_id)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  for (const table of ['asset_progress', 'asset_jobs', 'session_assets', 'asset_fetches'])
    await sql`drop table ${sql.table(table)}`.execute(database);
}
