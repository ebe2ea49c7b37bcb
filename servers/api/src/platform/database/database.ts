import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfiguration } from '../config.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { createPGliteDurability, type WalPosition } from './pglite-durability.ts';
import { initializePGliteDirectory } from './pglite-initdb.ts';
import { INT8, parseInt8 } from './pglite-instance.ts';
import { startPGliteThread } from './pglite-thread.ts';
import { preparedStatement, preparedStatementName } from './prepared-statement.ts';
import type { Database } from './schema.ts';

/** The relational store: one kysely instance over PGlite or PostgreSQL, and how to close it. */
export interface DatabaseHandle {
  readonly database: Kysely<Database>;
  readonly engine: DatabaseConfiguration['engine'];
  /** Throws when the database does not answer (for /readyz). */
  check(): Promise<void>;
  /**
   * Resolves once every transaction committed before the call is on disk. PostgreSQL does this at
   * COMMIT (nothing to do); on PGlite, which runs without fsync, it is the WAL barrier of
   * `pglite-durability.ts`. Writers call it before they acknowledge.
   */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the configured store. PGlite keeps its files in `configuration.directory` (created when
 * missing) and runs on a worker thread of its own (`pglite-thread.ts`); PostgreSQL gets a
 * connection pool of `poolSize`.
 *
 * @example
 * ```ts
 * const { database, close } = await createDatabase({ engine: 'pglite', directory: './data/pglite' });
 * ```
 */
export async function createDatabase(configuration: DatabaseConfiguration): Promise<DatabaseHandle> {
  if (configuration.engine === 'pglite') {
    await initializePGliteDirectory(configuration.directory);
    // PGlite runs on a thread of its own: the event loop stays free for HTTP, and a slow query
    // (or a large ingest batch) never holds up every other request.
    const thread = await startPGliteThread(configuration.directory);
    const database = new Kysely<Database>({ dialect: new PGliteDialect(thread.executor) });
    const durability = createPGliteDurability({
      directory: configuration.directory,
      position: () => readWalPosition(database),
    });
    // The first flush is a full one: whatever a previous process left unflushed is made durable.
    await durability.flush();
    return wrap(database, 'pglite', {
      flush: durability.flush,
      close: async () => {
        await thread.close();
        await durability.flushAll('close');
      },
    });
  }
  const pool = new pg.Pool({
    connectionString: configuration.url,
    max: configuration.poolSize,
    Client: PreparingClient,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that PostgreSQL closes (a restart, pg_terminate_backend, an idle timeout)
  // makes the pool emit 'error'; unheard, that would end the process. The pool has already dropped
  // the connection and opens a new one when needed, so it is only reported.
  pool.on('error', (error) => {
    process.emitWarning(`PostgreSQL closed an idle connection: ${error.message}`, 'DatabaseWarning');
  });
  // pool.end() resolves once every connection was asked to end, not once it has: close() waits
  // for the sockets too, so nothing is left talking to the server (or failing) after it returns.
  const connectionsEnded = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    connectionsEnded.add(ended);
    void ended.then(() => connectionsEnded.delete(ended));
  });
  return wrap(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres', {
    flush: async () => {},
    close: async () => {
      await Promise.all(connectionsEnded);
    },
  });
}

/** A pg client that runs texts marked with `preparedStatement()` as named statements. */
class PreparingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query() has many overloads; this forwards them all
  override query(...parameters: any[]): any {
    const [text, values] = parameters;
    if (typeof text === 'string' && (Array.isArray(values) || values === undefined)) {
      const name = preparedStatementName(text);
      if (name !== undefined) {
        // biome-ignore lint/suspicious/noExplicitAny: see above
        return (super.query as any)({ name, text, values }, ...parameters.slice(2));
      }
    }
    // biome-ignore lint/suspicious/noExplicitAny: see above
    return (super.query as any)(...parameters);
  }
}

/** The current WAL segment and the last checkpoint's redo position (PGlite's durability barrier). */
export async function readWalPosition(database: Kysely<Database>): Promise<WalPosition> {
  const { rows } = await sql<WalPosition>`${sql.raw(preparedStatement('svc_wal_position'))}
    select pg_walfile_name(pg_current_wal_lsn()) as segment, redo_lsn::text as redo
    from pg_control_checkpoint()
  `.execute(database);
  const [position] = rows;
  if (position === undefined) throw new Error('pg_control_checkpoint() returned no row');
  return position;
}

function wrap(
  database: Kysely<Database>,
  engine: DatabaseConfiguration['engine'],
  engineHooks: { flush(): Promise<void>; close(): Promise<void> },
): DatabaseHandle {
  let closed: Promise<void> | undefined;
  return {
    database,
    engine,
    async check() {
      await sql`select 1`.execute(database);
    },
    flush: engineHooks.flush,
    close() {
      closed ??= database.destroy().then(engineHooks.close);
      return closed;
    },
  };
}
