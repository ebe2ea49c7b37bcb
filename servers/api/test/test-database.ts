import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../src/platform/database/database.ts';
import { migrateToLatest } from '../src/platform/database/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test run's PostgreSQL server (its `postgres` database): global-setup.ts. */
    postgresUrl: string;
    /** A migrated PGlite data directory; tests open copies of it: pglite-template.ts. */
    pgliteTemplateDirectory: string;
  }
}

export type Engine = 'pglite' | 'postgres';

/** Both engines: run a suite with `describe.each(ENGINES)`. */
export const ENGINES: readonly Engine[] = ['pglite', 'postgres'];

/** A fresh, migrated, empty database of the engine, and how to throw it away. */
export interface TestDatabase extends DatabaseHandle {
  /** Connection URL (PostgreSQL) or data directory (PGlite). */
  location: string;
  dispose(): Promise<void>;
}

/**
 * Puts a copy of the run's migrated PGlite template where a server or the CLI started with
 * `SVC_DATA_DIR=dataDirectory` opens its embedded store (`<dataDirectory>/pglite`), and resolves
 * with `dataDirectory`. The store is empty and at the latest schema, as after a first start's
 * initdb and migrations but before anything was written (no first project, no master key): the
 * server's start still runs the migrator, which finds nothing to do. Creating a PGlite from scratch
 * and migrating it takes 5–20 s on a busy 2-core machine; the copy well under one. Tests of
 * creating or migrating the store itself start from an empty directory instead.
 *
 * @example
 * ```ts
 * const directory = await withMigratedStore(await scratch.make());
 * const server = await startServer({ SVC_DATA_DIR: directory, PORT: '0' });
 * ```
 */
export async function withMigratedStore(dataDirectory: string): Promise<string> {
  await cp(inject('pgliteTemplateDirectory'), join(dataDirectory, 'pglite'), { recursive: true });
  return dataDirectory;
}

/**
 * Opens a fresh database: for PostgreSQL a new database on the run's server, migrated; for
 * PGlite a copy of the run's migrated template directory (opening a copy takes ~0.3 s, creating
 * a PGlite from scratch several seconds).
 */
export async function openTestDatabase(engine: Engine): Promise<TestDatabase> {
  if (engine === 'pglite') {
    const root = await mkdtemp(join(tmpdir(), 'svc-pglite-'));
    const directory = join(root, 'pglite');
    await cp(inject('pgliteTemplateDirectory'), directory, { recursive: true });
    const handle = await createDatabase({ engine: 'pglite', directory });
    return {
      ...handle,
      location: directory,
      async dispose() {
        await handle.close();
        await rm(root, { recursive: true, force: true });
      },
    };
  }
  const serverUrl = inject('postgresUrl');
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await createDatabase({ engine: 'postgres', url: url.toString(), poolSize: 10 });
  await migrateToLatest(handle.database);
  return {
    ...handle,
    location: url.toString(),
    async dispose() {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}
