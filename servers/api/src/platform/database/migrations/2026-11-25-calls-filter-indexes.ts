import { type Kysely, sql } from 'kysely';

// `GET /v1/calls?endUser=` and `?release=` select few calls out of many: without an index the
// newest-first list scans the project's calls until it has a page (30–45 ms at p95 over 100k
// calls in `pnpm bench`). Both keep the list's order, so a page is an index range.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`create index calls_end_user on calls (project_id, end_user_id, started_at desc, id desc)`.execute(
    database,
  );
  await sql`create index calls_release on calls (project_id, release, started_at desc, id desc)`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop index calls_release`.execute(database);
  await sql`drop index calls_end_user`.execute(database);
}
