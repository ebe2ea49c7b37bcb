import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../src/platform/database/database.ts';
import { migrateToLatest } from '../src/platform/database/migrate.ts';
import { startTestPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test run's PostgreSQL server (its `postgres` database). */
    postgresUrl: string;
    /** A migrated PGlite data directory; tests open copies of it (a fresh PGlite takes seconds). */
    pgliteTemplateDirectory: string;
  }
}

/** Starts one PostgreSQL and builds one migrated PGlite template for the whole run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgres, templateRoot] = await Promise.all([
    startTestPostgres(),
    mkdtemp(join(tmpdir(), 'svc-test-pglite-')),
  ]);
  const pgliteTemplateDirectory = join(templateRoot, 'pglite');
  const template = await createDatabase({ engine: 'pglite', directory: pgliteTemplateDirectory });
  await migrateToLatest(template.database);
  await template.close();

  project.provide('postgresUrl', postgres.url);
  project.provide('pgliteTemplateDirectory', pgliteTemplateDirectory);
  return async () => {
    await postgres.stop();
    await rm(templateRoot, { recursive: true, force: true });
  };
}
