import { type Kysely, sql } from 'kysely';

// Accounts: people (users), the one-time links that verify their e-mail address, and their
// signed-in dashboard sessions. Secrets (session ids, link tokens) are stored as SHA-256 only.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await database.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    // As the person typed it; unique whatever its case (`users_email`).
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('name', 'text')
    // argon2id, PHC string format (parameters inside, so they can change and be re-hashed).
    .addColumn('password_hash', 'text', (column) => column.notNull())
    .addColumn('email_verified_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index users_email on users (lower(email))`.execute(database);

  await database.schema
    .createTable('email_verification_tokens')
    .addColumn('token_hash', 'bytea', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    // The address the link verifies: a link sent before an address change verifies nothing.
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema
    .createIndex('email_verification_tokens_user')
    .on('email_verification_tokens')
    .column('user_id')
    .execute();

  await database.schema
    .createTable('user_sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    // SHA-256 of the cookie's secret.
    .addColumn('token_hash', 'bytea', (column) => column.notNull().unique())
    .addColumn('csrf_token', 'text', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    // The absolute end: created_at + the absolute lifetime, whatever the activity.
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await database.schema.createIndex('user_sessions_user').on('user_sessions').column('user_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await database.schema.dropTable('user_sessions').execute();
  await database.schema.dropTable('email_verification_tokens').execute();
  await database.schema.dropTable('users').execute();
}
