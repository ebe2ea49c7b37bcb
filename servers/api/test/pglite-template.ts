import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../src/platform/database/database.ts';
import { migrateToLatest } from '../src/platform/database/migrate.ts';

// Global setup of the projects whose tests open PGlite stores (test-database.ts: openTestDatabase,
// withMigratedStore): one migrated PGlite data directory per run, which the tests copy.

/** The run's template, shared by every project that lists this setup (one vitest process). */
interface SharedTemplate {
  built: Promise<{ root: string; directory: string }>;
  projects: number;
}

// Each project loads its global setup files on its own (another module instance): the template
// is kept on globalThis so that a run of several such projects builds it once.
const SHARED = Symbol.for('@svc/api.test.pgliteTemplate');
const shared = globalThis as { [SHARED]?: SharedTemplate };

async function build(): Promise<{ root: string; directory: string }> {
  const root = await mkdtemp(join(tmpdir(), 'svc-test-pglite-'));
  const directory = join(root, 'pglite');
  const template = await createDatabase({ engine: 'pglite', directory });
  await migrateToLatest(template.database);
  await template.close();
  return { root, directory };
}

/** Builds (or reuses) the run's migrated PGlite template and provides its directory. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  shared[SHARED] ??= { built: build(), projects: 0 };
  const template = shared[SHARED];
  template.projects++;
  const { root, directory } = await template.built;
  project.provide('pgliteTemplateDirectory', directory);
  return async () => {
    template.projects--;
    if (template.projects > 0) return;
    delete shared[SHARED];
    await rm(root, { recursive: true, force: true });
  };
}
