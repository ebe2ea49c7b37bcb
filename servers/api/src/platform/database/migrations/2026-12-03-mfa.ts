import { type Kysely, sql } from 'kysely';

// Two-factor sign-in (TOTP): each person's sealed TOTP secret, their single-use recovery codes
// (SHA-256 only) and the short-lived challenges between a password and a code at sign-in
// (SHA-256 only).

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await database.schema
    .createTable('user_mfa')
    .addColumn('user_id', 'text', (column) => column.primaryKey().references('users.id').onDelete('cascade'))
    // The person's own data key, wrapped by the master key (envelope encryption).
    .addColumn('wrapped_key', 'bytea', (column) => column.notNull())
    // The TOTP secret (base32), sealed with that data key (AES-256-GCM), bound to the user.
    .addColumn('sealed_secret', 'bytea', (column) => column.notNull())
    // Null while enrolled but not confirmed yet (MFA is off).
    .addColumn('enabled_at', 'timestamptz')
    // The last accepted TOTP time step: a code is accepted once (steps only go forward).
    .addColumn('last_step', 'bigint')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();

  await database.schema
    .createTable('mfa_recovery_codes')
    .addColumn('code_hash', 'bytea', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema
    .createIndex('mfa_recovery_codes_user')
    .on('mfa_recovery_codes')
    .column('user_id')
    .execute();

  await database.schema
    .createTable('mfa_challenges')
    .addColumn('token_hash', 'bytea', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema.createIndex('mfa_challenges_user').on('mfa_challenges').column('user_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await database.schema.dropTable('mfa_challenges').execute();
  await database.schema.dropTable('mfa_recovery_codes').execute();
  await database.schema.dropTable('user_mfa').execute();
}
