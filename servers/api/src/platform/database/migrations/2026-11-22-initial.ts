import { type Kysely, sql } from 'kysely';

// Migrations are typed Kysely<any> and never import application code: they must keep working
// when the application's types have moved on.
// biome-ignore lint/suspicious/noExplicitAny: see above
type AnyDatabase = Kysely<any>;

export async function up(database: AnyDatabase): Promise<void> {
  await database.schema
    .createTable('organizations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();

  await database.schema
    .createTable('projects')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    // Project keys are public (they ship in pages) and only allow ingest.
    .addColumn('project_key', 'text', (column) => column.notNull().unique())
    // After a rotation the previous key keeps working until it expires, so deployed pages survive.
    .addColumn('previous_project_key', 'text', (column) => column.unique())
    .addColumn('previous_project_key_expires_at', 'timestamptz')
    // The project's data key, wrapped (AES-256-GCM) by the master key: chunks are encrypted with it.
    .addColumn('wrapped_data_key', 'bytea', (column) => column.notNull())
    .addColumn('settings', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .execute();
  await database.schema
    .createIndex('projects_organization')
    .on('projects')
    .column('organization_id')
    .execute();

  await database.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    // SHA-256 of the token: tokens are 256-bit random secrets, so a fast hash is enough.
    .addColumn('token_hash', 'bytea', (column) => column.notNull().unique())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await database.schema.createIndex('api_tokens_project').on('api_tokens').column('project_id').execute();

  await database.schema
    .createTable('sessions')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('id', 'text', (column) => column.notNull())
    .addColumn('visit_id', 'text')
    .addColumn('started_at', 'timestamptz', (column) => column.notNull())
    .addColumn('last_event_at', 'timestamptz', (column) => column.notNull())
    .addColumn('duration_ms', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('url', 'text')
    .addColumn('referrer', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('browser_name', 'text')
    .addColumn('browser_version', 'text')
    .addColumn('os_name', 'text')
    .addColumn('os_version', 'text')
    .addColumn('device', 'text')
    .addColumn('viewport_width', 'integer')
    .addColumn('viewport_height', 'integer')
    .addColumn('release', 'text')
    .addColumn('environment', 'text')
    .addColumn('user_id', 'text')
    .addColumn('user_email', 'text')
    .addColumn('user_name', 'text')
    .addColumn('recording_mode', 'text')
    .addColumn('sdk_name', 'text')
    .addColumn('sdk_version', 'text')
    .addColumn('error_count', 'integer', (column) => column.notNull().defaultTo(0))
    // The highest severity among the session's signals (critical > high > medium > low > info).
    .addColumn('level', 'text')
    .addColumn('chunk_count', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('max_seq', 'integer', (column) => column.notNull().defaultTo(-1))
    .addColumn('stored_bytes', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('sessions_pkey', ['project_id', 'id'])
    .execute();
  // Keyset pagination, newest first: (started_at, id) descending within a project.
  await database.schema
    .createIndex('sessions_project_started')
    .on('sessions')
    .columns(['project_id', 'started_at desc', 'id desc'])
    .execute();
  await database.schema
    .createIndex('sessions_project_visit')
    .on('sessions')
    .columns(['project_id', 'visit_id'])
    .execute();
  await database.schema
    .createIndex('sessions_project_user')
    .on('sessions')
    .columns(['project_id', 'user_id'])
    .execute();

  await database.schema
    .createTable('chunks')
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('session_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('blob_key', 'text', (column) => column.notNull())
    // SHA-256 of the inflated chunk: a re-sent (session, seq) with the same bytes is a duplicate;
    // with different bytes it is a conflict.
    .addColumn('content_sha256', 'bytea', (column) => column.notNull())
    .addColumn('encoding', 'text', (column) => column.notNull())
    .addColumn('received_bytes', 'integer', (column) => column.notNull())
    .addColumn('inflated_bytes', 'integer', (column) => column.notNull())
    .addColumn('stored_bytes', 'integer', (column) => column.notNull())
    .addColumn('event_count', 'integer', (column) => column.notNull())
    .addColumn('first_event_at', 'timestamptz')
    .addColumn('last_event_at', 'timestamptz')
    .addColumn('sent_at', 'timestamptz', (column) => column.notNull())
    .addColumn('received_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('chunks_pkey', ['project_id', 'session_id', 'seq'])
    .addForeignKeyConstraint('chunks_session', ['project_id', 'session_id'], 'sessions', ['project_id', 'id'])
    .execute();

  // What a session signals, indexed at ingest from its events: errors, custom events with a
  // severity, SDK gaps and recording triggers (and, later, detector findings). The session's
  // issues, its gaps and its `level` come from here.
  await database.schema
    .createTable('session_signals')
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('session_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'integer', (column) => column.notNull())
    // Position of the event in its chunk's events array.
    .addColumn('event_index', 'integer', (column) => column.notNull())
    .addColumn('t', 'timestamptz', (column) => column.notNull())
    // 'error' | 'custom' | 'gap' | 'trigger'
    .addColumn('kind', 'text', (column) => column.notNull())
    // critical | high | medium | low | info
    .addColumn('severity', 'text', (column) => column.notNull())
    // error name / custom event name / gap reason / trigger name
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('message', 'text')
    .addColumn('details', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
    .addPrimaryKeyConstraint('session_signals_pkey', ['project_id', 'session_id', 'seq', 'event_index'])
    .addForeignKeyConstraint('session_signals_chunk', ['project_id', 'session_id', 'seq'], 'chunks', [
      'project_id',
      'session_id',
      'seq',
    ])
    .execute();
  await database.schema
    .createIndex('session_signals_project_kind_t')
    .on('session_signals')
    .columns(['project_id', 'kind', 't'])
    .execute();

  await database.schema
    .createTable('share_links')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('session_id', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'bytea', (column) => column.notNull().unique())
    .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addForeignKeyConstraint('share_links_session', ['project_id', 'session_id'], 'sessions', [
      'project_id',
      'id',
    ])
    .execute();
}

export async function down(database: AnyDatabase): Promise<void> {
  for (const table of [
    'share_links',
    'session_signals',
    'chunks',
    'sessions',
    'api_tokens',
    'projects',
    'organizations',
  ]) {
    await database.schema.dropTable(table).execute();
  }
}
