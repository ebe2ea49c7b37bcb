import { type Kysely, sql } from 'kysely';

// The optional model of issue 24 (servers/api/README.md, The model):
// - `ai_settings`: per organization, whether AI is on (off until an admin turns it on), its
//   monthly token cap and which features may use the model.
// - `ai_usage`: tokens counted per organization, month, project and feature (one row each,
//   incremented by every call to the model).
// - `ai_feedback`: ratings of AI answers.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table ai_settings (
      organization_id text primary key references organizations (id) on delete cascade,
      enabled boolean not null default false,
      monthly_token_cap bigint,
      features jsonb not null,
      updated_by text,
      updated_at timestamptz not null default now()
    )`.execute(database);
  await sql`
    create table ai_usage (
      organization_id text not null references organizations (id) on delete cascade,
      month date not null,
      project_id text not null,
      feature text not null,
      requests integer not null default 0,
      input_tokens bigint not null default 0,
      output_tokens bigint not null default 0,
      updated_at timestamptz not null default now(),
      primary key (organization_id, month, project_id, feature)
    )`.execute(database);
  await sql`
    create table ai_feedback (
      project_id text not null references projects (id) on delete cascade,
      id text not null,
      feature text not null,
      subject_id text not null,
      rating text not null check (rating in ('up', 'down')),
      comment text,
      model text,
      created_by text not null,
      created_at timestamptz not null default now(),
      primary key (project_id, id)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table ai_feedback`.execute(database);
  await sql`drop table ai_usage`.execute(database);
  await sql`drop table ai_settings`.execute(database);
}
