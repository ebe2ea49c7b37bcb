import { type Kysely, sql } from 'kysely';

// Ingest indexes a batch of chunks in one transaction (group commit): it inserts the chunk rows
// first (`on conflict do nothing`, which says which chunks are new) and only then merges the new
// ones into their sessions. The chunk -> session foreign key is therefore checked at commit.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table chunks alter constraint chunks_session deferrable initially deferred`.execute(
    database,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter table chunks alter constraint chunks_session not deferrable`.execute(database);
}
