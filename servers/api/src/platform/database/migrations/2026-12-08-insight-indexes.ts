import { type Kysely, sql } from 'kysely';

// A heatmap's backdrop (`GET /v1/heatmaps`) is the most recent page view of a route: with only
// `page_views_route` (project, route, day) PostgreSQL read every page view of the route in the
// range and sorted them for the newest (~100 ms for the 80,000 views of a popular route over 30
// days, 100,000 seeded sessions: the insights bench). With the start time after the route, it
// reads the newest one from the end of the index.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`create index page_views_route_started on page_views (project_id, route, started_at)`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop index page_views_route_started`.execute(database);
}
