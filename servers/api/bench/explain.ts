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
import type { Database } from '../src/database/schema.ts';
import { findSessionsPage } from '../src/repositories/session-queries.ts';
import { decodeSessionCursor } from '../src/routes/sessions/cursor.ts';
import {
  DEFAULT_SESSIONS_LIMIT,
  sessionListQuerySchema,
  toSessionFilters,
} from '../src/routes/sessions/query.ts';

// The exact SQL that GET /v1/sessions runs for a query string: the route's own parsing and
// repository function, over a kysely instance whose driver only records the compiled query.

class RecordingDriver implements Driver {
  readonly queries: CompiledQuery[] = [];
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async (query) => {
        this.queries.push(query);
        return { rows: [] };
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

/** The SQL and parameters of `GET /v1/sessions?<search>` for `projectId`. */
export async function sessionListSql(
  projectId: string,
  search: URLSearchParams,
): Promise<{ sql: string; parameters: readonly unknown[] }> {
  const driver = new RecordingDriver();
  const database = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const query = sessionListQuerySchema.parse(Object.fromEntries(search));
  await findSessionsPage(database, projectId, {
    filters: toSessionFilters(query),
    after: query.cursor === undefined ? undefined : decodeSessionCursor(query.cursor),
    limit: query.limit ?? DEFAULT_SESSIONS_LIMIT,
  });
  await database.destroy();
  const recorded = driver.queries[0];
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
