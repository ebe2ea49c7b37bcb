import { type Kysely, sql } from 'kysely';

// `call_jobs` becomes `processing_jobs`: the job after ingest runs every step of a session's
// processing (its calls, its errors and findings into issue clusters, its custom events against
// notification rules), not only its calls. The table, its key and its index are renamed; rows,
// columns and their meaning stay (one row per session with something to process).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table call_jobs rename to processing_jobs`.execute(database);
  await sql`alter table processing_jobs rename constraint call_jobs_pkey to processing_jobs_pkey`.execute(
    database,
  );
  await sql`alter index call_jobs_due rename to processing_jobs_due`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter index processing_jobs_due rename to call_jobs_due`.execute(database);
  await sql`alter table processing_jobs rename constraint processing_jobs_pkey to call_jobs_pkey`.execute(
    database,
  );
  await sql`alter table processing_jobs rename to call_jobs`.execute(database);
}
