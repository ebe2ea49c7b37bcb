import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  callTimeline,
  chunkBytes,
  ingest,
  sessionMeta,
  splitItems,
} from '../../../../test/call-timelines.ts';
import { newSessionId } from '../../../../test/ingest-helpers.ts';
import { createTestApp } from '../../../../test/test-app.ts';
import { ENGINES } from '../../../../test/test-database.ts';
import { claimProcessingJobs, processSessionJob } from '../../../modules/processing/index.ts';
import { down, up } from './2026-11-29-call-job-cost.ts';
import * as processingJobs from './2026-11-30-processing-jobs.ts';

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

describe.each(ENGINES)('migration 2026-11-29-call-job-cost on %s', (engine) => {
  it('keeps an open call as the API shows it, down to segments and up to pieces again, and goes on', async () => {
    const test = await createTestApp(engine);
    try {
      const project = test.first;
      const database = test.database.database;
      const { items } = callTimeline({ start: T0, samples: 40, close: false });
      const sessionId = newSessionId();
      const parts = splitItems(items, 8);
      const bodies = parts.map((events, seq) =>
        chunkBytes({
          sessionId,
          seq,
          sentAt: Math.max(...events.map((event) => event.t)) + 200,
          ...(seq === 0 ? { meta: sessionMeta(T0) } : {}),
          events,
        }),
      );
      const runJobs = async () => {
        for (const job of await claimProcessingJobs(database, 10, 60_000))
          await processSessionJob(test.processingDependencies, job);
      };
      const view = async () => {
        const [call] = (
          await test.app.inject({ url: `/v1/sessions/${sessionId}/calls`, headers: project.headers })
        ).json().items;
        const detail = await test.app.inject({ url: `/v1/calls/${call.id}`, headers: project.headers });
        expect(detail.statusCode).toBe(200);
        return detail.body;
      };
      const count = async (table: string) =>
        Number(
          (
            await sql<{ rows: number }>`select count(*)::integer as rows from ${sql.table(table)}`.execute(
              database,
            )
          ).rows[0]?.rows,
        );
      const trackCounts = async () =>
        (
          await database
            .selectFrom('call_tracks')
            .select(['track_id', 'sample_count'])
            .orderBy('track_id')
            .execute()
        ).map((track) => `${track.track_id}:${track.sample_count}`);

      for (const body of bodies.slice(0, 6)) {
        await ingest(test.app, project.projectKey, body);
        await runJobs();
      }
      const before = await view();
      const pieces = await count('call_series_pieces');
      expect(pieces).toBe(5);
      const rowCounts = await trackCounts();

      // Down: a segment per series piece (the connection's and each of four tracks'), and the
      // tracks' counts include them (the later migration, that renamed its job table, first).
      await processingJobs.down(database);
      await down(database);
      expect(await count('call_series_segments')).toBe(pieces * 5);
      expect(await trackCounts()).not.toEqual(rowCounts);
      // Up again: the same pieces, counts and call.
      await up(database);
      await processingJobs.up(database);
      expect(await count('call_series_pieces')).toBe(pieces);
      expect(await trackCounts()).toEqual(rowCounts);
      expect(await view()).toBe(before);

      // And processing goes on from there: the whole call as one backlog would show it.
      for (const body of bodies.slice(6)) {
        await ingest(test.app, project.projectKey, body);
        await runJobs();
      }
      const live = await view();
      await database.deleteFrom('call_progress').execute();
      await database
        .insertInto('processing_jobs')
        .values({ project_id: project.project.id, session_id: sessionId, due_at: new Date(0) })
        .onConflict((conflict) =>
          conflict
            .columns(['project_id', 'session_id'])
            .doUpdateSet({ due_at: new Date(0), locked_until: null }),
        )
        .execute();
      await runJobs();
      expect(await count('call_series_pieces')).toBe(0);
      expect(await view()).toBe(live);
    } finally {
      await test.close();
    }
  });
});
