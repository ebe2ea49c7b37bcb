import { randomBytes } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import { createDatabase } from './database.ts';
import { isUniqueViolation } from './errors.ts';
import { MIGRATIONS, migrateToLatest } from './migrate.ts';
import { PGLITE_SETTINGS } from './pglite-instance.ts';
import { preparedStatement } from './prepared-statement.ts';

describe.each(ENGINES)('database on %s', (engine) => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await openTestDatabase(engine);
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  async function insertProject(id: string) {
    await handle.database
      .insertInto('organizations')
      .values({ id: `org_${id}`, name: 'Acme' })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    await handle.database
      .insertInto('projects')
      .values({
        id: `proj_${id}`,
        organization_id: `org_${id}`,
        name: 'Web app',
        project_key: `pk_${id}`,
        previous_project_key: null,
        previous_project_key_expires_at: null,
        wrapped_data_key: new Uint8Array([1, 2, 3, 250]),
        settings: JSON.stringify({ webrtc: { enabled: true }, allowedOrigins: ['https://app.example.com'] }),
      })
      .execute();
  }

  it('has every migration applied, and migrating again applies nothing', async () => {
    const tables = await handle.database.introspection.getTables();
    expect(tables.map((table) => table.name).sort()).toEqual(
      [
        'api_tokens',
        'audit_log',
        'call_findings',
        'call_items',
        'processing_jobs',
        'call_progress',
        'call_series_pieces',
        'call_tracks',
        'calls',
        'chunks',
        'cluster_fingerprints',
        'cluster_occurrences',
        'deliveries',
        'delivery_attempts',
        'issue_clusters',
        'notification_channels',
        'notification_events',
        'notification_rules',
        'organization_invitations',
        'organization_members',
        'organizations',
        'projects',
        'rule_throttles',
        'session_signals',
        'sessions',
        'share_links',
        'users',
        'email_verification_tokens',
        'user_sessions',
        'password_reset_tokens',
        'user_mfa',
        'mfa_recovery_codes',
        'mfa_challenges',
        'magic_link_tokens',
        'insight_jobs',
        'insight_progress',
        'page_views',
        'click_facts',
        'funnels',
        'insight_alerts',
        'sourcemap_files',
        'spans',
        'log_records',
        'asset_fetches',
        'session_assets',
        'asset_jobs',
        'asset_progress',
        'ai_jobs',
        'ai_anomalies',
        'ai_digests',
        'ai_settings',
        'ai_usage',
        'ai_feedback',
        'deployment_license',
        'billing_accounts',
        'billing_events',
        'usage_daily',
        'usage_caps',
        'usage_thresholds',
        'leak_radar_reports',
        'usage_reports',
        'blob_deletions',
        'erasure_requests',
        'dsar_requests',
        'sso_connections',
        'sso_domains',
        'passkeys',
        'passkey_challenges',
        'sso_identities',
        'sso_oidc_flows',
        'saml_requests',
        'saml_assertions',
        'oauth_identities',
        'oauth_flows',
        'oauth_created_accounts',
      ].sort(),
    );
    expect(await migrateToLatest(handle.database)).toEqual([]);
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
      handle.database,
    );
    expect(applied.rows.map((row) => row.name)).toEqual(Object.keys(MIGRATIONS));
  });

  it('leaves room on session pages for HOT updates; chunk -> session is kept by ingest, not a key', async () => {
    const options = await sql<{ reloptions: string[] | null }>`
      select reloptions from pg_class where relname = 'sessions'
    `.execute(handle.database);
    expect(options.rows[0]?.reloptions).toEqual(['fillfactor=70']);
    const constraints = await sql<{ name: string }>`
      select conname as name from pg_constraint
      where conrelid in ('chunks'::regclass, 'session_signals'::regclass) and contype = 'f'
    `.execute(handle.database);
    expect(constraints.rows.map((row) => row.name)).toEqual(['session_signals_chunk']);
  });

  it('runs a statement marked with preparedStatement() as a named one, prepared once', async () => {
    const single =
      engine === 'postgres' ? await createDatabase({ engine, url: handle.location, poolSize: 1 }) : handle;
    const run = <Row>(text: string, parameters: unknown[]) =>
      single.database.executeQuery<Row>(CompiledQuery.raw(text, parameters));
    try {
      const text = `${preparedStatement('svc_test_prepared')}
        select $1::int + 1 as value, $2::bigint as big, $3::timestamptz as at, $4::bytea as bytes,
          $5::text as nothing, 1 / $1::int as inverse`;
      const at = new Date('2026-11-22T10:00:00.123Z');
      for (const value of [1, 41]) {
        const { rows } = await run<Record<string, unknown>>(text, [
          value,
          2 ** 40,
          at,
          new Uint8Array([0, 255]),
          null,
        ]);
        const { bytes, ...row } = rows[0] ?? {};
        expect(row).toEqual({
          value: value + 1,
          big: 2 ** 40,
          at,
          nothing: null,
          inverse: Math.trunc(1 / value),
        });
        // pg gives a Buffer, PGlite a Uint8Array: the bytes are the same.
        expect([...(bytes as Uint8Array)]).toEqual([0, 255]);
      }
      // One name stands for one text.
      await expect(run(`${preparedStatement('svc_test_prepared')}\nselect 2`, [])).rejects.toThrow();
      // A failing execution reports the database's error and leaves the statement usable.
      await expect(run(text, [0, 1, at, new Uint8Array(), null])).rejects.toThrow(/division by zero/);
      await single.database.transaction().execute(async (transaction) => {
        const { rows } = await transaction.executeQuery<{ value: number }>(
          CompiledQuery.raw(text, [2, 1, at, new Uint8Array(), 'x']),
        );
        expect(rows[0]?.value).toBe(3);
      });
      // One connection (a pool of one on PostgreSQL): the statement was prepared there once.
      const prepared = await sql<{ name: string }>`
        select name from pg_prepared_statements where name = 'svc_test_prepared'
      `.execute(single.database);
      expect(prepared.rows).toEqual([{ name: 'svc_test_prepared' }]);
      // Writes through a prepared statement count their rows like any other statement.
      await insertProject('prepared');
      const renamed = await run(
        `${preparedStatement('svc_test_rename')}\nupdate projects set name = $1 where id = $2`,
        ['Renamed', 'proj_prepared'],
      );
      expect(renamed.numAffectedRows).toBe(1n);
    } finally {
      if (single !== handle) await single.close();
    }
    expect(() => preparedStatement('Robert; drop table')).toThrow(TypeError);
  });

  it('returns the same JavaScript types on both engines', async () => {
    await insertProject('types');
    const startedAt = new Date('2026-11-21T10:00:00.123Z');
    await handle.database
      .insertInto('sessions')
      .values({
        project_id: 'proj_types',
        id: 'ses_types',
        visit_id: null,
        started_at: startedAt,
        last_event_at: startedAt,
        duration_ms: 3_600_000_123,
        stored_bytes: 2 ** 40,
        url: 'https://app.example.com/',
        referrer: null,
        user_agent: null,
        browser_name: 'Chrome',
        browser_version: '142',
        os_name: 'Linux',
        os_version: null,
        device: 'desktop',
        viewport_width: 1280,
        viewport_height: 720,
        release: null,
        environment: null,
        user_id: null,
        user_email: null,
        user_name: null,
        recording_mode: 'always',
        sdk_name: '@svc/browser-sdk',
        sdk_version: '0.1.0',
        level: null,
      })
      .execute();
    const session = await handle.database
      .selectFrom('sessions')
      .selectAll()
      .where('project_id', '=', 'proj_types')
      .executeTakeFirstOrThrow();
    expect(session.started_at).toBeInstanceOf(Date);
    expect(session.started_at.toISOString()).toBe('2026-11-21T10:00:00.123Z');
    expect(session.duration_ms).toBe(3_600_000_123);
    expect(session.stored_bytes).toBe(2 ** 40);
    expect(session.chunk_count).toBe(0);
    expect(session.max_seq).toBe(-1);

    const project = await handle.database
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', 'proj_types')
      .executeTakeFirstOrThrow();
    expect(project.wrapped_data_key).toBeInstanceOf(Uint8Array);
    expect([...project.wrapped_data_key]).toEqual([1, 2, 3, 250]);
    expect(project.settings).toEqual({
      webrtc: { enabled: true },
      allowedOrigins: ['https://app.example.com'],
    });
  });

  it('rolls a failed transaction back completely', async () => {
    await expect(
      handle.database.transaction().execute(async (transaction) => {
        await transaction.insertInto('organizations').values({ id: 'org_rollback', name: 'Gone' }).execute();
        await transaction
          .insertInto('organizations')
          .values({ id: 'org_rollback', name: 'Duplicate' })
          .execute();
      }),
    ).rejects.toSatisfy(isUniqueViolation);
    const rows = await handle.database
      .selectFrom('organizations')
      .where('id', '=', 'org_rollback')
      .selectAll()
      .execute();
    expect(rows).toEqual([]);
  });

  it('reports unique violations the same way on both engines', async () => {
    await insertProject('unique');
    const error = await insertProject('unique').catch((caught: unknown) => caught);
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(new Error('other'))).toBe(false);
  });

  it('serialises concurrent read-modify-write transactions without losing updates', async () => {
    await insertProject('counter');
    const sessionId = `ses_${randomBytes(4).toString('hex')}`;
    const now = new Date();
    await handle.database
      .insertInto('sessions')
      .values({
        project_id: 'proj_counter',
        id: sessionId,
        visit_id: null,
        started_at: now,
        last_event_at: now,
        url: null,
        referrer: null,
        user_agent: null,
        browser_name: null,
        browser_version: null,
        os_name: null,
        os_version: null,
        device: null,
        viewport_width: null,
        viewport_height: null,
        release: null,
        environment: null,
        user_id: null,
        user_email: null,
        user_name: null,
        recording_mode: null,
        sdk_name: null,
        sdk_version: null,
        level: null,
      })
      .execute();
    await Promise.all(
      Array.from({ length: 25 }, () =>
        handle.database.transaction().execute(async (transaction) => {
          const row = await transaction
            .selectFrom('sessions')
            .select('chunk_count')
            .where('project_id', '=', 'proj_counter')
            .where('id', '=', sessionId)
            .forUpdate()
            .executeTakeFirstOrThrow();
          await transaction
            .updateTable('sessions')
            .set({ chunk_count: row.chunk_count + 1 })
            .where('project_id', '=', 'proj_counter')
            .where('id', '=', sessionId)
            .execute();
        }),
      ),
    );
    const row = await handle.database
      .selectFrom('sessions')
      .select('chunk_count')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row.chunk_count).toBe(25);
  });

  it('answers check() while open', async () => {
    await expect(handle.check()).resolves.toBeUndefined();
  });
});

describe('database on postgres: several server processes', () => {
  it('migrates an empty database from several connections at once, exactly once', async () => {
    const fresh = await openTestDatabase('postgres');
    try {
      // Back to an empty database: every table of every migration, whatever migrations exist.
      await sql`drop schema public cascade`.execute(fresh.database);
      await sql`create schema public`.execute(fresh.database);
      const handles = await Promise.all(
        Array.from({ length: 4 }, () =>
          createDatabase({ engine: 'postgres', url: fresh.location, poolSize: 2 }),
        ),
      );
      const applied = await Promise.all(handles.map((each) => migrateToLatest(each.database)));
      expect(applied.flat()).toEqual(Object.keys(MIGRATIONS));
      await Promise.all(handles.map((each) => each.close()));
    } finally {
      await fresh.dispose();
    }
  });
});

describe('database on postgres: lost connections', () => {
  it('outlives PostgreSQL closing its idle connections, and close() waits for every socket', async () => {
    const fresh = await openTestDatabase('postgres');
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const backends = async () =>
        (
          await sql<{ pid: number }>`
            select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()
          `.execute(fresh.database)
        ).rows;
      // Two connections in the pool, then one of them asks the server to end the other.
      await Promise.all([
        sql`select pg_sleep(0.05)`.execute(fresh.database),
        sql`select 1`.execute(fresh.database),
      ]);
      const [idle] = await backends();
      expect(idle).toBeDefined();
      await sql`select pg_terminate_backend(${idle?.pid})`.execute(fresh.database);
      await expect
        .poll(() => warnings.join('\n'))
        .toMatch(/PostgreSQL closed an idle connection: terminating/);
      // The pool opens new connections as needed.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(fresh.database);
      expect(rows).toEqual([{ one: 1 }]);
      await fresh.close();
      // Once close() resolved, nothing of this pool is connected any more.
      const admin = new pg.Client({ connectionString: fresh.location });
      await admin.connect();
      const left = await admin.query(
        'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      await admin.end();
      expect(left.rows[0].n).toBe(0);
    } finally {
      process.off('warning', onWarning);
      await fresh.dispose();
    }
  });
});

describe('database on pglite: closing', () => {
  it('fails check() after close', async () => {
    const fresh = await openTestDatabase('pglite');
    await fresh.close();
    await expect(fresh.check()).rejects.toThrow();
    await fresh.dispose();
  });
});

describe('database on pglite: settings', () => {
  it('runs with a 16 MB buffer pool and keeps the settings initdb wrote (UTC, C locale)', async () => {
    const fresh = await openTestDatabase('pglite');
    try {
      const show = async (setting: string) =>
        (await sql<{ value: string }>`select current_setting(${setting}) as value`.execute(fresh.database))
          .rows[0]?.value;
      expect(PGLITE_SETTINGS).toContain('shared_buffers=16MB');
      expect(await show('shared_buffers')).toBe('16MB');
      expect(await show('timezone')).toBe('UTC');
      expect(await show('lc_messages')).toBe('C');
    } finally {
      await fresh.dispose();
    }
  });
});
