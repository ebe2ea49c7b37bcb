import { type Kysely, sql } from 'kysely';

// Magic links: one-time sign-in links sent by e-mail (`POST /auth/magic-link`). The token is
// stored as SHA-256 only, works once, until it expires, and only for the address it was sent to.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await database.schema
    .createTable('magic_link_tokens')
    .addColumn('token_hash', 'bytea', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema
    .createIndex('magic_link_tokens_user')
    .on('magic_link_tokens')
    .column('user_id')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await database.schema.dropTable('magic_link_tokens').execute();
}
