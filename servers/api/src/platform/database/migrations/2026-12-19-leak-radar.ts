import { type Kysely, sql } from 'kysely';

// The leak radar (issue 25; servers/api/README.md, Insights, Leak radar):
// - `leak_radar_reports`: when a project was last told about one kind of leak in one field
//   (`email` in `nav.url`, `secret` in `custom.props.password`), so the same kind and field is
//   reported at most once an hour per project. A claim is one upsert whose update only happens
//   when the last report is older than the hour, so concurrent facts jobs report it once.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table leak_radar_reports (
      project_id text not null references projects (id) on delete cascade,
      kind text not null,
      field text not null,
      reported_at timestamptz not null,
      primary key (project_id, kind, field)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table leak_radar_reports`.execute(database);
}
