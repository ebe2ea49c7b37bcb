import { type Kysely, sql } from 'kysely';

// Uploaded bundles and their source maps (`POST /v1/sourcemaps`): the bytes are in the blob
// store under `blob_key`, one row per file. A map is found by its debug id, or by release and
// URL (`~/static/js/main.js.map`, where `~` stands for any origin).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table sourcemap_files (
      id text primary key,
      project_id text not null references projects (id) on delete cascade,
      release text,
      url text not null,
      debug_id text,
      kind text not null check (kind in ('bundle', 'map')),
      size integer not null,
      sha256 text not null,
      blob_key text not null,
      uploaded_by text,
      created_at timestamptz not null default now()
    )`.execute(database);
  await sql`create index sourcemap_files_project on sourcemap_files (project_id, id)`.execute(database);
  await sql`create index sourcemap_files_debug_id on sourcemap_files (project_id, debug_id) where debug_id is not null`.execute(
    database,
  );
  await sql`create index sourcemap_files_url on sourcemap_files (project_id, url, release)`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table sourcemap_files`.execute(database);
}
