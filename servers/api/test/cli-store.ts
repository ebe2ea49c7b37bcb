import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import { createDatabase } from '../src/platform/database/database.ts';
import type { Database } from '../src/platform/database/schema.ts';
import { type Engine, openTestDatabase } from './test-database.ts';

/** A migrated store for CLI tests, the settings the CLI reaches it by, and a way to look inside. */
export interface CliStore {
  /** A scratch directory (`SVC_DATA_DIR` on PostgreSQL; files a test writes). */
  files: string;
  environment: Record<string, string>;
  /** Opens the store (the CLI must not be running: PGlite is one process) and runs `look` on it. */
  look<Result>(look: (database: Kysely<Database>) => Promise<Result>): Promise<Result>;
}

/**
 * A migrated store of the engine, closed, for the CLI to open as an operator's run does (a PGlite
 * data directory, or `DATABASE_URL`); what it needs removed is pushed onto `cleanups`.
 *
 * @example
 * ```ts
 * const { environment, look } = await cliStore('pglite', cleanups);
 * await runCli(['create-project', '--name', 'Web'], environment, captureIo());
 * await look((database) => database.selectFrom('projects').selectAll().execute());
 * ```
 */
export async function cliStore(engine: Engine, cleanups: Array<() => Promise<void>>): Promise<CliStore> {
  const files = await mkdtemp(join(tmpdir(), 'svc-cli-'));
  cleanups.push(() => rm(files, { recursive: true, force: true }));
  const database = await openTestDatabase(engine);
  if (engine === 'pglite') {
    // The CLI opens `<SVC_DATA_DIR>/pglite`: the test copy is exactly that, closed first (one process).
    const root = dirname(database.location);
    await database.close();
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    return {
      files,
      environment: { SVC_DATA_DIR: root },
      async look(look) {
        const handle = await createDatabase({ engine: 'pglite', directory: database.location });
        try {
          return await look(handle.database);
        } finally {
          await handle.close();
        }
      },
    };
  }
  cleanups.push(() => database.dispose());
  return {
    files,
    environment: { SVC_DATA_DIR: files, DATABASE_URL: database.location },
    look: (look) => look(database.database),
  };
}
