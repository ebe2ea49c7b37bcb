import { type Kysely, sql } from 'kysely';

// Daily rollups of page views (servers/api/README.md, Insights: Rollups), so the vitals,
// releases and overview reads cost what a project's groups of page views cost, not what its
// page views do (at 100,000 sessions a month they sorted 270,000 page views per read):
// - `page_view_rollups`: per project, UTC day and group of page views (route, device, browser,
//   release, environment), the page views, rage and dead clicks, and a histogram of each vital
//   (src/modules/insights/vital-histogram.ts). No primary key: a day's rows are replaced whole.
// - `page_view_dirty_days`: the days whose rollups are out of date. Every statement that
//   writes `page_views` marks the days it touched, through the triggers below, so no writer (the
//   facts job, a deletion, a cascade) can forget to. A read takes a marked day from `page_views`
//   and an unmarked one from its rollups; the rollup worker rebuilds marked days.
//
// The triggers take a shared advisory lock per (project, day) until their transaction ends; the
// worker rebuilds a day only under the exclusive lock (`pg_try_advisory_xact_lock`, skipping the
// day when a writer holds it). So a writer either committed before the rebuild read the day, or
// marks the day again after the rebuild deleted its mark: a rollup never misses a page view.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table page_view_rollups (
      project_id text not null references projects (id) on delete cascade,
      day date not null,
      route text not null,
      device text,
      browser_name text,
      release text,
      environment text,
      page_views integer not null,
      rage_clicks integer not null,
      dead_clicks integer not null,
      lcp jsonb,
      inp jsonb,
      cls jsonb,
      fcp jsonb,
      ttfb jsonb
    )`.execute(database);
  await sql`create index page_view_rollups_day on page_view_rollups (project_id, day)`.execute(database);
  await sql`create index page_view_rollups_release on page_view_rollups (project_id, release)`.execute(
    database,
  );
  await sql`
    create table page_view_dirty_days (
      project_id text not null references projects (id) on delete cascade,
      day date not null,
      primary key (project_id, day)
    )`.execute(database);
  await sql`
    create function mark_page_view_days() returns trigger language plpgsql as $$
    begin
      perform pg_advisory_xact_lock_shared(hashtext(touched.project_id), touched.day - date '2000-01-01')
        from (select distinct project_id, day from changed order by 1, 2) touched;
      insert into page_view_dirty_days (project_id, day)
        select distinct project_id, day from changed
        on conflict do nothing;
      return null;
    end $$`.execute(database);
  // One trigger per event: a trigger with transition tables may have only one.
  await sql`
    create trigger page_views_inserted after insert on page_views
      referencing new table as changed for each statement execute function mark_page_view_days()`.execute(
    database,
  );
  await sql`
    create trigger page_views_updated after update on page_views
      referencing new table as changed for each statement execute function mark_page_view_days()`.execute(
    database,
  );
  await sql`
    create trigger page_views_deleted after delete on page_views
      referencing old table as changed for each statement execute function mark_page_view_days()`.execute(
    database,
  );
  // The page views written before this migration: their days are out of date until rebuilt.
  await sql`
    insert into page_view_dirty_days (project_id, day) select distinct project_id, day from page_views`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop trigger page_views_deleted on page_views`.execute(database);
  await sql`drop trigger page_views_updated on page_views`.execute(database);
  await sql`drop trigger page_views_inserted on page_views`.execute(database);
  await sql`drop function mark_page_view_days()`.execute(database);
  await sql`drop table page_view_dirty_days`.execute(database);
  await sql`drop table page_view_rollups`.execute(database);
}
