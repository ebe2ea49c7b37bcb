import { type Kysely, sql } from 'kysely';

// Password reset: the one-time links of "forgot my password". Like the verification links, the
// token is stored as SHA-256 only, works once, until it expires, and only for the address it was
// sent to.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await database.schema
    .createTable('password_reset_tokens')
    .addColumn('token_hash', 'bytea', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    // The address the link was sent to: after an address change the link resets nothing.
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema
    .createIndex('password_reset_tokens_user')
    .on('password_reset_tokens')
    .column('user_id')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await database.schema.dropTable('password_reset_tokens').execute();
}
