import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLITE_DURABILITY_SETTINGS } from './pglite-durability.ts';

/** Postgres type OID of int8 (bigint). */
export const INT8 = 20;

/**
 * int8 columns hold milliseconds and byte counts, far below 2^53: both engines return them as
 * numbers (pg would return strings and PGlite bigints), so queries behave the same on both.
 */
export function parseInt8(value: string): number {
  return Number(value);
}

/**
 * Postgres settings of the embedded store, passed on PGlite's command line (so the data
 * directory's postgresql.conf is left as initdb wrote it).
 *
 * `shared_buffers`: Postgres' own page cache lives inside PGlite's WebAssembly memory, which only
 * grows and is never given back, so its default 128 MB ends up resident once the cache has
 * filled. PGlite reads and writes pages through the operating system's file cache anyway, so a
 * 16 MB buffer pool costs no measurable ingest or list throughput (`pnpm bench`) and keeps the
 * server about 120-150 MB smaller at rest (~245 MB instead of ~360-400 MB RSS after reopening).
 */
export const PGLITE_SETTINGS: readonly string[] = ['shared_buffers=16MB', ...PGLITE_DURABILITY_SETTINGS];

/**
 * A PGlite instance on `directory` with the server's extensions, type parsers and settings. A
 * directory without a database gets one (initdb, in this process): the server creates it first
 * with `initializePGliteDirectory`, in a child process.
 */
export function newPGlite(directory: string): PGlite {
  return new PGlite(directory, {
    // Trigram indexes for free-text session search (migration 2026-11-22-session-search).
    extensions: { pg_trgm },
    parsers: { [INT8]: parseInt8 },
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
  });
}
