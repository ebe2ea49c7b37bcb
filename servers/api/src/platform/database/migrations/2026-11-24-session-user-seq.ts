import { type Kysely, sql } from 'kysely';

// The session's user is the one of its last `identify` event in sequence order, not in order of
// arrival (chunks may arrive out of order): `user_seq` is the seq of the chunk whose identify set
// it, and an identify from an earlier seq no longer replaces it. Null while the user comes from
// `meta.user` or is unknown. Existing rows keep the user they have.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table sessions add column user_seq integer`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter table sessions drop column user_seq`.execute(database);
}
