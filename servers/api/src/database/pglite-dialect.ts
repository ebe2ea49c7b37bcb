import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * A kysely dialect for PGlite (Postgres compiled to WebAssembly, embedded in the process).
 *
 * PGlite is one connection: this driver hands it to one kysely connection at a time, so a
 * transaction holds it exclusively until it commits or rolls back and every other query waits
 * its turn. Queries compile exactly as for PostgreSQL, so one set of migrations and queries
 * serves both engines.
 *
 * Written here rather than taken from `kysely-pglite`, whose 0.6 release pulls in a
 * `kysely-codegen` that does not load with kysely 0.29.
 */
export class PGliteDialect implements Dialect {
  readonly #database: PGlite;

  constructor(database: PGlite) {
    this.#database = database;
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.#database);
  }

  createIntrospector(database: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(database);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}

class PGliteConnection implements DatabaseConnection {
  readonly #database: PGlite;

  constructor(database: PGlite) {
    this.#database = database;
  }

  async executeQuery<Row>(compiledQuery: CompiledQuery): Promise<QueryResult<Row>> {
    const result = await this.#database.query<Row>(compiledQuery.sql, [...compiledQuery.parameters]);
    return result.affectedRows === undefined
      ? { rows: result.rows }
      : { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) };
  }

  async *streamQuery<Row>(
    compiledQuery: CompiledQuery,
    chunkSize: number,
  ): AsyncIterableIterator<QueryResult<Row>> {
    // PGlite has no cursors over its one connection: run the query, then hand out chunks.
    const { rows } = await this.executeQuery<Row>(compiledQuery);
    const size = Math.max(1, chunkSize);
    for (let start = 0; start < rows.length; start += size) yield { rows: rows.slice(start, start + size) };
  }
}

class PGliteDriver implements Driver {
  readonly #database: PGlite;
  readonly #connection: PGliteConnection;
  /** Resolves when the connection is free; each acquirer chains onto it. */
  #free: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(database: PGlite) {
    this.#database = database;
    this.#connection = new PGliteConnection(database);
  }

  async init(): Promise<void> {
    await this.#database.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#free;
    let release: () => void = () => {};
    this.#free = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    this.#release = release;
    return this.#connection;
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const modes = [
      settings.isolationLevel === undefined ? undefined : `isolation level ${settings.isolationLevel}`,
      settings.accessMode,
    ].filter((mode) => mode !== undefined);
    await connection.executeQuery(
      CompiledQuery.raw(`start transaction${modes.length > 0 ? ` ${modes.join(', ')}` : ''}`),
    );
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, savepointName: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoteIdentifier(savepointName)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, savepointName: string): Promise<void> {
    await connection.executeQuery(
      CompiledQuery.raw(`rollback to savepoint ${quoteIdentifier(savepointName)}`),
    );
  }

  async releaseSavepoint(connection: DatabaseConnection, savepointName: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${quoteIdentifier(savepointName)}`));
  }

  async destroy(): Promise<void> {
    // The caller owns the PGlite instance and closes it (see createDatabase).
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
