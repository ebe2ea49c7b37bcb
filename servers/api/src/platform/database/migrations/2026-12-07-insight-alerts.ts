import { type Kysely, sql } from 'kysely';

// Regression alerts of insights (servers/api/README.md, Insights: Releases and regressions): one
// row per regression that fired, so each fires once, whichever server process checks first.
//
// - `type`: `release.regression` or `vitals.regression`.
// - `alert_key`: what fires once, as a JSON array: `[environment, release, metric]` for a
//   release, `[route, metric, period]` for a route's vital. The primary key
//   makes a second insert of the same alert a no-op (`on conflict do nothing`): of two processes
//   checking at once, one inserts and notifies, the other waits for its commit and does nothing.
// - `details`: the numbers that made it fire (the webhook's `data.regression`).
// - `event_id`: the notification event written with it (null when no rule matched).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table insight_alerts (
      project_id text not null references projects (id) on delete cascade,
      type text not null,
      alert_key text not null,
      metric text not null,
      environment text,
      release text,
      previous_release text,
      route text,
      period text,
      details jsonb not null,
      event_id text,
      created_at timestamptz not null default now(),
      primary key (project_id, type, alert_key)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table insight_alerts`.execute(database);
}
