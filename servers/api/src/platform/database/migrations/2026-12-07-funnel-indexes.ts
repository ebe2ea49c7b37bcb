import { type Kysely, sql } from 'kysely';

// A funnel's click steps read `click_facts` by selector (`GET /v1/funnels/{id}/results`): the
// table's index leads with the route, which a click step does not name, so without this one the
// read scans every click of the project in the range. Page view steps use `page_views_route`
// (project, route, day), custom event steps `session_signals_project_kind_t`.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`create index click_facts_selector on click_facts (project_id, selector, day) where kind = 'click'`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop index click_facts_selector`.execute(database);
}
