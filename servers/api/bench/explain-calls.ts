import { CompiledQuery, type Kysely } from 'kysely';
import { callOverview, DEFAULT_CALLS_LIMIT, findCallsPage } from '../src/modules/calls/call-queries.ts';
import { callListQuerySchema } from '../src/modules/calls/routes.ts';
import type { Database } from '../src/platform/database/schema.ts';
import { decodeCallCursor } from '../src/platform/http/cursor.ts';
import { recordStatements } from './explain.ts';

// The exact SQL that GET /v1/calls and GET /v1/calls/overview run for a query string (see
// recordStatements in explain.ts).

/** Which endpoint: the list (`/v1/calls`) or the overview (`/v1/calls/overview`). */
export type CallEndpoint = 'list' | 'overview';

/** The statements (SQL and parameters) of `GET /v1/calls[/overview]?<search>` for `projectId`. */
export async function callQueriesSql(
  endpoint: CallEndpoint,
  projectId: string,
  search: URLSearchParams,
): Promise<Array<{ sql: string; parameters: readonly unknown[] }>> {
  const query = callListQuerySchema.parse(Object.fromEntries(search));
  const statements = await recordStatements(async (database) => {
    if (endpoint === 'overview') {
      await callOverview(database, projectId, { from: query.from, to: query.to });
      return;
    }
    const { limit, cursor, ...filters } = query;
    await findCallsPage(database, projectId, {
      filters,
      after: cursor === undefined ? undefined : decodeCallCursor(cursor),
      limit: limit ?? DEFAULT_CALLS_LIMIT,
    });
  });
  if (statements.length === 0) throw new Error(`GET /v1/calls ${endpoint} ran no query`);
  return statements;
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
