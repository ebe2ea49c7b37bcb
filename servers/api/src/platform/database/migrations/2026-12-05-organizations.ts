import { type Kysely, sql } from 'kysely';

// Organizations for people: who belongs to which organization with which role, invitations by
// e-mail, API tokens with scopes and an expiry, projects that can be deleted, and the audit trail
// of security-relevant actions. Invitation tokens are stored as SHA-256 only.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await database.schema
    .alterTable('organizations')
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();

  await database.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'text', (column) =>
      column.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (column) =>
      column.notNull().check(sql`role in ('owner', 'admin', 'member', 'viewer')`),
    )
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('organization_members_pkey', ['organization_id', 'user_id'])
    .execute();
  // "Which organizations is this person in": every cookie request asks it.
  await database.schema
    .createIndex('organization_members_user')
    .on('organization_members')
    .column('user_id')
    .execute();

  await database.schema
    .createTable('organization_invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) =>
      column.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull().check(sql`role in ('admin', 'member', 'viewer')`))
    .addColumn('token_hash', 'bytea', (column) => column.notNull().unique())
    .addColumn('invited_by', 'text', (column) => column.references('users.id').onDelete('set null'))
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('accepted_by', 'text', (column) => column.references('users.id').onDelete('set null'))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema
    .createIndex('organization_invitations_organization')
    .on('organization_invitations')
    .columns(['organization_id', 'id'])
    .execute();

  // Null scopes: every scope (the full-access token the first start and `svc create-project`
  // make). Null expiry: never expires.
  await database.schema
    .alterTable('api_tokens')
    .addColumn('scopes', 'jsonb')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_by', 'text', (column) => column.references('users.id').onDelete('set null'))
    .execute();

  // A deleted project: its key, tokens and data are out of reach at once.
  await database.schema.alterTable('projects').addColumn('deleted_at', 'timestamptz').execute();

  await database.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) =>
      column.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('actor_type', 'text', (column) =>
      column.notNull().check(sql`actor_type in ('user', 'api_token', 'system')`),
    )
    .addColumn('actor_id', 'text')
    // Who it was when it happened (an e-mail address, a token's name): kept if the actor goes.
    .addColumn('actor_label', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('details', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  // The audit page: newest first, by organization, optionally by action.
  await database.schema
    .createIndex('audit_log_organization')
    .on('audit_log')
    .columns(['organization_id', 'id desc'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await database.schema.dropTable('audit_log').execute();
  await database.schema.alterTable('projects').dropColumn('deleted_at').execute();
  await database.schema
    .alterTable('api_tokens')
    .dropColumn('created_by')
    .dropColumn('expires_at')
    .dropColumn('scopes')
    .execute();
  await database.schema.dropTable('organization_invitations').execute();
  await database.schema.dropTable('organization_members').execute();
  await database.schema.alterTable('organizations').dropColumn('updated_at').execute();
}
