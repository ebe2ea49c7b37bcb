import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkBytes, sessionMeta } from '../../../test/call-timelines.ts';
import { newSessionId, postChunk } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';

// Ingest under the concurrency a page's closing produces: an SDK sends every chunk it still holds
// at once (`sendOnExit`), so batches of the chunk index writer (several at a time on PostgreSQL)
// carry chunks of the same sessions. Every chunk must be acknowledged and indexed. (A deadlock
// between two such statements was seen once on PostgreSQL by the transcripts bench, with large
// chunks; it is retried (platform/database/errors.ts), tested there, and not reproduced here.)

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);

describe.each(ENGINES)('concurrent chunks of the same sessions on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  it('acknowledges and indexes every chunk when all of them arrive at once', async () => {
    const sessions = Array.from({ length: 16 }, () => newSessionId());
    const chunks = sessions.flatMap((sessionId) =>
      Array.from({ length: 4 }, (_, seq) =>
        chunkBytes({
          sessionId,
          seq,
          sentAt: T0 + seq * 1_000 + 500,
          ...(seq === 0 ? { meta: sessionMeta(T0) } : {}),
          events: [
            { t: T0 + seq * 1_000, type: 'nav', url: `https://app.test/page/${seq}` },
            {
              t: T0 + seq * 1_000 + 100,
              type: 'error',
              name: 'Error',
              message: `failure ${seq}`,
              source: 'onerror',
            },
            { t: T0 + seq * 1_000 + 200, type: 'custom', name: 'step', props: { seq } },
          ],
        }),
      ),
    );
    // Interleaved, the order a server sees from many closing pages.
    const order = chunks.map((_, index) => index).sort((a, b) => (a % 4) - (b % 4) || a - b);
    const answers = await Promise.all(
      order.map((index) => postChunk(test.app, test.first.projectKey, chunks[index] as Buffer)),
    );
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
    const indexed = await test.database.database
      .selectFrom('chunks')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', test.first.project.id)
      .executeTakeFirstOrThrow();
    expect(Number(indexed.count)).toBe(64);
    const rows = await test.database.database
      .selectFrom('sessions')
      .select(['id', 'chunk_count', 'max_seq', 'error_count'])
      .where('project_id', '=', test.first.project.id)
      .execute();
    expect(rows).toHaveLength(16);
    for (const row of rows) expect(row).toMatchObject({ chunk_count: 4, max_seq: 3, error_count: 4 });
  });
});
