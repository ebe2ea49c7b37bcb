import { type PGlite, parse, protocol, type Results } from '@electric-sql/pglite';
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
import { preparedStatementName } from './prepared-statement.ts';

/**
 * A kysely dialect for PGlite (Postgres compiled to WebAssembly, embedded in the process).
 *
 * PGlite is one connection: this driver hands it to one kysely connection at a time, so a
 * transaction holds it exclusively until it commits or rolls back and every other query waits
 * its turn. Queries compile exactly as for PostgreSQL, so one set of migrations and queries
 * serves both engines. Texts marked with `preparedStatement(name)` are prepared once, as named
 * statements, like the PostgreSQL driver does.
 *
 * Written here rather than taken from `kysely-pglite`, whose 0.6 release pulls in a
 * `kysely-codegen` that does not load with kysely 0.29.
 */
export class PGliteDialect implements Dialect {
  readonly #executor: PGliteExecutor;

  /** Over a PGlite instance in this thread, or over any {@link PGliteExecutor} (another thread's). */
  constructor(database: PGlite | PGliteExecutor) {
    this.#executor = isExecutor(database) ? database : createPGliteExecutor(database);
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.#executor);
  }

  createIntrospector(database: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(database);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}

/**
 * Runs one statement on a PGlite instance: what {@link PGliteDialect} needs of it. The executor of
 * {@link createPGliteExecutor} runs in the PGlite's own thread; `pglite-thread.ts` forwards to
 * one on a worker thread.
 */
export interface PGliteExecutor {
  executeQuery<Row>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<Row>>;
}

function isExecutor(value: PGlite | PGliteExecutor): value is PGliteExecutor {
  return !('waitReady' in value);
}

/**
 * The executor of a PGlite instance in this thread. Texts marked with `preparedStatement(name)`
 * run as named statements, prepared once.
 *
 * @example
 * ```ts
 * const { rows } = await createPGliteExecutor(pglite).executeQuery('select 1 as one', []);
 * ```
 */
export function createPGliteExecutor(database: PGlite): PGliteExecutor {
  return new PGliteStatements(database);
}

/** A statement prepared on the PGlite session: its text and the types of its parameters. */
interface PreparedShape {
  text: string;
  parameterTypes: number[];
}

class PGliteStatements implements PGliteExecutor {
  readonly #database: PGlite;
  /** Named statements prepared so far (they last as long as the PGlite instance). */
  readonly #prepared = new Map<string, PreparedShape>();

  constructor(database: PGlite) {
    this.#database = database;
  }

  async executeQuery<Row>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<Row>> {
    const name = preparedStatementName(sql);
    const result =
      name === undefined
        ? await this.#database.query<Row>(sql, [...parameters])
        : await this.#executePrepared<Row>(name, sql, parameters);
    return result.affectedRows === undefined
      ? { rows: result.rows }
      : { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) };
  }

  /**
   * Runs `text` as the named statement `name`: parsed and planned on first use, then one protocol
   * round (bind, describe, execute, sync) per call instead of the six of `query()`, and no parse
   * or plan. Like `pg`, one name stands for one text.
   */
  #executePrepared<Row>(name: string, text: string, parameters: readonly unknown[]): Promise<Results<Row>> {
    const database = this.#database;
    return database.runExclusive(async () => {
      let statement = this.#prepared.get(name);
      if (statement === undefined) {
        const described = await database.execProtocolStream(
          concatenate([
            protocol.serialize.parse({ name, text }),
            protocol.serialize.describe({ type: 'S', name }),
            protocol.serialize.sync(),
          ]),
        );
        statement = { text, parameterTypes: parse.parseDescribeStatementResults(described) };
        this.#prepared.set(name, statement);
      } else if (statement.text !== text) {
        throw new TypeError(`The prepared statement ${name} was prepared with another text`);
      }
      const { parameterTypes } = statement;
      const values = parameters.map((value, index) => {
        if (value === null || value === undefined) return null;
        const serialize = database.serializers[parameterTypes[index] as number];
        return serialize === undefined ? String(value) : serialize(value);
      });
      const messages = await database.execProtocolStream(
        concatenate([
          protocol.serialize.bind({ statement: name, values }),
          protocol.serialize.describe({ type: 'P' }),
          protocol.serialize.execute({}),
          protocol.serialize.sync(),
        ]),
      );
      const [result] = parse.parseResults(messages, database.parsers);
      if (result === undefined) throw new Error(`The prepared statement ${name} returned no result`);
      return result as Results<Row>;
    });
  }
}

/** The one kysely connection: every statement goes to the executor. */
class PGliteConnection implements DatabaseConnection {
  readonly #executor: PGliteExecutor;

  constructor(executor: PGliteExecutor) {
    this.#executor = executor;
  }

  executeQuery<Row>(compiledQuery: CompiledQuery): Promise<QueryResult<Row>> {
    return this.#executor.executeQuery<Row>(compiledQuery.sql, compiledQuery.parameters);
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
  readonly #connection: PGliteConnection;
  /** Resolves when the connection is free; each acquirer chains onto it. */
  #free: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(executor: PGliteExecutor) {
    this.#connection = new PGliteConnection(executor);
  }

  async init(): Promise<void> {
    // Nothing to wait for: PGlite holds queries back until it is ready.
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

function concatenate(parts: readonly Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((length, part) => length + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.byteLength;
  }
  return whole;
}
