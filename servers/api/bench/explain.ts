import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import pg from 'pg';
import {
  DEFAULT_SESSIONS_LIMIT,
  sessionListQuerySchema,
  toSessionFilters,
} from '../src/modules/sessions/query.ts';
import { findSessionsPage } from '../src/modules/sessions/session-queries.ts';
import type { Database } from '../src/platform/database/schema.ts';
import { decodeSessionCursor } from '../src/platform/http/cursor.ts';

// The exact SQL a route runs for a query string: the route's own parsing and repository
// functions, over a kysely instance whose driver only records the compiled statements.

/** A driver that records every statement and answers each with one empty row. */
class RecordingDriver implements Driver {
  readonly queries: CompiledQuery[] = [];
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async (query) => {
        this.queries.push(query);
        // One empty row, so code that takes the first row (executeTakeFirstOrThrow) goes on.
        return { rows: [{}] as never[] };
      },
      streamQuery: () => {
        throw new Error('not recorded');
      },
    };
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/** The statements (SQL and parameters) `run` sends to the database it is given, in order. */
export async function recordStatements(
  run: (database: Kysely<Database>) => Promise<unknown>,
): Promise<Array<{ sql: string; parameters: readonly unknown[] }>> {
  const driver = new RecordingDriver();
  const database = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  await run(database);
  await database.destroy();
  return driver.queries.map((recorded) => ({ sql: recorded.sql, parameters: recorded.parameters }));
}

/** The SQL and parameters of `GET /v1/sessions?<search>` for `projectId`. */
export async function sessionListSql(
  projectId: string,
  search: URLSearchParams,
): Promise<{ sql: string; parameters: readonly unknown[] }> {
  const query = sessionListQuerySchema.parse(Object.fromEntries(search));
  const [recorded] = await recordStatements((database) =>
    findSessionsPage(database, projectId, {
      filters: toSessionFilters(query),
      after: query.cursor === undefined ? undefined : decodeSessionCursor(query.cursor),
      limit: query.limit ?? DEFAULT_SESSIONS_LIMIT,
    }),
  );
  if (recorded === undefined) throw new Error('GET /v1/sessions ran no query');
  return { sql: recorded.sql, parameters: recorded.parameters };
}

/** `EXPLAIN (ANALYZE, BUFFERS)` of that query on the database at `databaseUrl`. */
export async function explainSessionList(
  databaseUrl: string,
  projectId: string,
  search: URLSearchParams,
): Promise<string> {
  const { sql, parameters } = await sessionListSql(projectId, search);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`, [
      ...parameters,
    ]);
    return result.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
  }
}
