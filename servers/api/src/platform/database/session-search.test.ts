import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import { SEARCH_TEXT } from './migrations/2026-11-22-session-search.ts';
import { SESSION_SEARCH_TEXT_SQL, sessionSearchText } from './session-search.ts';

describe.each(ENGINES)('free-text session search on %s', (engine) => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await openTestDatabase(engine);
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  it('is indexed with pg_trgm over the same expression the query uses', async () => {
    expect(SEARCH_TEXT).toBe(SESSION_SEARCH_TEXT_SQL);
    const indexes = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where tablename = 'sessions' and indexname = 'sessions_search_trigram'
    `.execute(handle.database);
    expect(indexes.rows).toHaveLength(1);
    expect(indexes.rows[0]?.indexdef).toMatch(/USING gin .*gin_trgm_ops/);
  });

  it("can answer q's ILIKE from the index (the expression matches it exactly)", async () => {
    // With sequential scans off and no other condition, only an index on this exact expression
    // can serve the predicate; whether the planner prefers it at scale is what \`pnpm bench\` shows.
    const plan = await handle.database.transaction().execute(async (transaction) => {
      await sql`set local enable_seqscan = off`.execute(transaction);
      return sql<{ 'QUERY PLAN': string }>`
        explain select id from sessions where ${sessionSearchText} ilike '%user4711@example%'
      `.execute(transaction);
    });
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('sessions_search_trigram');
  });
});
