import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './postgres.ts';

/** Starts one PostgreSQL for the whole run (the PGlite template is pglite-template.ts). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startTestPostgres();
  project.provide('postgresUrl', postgres.url);
  return () => postgres.stop();
}
