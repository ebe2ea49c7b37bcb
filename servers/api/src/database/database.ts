import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfiguration } from '../config.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

/** The relational store: one kysely instance over PGlite or PostgreSQL, and how to close it. */
export interface DatabaseHandle {
  readonly database: Kysely<Database>;
  readonly engine: DatabaseConfiguration['engine'];
  /** Throws when the database does not answer (for /readyz). */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** Postgres type OID of int8 (bigint). */
const INT8 = 20;

/**
 * int8 columns hold milliseconds and byte counts, far below 2^53: both engines return them as
 * numbers (pg would return strings and PGlite bigints), so queries behave the same on both.
 */
function parseInt8(value: string): number {
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
export const PGLITE_SETTINGS: readonly string[] = ['shared_buffers=16MB'];

/**
 * Opens the configured store. PGlite keeps its files in `configuration.directory` (created when
 * missing); PostgreSQL gets a connection pool of `poolSize`.
 *
 * @example
 * ```ts
 * const { database, close } = await createDatabase({ engine: 'pglite', directory: './data/pglite' });
 * ```
 */
export async function createDatabase(configuration: DatabaseConfiguration): Promise<DatabaseHandle> {
  if (configuration.engine === 'pglite') {
    await mkdir(configuration.directory, { recursive: true });
    const pglite = new PGlite(configuration.directory, {
      // Trigram indexes for free-text session search (migration 2026-11-22-session-search).
      extensions: { pg_trgm },
      parsers: { [INT8]: parseInt8 },
      startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
    });
    await pglite.waitReady;
    return wrap(new Kysely<Database>({ dialect: new PGliteDialect(pglite) }), 'pglite', () => pglite.close());
  }
  const pool = new pg.Pool({
    connectionString: configuration.url,
    max: configuration.poolSize,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  return wrap(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres', async () => {});
}

function wrap(
  database: Kysely<Database>,
  engine: DatabaseConfiguration['engine'],
  closeEngine: () => Promise<void>,
): DatabaseHandle {
  let closed: Promise<void> | undefined;
  return {
    database,
    engine,
    async check() {
      await sql`select 1`.execute(database);
    },
    close() {
      closed ??= database.destroy().then(closeEngine);
      return closed;
    },
  };
}
