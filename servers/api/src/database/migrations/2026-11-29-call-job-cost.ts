import { type Kysely, sql } from 'kysely';

// What a live call job costs, whatever the store:
//
// - `call_progress.progress` becomes text. Nothing queries inside it; as jsonb every job paid for
//   parsing it into jsonb when writing and printing it back when reading (on PGlite ~0.3 ms a job
//   for 4.5 KB of JSON), where the job parses and writes the JSON text itself anyway.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table call_progress alter column progress type text using progress::text`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter table call_progress alter column progress type jsonb using progress::jsonb`.execute(
    database,
  );
}
