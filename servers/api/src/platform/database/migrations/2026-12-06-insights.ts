import { type Kysely, sql } from 'kysely';

// Insights (servers/api/README.md, Insights): the facts a session's events yield, in tables made
// for the queries of the insights endpoints (per project, route and day), and their job.
//
// - `insight_jobs`: the facts job's queue, one row per session with chunks to derive facts from,
//   queued in ingest's statement like `processing_jobs`.
// - `insight_progress`: per session, where the facts job stands (its state as JSON text, the
//   chunks it consumed): each job goes on from it with the new chunks only.
// - `page_views`: one row per page view (route, time on page, scroll depth, clicks, web vitals,
//   and the session's device, browser, release and environment to filter by).
// - `click_facts`: one row per click, per rage click (a burst) and per dead click, with the
//   target's selector and positions.
// - `funnels`: saved funnel definitions.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table insight_jobs (
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
  await sql`create index insight_jobs_due on insight_jobs (due_at)`.execute(database);

  await sql`
    create table insight_progress (
      project_id text not null,
      session_id text not null,
      version integer not null,
      consumed_seq integer not null,
      state text not null,
      updated_at timestamptz not null default now(),
      primary key (project_id, session_id)
    )`.execute(database);

  await sql`
    create table page_views (
      project_id text not null,
      session_id text not null,
      view_index integer not null,
      started_at timestamptz not null,
      day date not null,
      ended_at timestamptz not null,
      duration_ms integer not null,
      route text not null,
      viewport_width integer,
      breakpoint text,
      page_height integer,
      scroll_depth integer,
      clicks integer not null default 0,
      rage_clicks integer not null default 0,
      dead_clicks integer not null default 0,
      lcp double precision,
      inp double precision,
      cls double precision,
      fcp double precision,
      ttfb double precision,
      device text,
      browser_name text,
      release text,
      environment text,
      primary key (project_id, session_id, view_index)
    )`.execute(database);
  await sql`create index page_views_day on page_views (project_id, day)`.execute(database);
  await sql`create index page_views_route on page_views (project_id, route, day)`.execute(database);

  await sql`
    create table click_facts (
      project_id text not null,
      session_id text not null,
      kind text not null,
      ordinal integer not null,
      view_index integer not null,
      t timestamptz not null,
      day date not null,
      route text not null,
      breakpoint text,
      selector text,
      page_x integer not null,
      page_y integer not null,
      element_x real,
      element_y real,
      count integer not null default 1,
      primary key (project_id, session_id, kind, ordinal)
    )`.execute(database);
  await sql`create index click_facts_route on click_facts (project_id, route, kind, day)`.execute(database);

  await sql`
    create table funnels (
      id text primary key,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      steps jsonb not null,
      window_ms bigint not null,
      count_by text not null,
      created_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(database);
  await sql`create index funnels_project on funnels (project_id, created_at)`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  for (const table of ['funnels', 'click_facts', 'page_views', 'insight_progress', 'insight_jobs'])
    await sql`drop table ${sql.table(table)}`.execute(database);
}
