import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import type { Database } from '../src/database/schema.ts';
import { callOverview, findCallsPage } from '../src/repositories/call-queries.ts';
import { callListQuerySchema, DEFAULT_CALLS_LIMIT } from '../src/routes/calls/index.ts';
import { decodeCallCursor } from '../src/routes/sessions/cursor.ts';

// The exact SQL that GET /v1/calls and GET /v1/calls/overview run for a query string: the
// route's own parsing and repository functions, over a kysely instance whose driver only records
// the compiled statements (answering each with one empty row, so the overview's
// `executeTakeFirstOrThrow` goes on to its next statement).

class RecordingDriver implements Driver {
  readonly queries: CompiledQuery[] = [];
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async (query) => {
        this.queries.push(query);
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

/** Which endpoint: the list (`/v1/calls`) or the overview (`/v1/calls/overview`). */
export type CallEndpoint = 'list' | 'overview';

/** The statements (SQL and parameters) of `GET /v1/calls[/overview]?<search>` for `projectId`. */
export async function callQueriesSql(
  endpoint: CallEndpoint,
  projectId: string,
  search: URLSearchParams,
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
  const query = callListQuerySchema.parse(Object.fromEntries(search));
  if (endpoint === 'overview') {
    await callOverview(database, projectId, { from: query.from, to: query.to });
  } else {
    const { limit, cursor, ...filters } = query;
    await findCallsPage(database, projectId, {
      filters,
      after: cursor === undefined ? undefined : decodeCallCursor(cursor),
      limit: limit ?? DEFAULT_CALLS_LIMIT,
    });
  }
  await database.destroy();
  if (driver.queries.length === 0) throw new Error(`GET /v1/calls ${endpoint} ran no query`);
  return driver.queries.map((recorded) => ({ sql: recorded.sql, parameters: recorded.parameters }));
}

/**
 * `EXPLAIN (ANALYZE, BUFFERS)` of each of those statements on `database` (either engine), with
 * the statement's text first.
 */
export async function explainCallQueries(
  database: Kysely<Database>,
  endpoint: CallEndpoint,
  projectId: string,
  search: URLSearchParams,
): Promise<string> {
  const statements = await callQueriesSql(endpoint, projectId, search);
  const parts: string[] = [];
  for (const [index, statement] of statements.entries()) {
    const result = await database.executeQuery<Record<string, string>>(
      CompiledQuery.raw(`explain (analyze, buffers) ${statement.sql}`, [...statement.parameters]),
    );
    const plan = result.rows.map((row) => Object.values(row)[0]).join('\n');
    const head = statements.length > 1 ? `statement ${index + 1} of ${statements.length}: ` : '';
    parts.push(`${head}${statement.sql.replace(/\s+/g, ' ')}\n${plan}`);
  }
  return parts.join('\n\n');
}
