import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import {
  CALL_DOCUMENT,
  ISSUE_DOCUMENT,
  SEARCHED_SIGNALS,
  SESSION_DOCUMENT,
  SIGNAL_DOCUMENT,
} from '../../platform/database/migrations/2026-12-16-search.ts';
import {
  CALL_DOCUMENT_SQL,
  ISSUE_DOCUMENT_SQL,
  SEARCHED_SIGNALS_SQL,
  SESSION_DOCUMENT_SQL,
  SIGNAL_DOCUMENT_SQL,
} from './documents.ts';

describe.each(ENGINES)('the search indexes on %s', (engine) => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await openTestDatabase(engine);
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  it('are over the expressions the queries use', () => {
    expect([
      SESSION_DOCUMENT_SQL,
      SIGNAL_DOCUMENT_SQL,
      CALL_DOCUMENT_SQL,
      ISSUE_DOCUMENT_SQL,
      SEARCHED_SIGNALS_SQL,
    ]).toEqual([SESSION_DOCUMENT, SIGNAL_DOCUMENT, CALL_DOCUMENT, ISSUE_DOCUMENT, SEARCHED_SIGNALS]);
  });

  it.each([
    ['sessions', SESSION_DOCUMENT_SQL, '', 'sessions_search_document'],
    [
      'session_signals',
      SIGNAL_DOCUMENT_SQL,
      ` and ${SEARCHED_SIGNALS_SQL}`,
      'session_signals_search_document',
    ],
    ['calls', CALL_DOCUMENT_SQL, '', 'calls_search_document'],
    ['issue_clusters', ISSUE_DOCUMENT_SQL, '', 'issue_clusters_search_document'],
  ])('can answer a match on %s from its index', async (table, document, condition, index) => {
    // With sequential scans off, only an index on this exact expression serves the predicate.
    const plan = await handle.database.transaction().execute(async (transaction) => {
      await sql`set local enable_seqscan = off`.execute(transaction);
      return sql<{ 'QUERY PLAN': string }>`
        explain select 1 from ${sql.table(table)}
        where ${sql.raw(document)} @@ websearch_to_tsquery('simple', ${'checkout'})${sql.raw(condition)}
      `.execute(transaction);
    });
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain(index);
  });

  it('index the words of URLs, e-mail addresses and snake_case names', async () => {
    const result = await sql<{ document: string }>`
      select ${sql.raw(SIGNAL_DOCUMENT_SQL)}::text as document
      from (values ('payment_failed', 'at https://shop.example.com/checkout/83 for ada@example.com')) as signal(name, message)
    `.execute(handle.database);
    expect(result.rows[0]?.document).toBe(
      "'83':9 'ada':11 'at':3 'checkout':8 'com':7,13 'example':6,12 'failed':2 'for':10 'https':4 'payment':1 'shop':5",
    );
  });
});
