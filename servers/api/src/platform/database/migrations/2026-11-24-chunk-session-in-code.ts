import { type Kysely, sql } from 'kysely';

// A chunk row always has its session: ingest writes both in one transaction (`recordChunks`
// upserts the session of every chunk it inserts), and nothing deletes sessions without their
// chunks. The foreign key that checked this cost as much as the rest of the index write: at
// commit Postgres runs one `select … for key share` per chunk, which locks (and writes WAL for)
// the session row the same transaction has just written. A micro-benchmark of group-committed
// batches of 32 chunks on PGlite measured 26 ms per batch with it and 12-16 ms without. The rule
// is now kept by the code and checked by tests (ingest, group commit, the kill -9 durability
// test); `session_signals -> chunks` keeps its key (signals are rare, and cost little).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table chunks drop constraint chunks_session`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`
    alter table chunks add constraint chunks_session foreign key (project_id, session_id)
    references sessions (project_id, id) deferrable initially deferred
  `.execute(database);
}
