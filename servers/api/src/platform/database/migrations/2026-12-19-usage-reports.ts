import { type Kysely, sql } from 'kysely';

// Usage reported to the billing provider (issue 25; servers/api/README.md, Usage and caps): one
// row per organization, UTC day and metric once its total was sent (or skipped: no customer), so a
// day is reported once, after it ended, whichever process runs the reporter.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table usage_reports (
      organization_id text not null references organizations (id) on delete cascade,
      day date not null,
      metric text not null,
      quantity bigint not null,
      status text not null check (status in ('reported', 'skipped')),
      reason text,
      reported_at timestamptz not null default now(),
      primary key (organization_id, day, metric)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table usage_reports`.execute(database);
}
