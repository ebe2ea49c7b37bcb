import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, ingest, sessionMeta } from '../../../test/call-timelines.ts';
import { listFiles, newSessionId } from '../../../test/ingest-helpers.ts';
import { testStorage } from '../../../test/seed.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import { drainBlobDeletions, sweepRetention } from './index.ts';

// Retention (issue 25): sessions and calls older than their project's days (lowered to the plan's)
// are deleted in bounded batches by a sweep that is told what time it is; a crash in the middle
// leaves every batch done or untouched, and the blobs of a committed batch removed by the next.

const DAY = 86_400_000;

describe.each(ENGINES)('retention on %s', (engine) => {
  let test: TestApp;
  let blobStore: BlobStore;

  beforeAll(async () => {
    test = await createTestApp(engine);
    ({ blobStore } = await testStorage(test));
  }, 120_000);

  afterAll(async () => {
    await test?.close();
  });

  /** A session with a call, started at `startedAt` (two chunks). */
  async function sessionWithCall(projectKey: string, startedAt: number): Promise<string> {
    const sessionId = newSessionId();
    const call = callTimeline({ start: startedAt + 1_000, samples: 3 });
    await ingest(
      test.app,
      projectKey,
      chunkBytes({
        sessionId,
        seq: 0,
        sentAt: startedAt + 500,
        meta: sessionMeta(startedAt, { userId: 'someone' }),
        events: [{ t: startedAt, type: 'nav', url: 'https://app.example.com/call' }],
      }),
    );
    await ingest(
      test.app,
      projectKey,
      chunkBytes({ sessionId, seq: 1, sentAt: call.end + 100, events: call.items }),
    );
    return sessionId;
  }

  /** As if the sessions and their calls had arrived when they started (the sweep needs both old). */
  async function arrivedWhenStarted(projectId: string): Promise<void> {
    const database = test.database.database;
    await sql`update sessions set created_at = started_at where project_id = ${projectId}`.execute(database);
    await sql`update calls set created_at = started_at where project_id = ${projectId}`.execute(database);
  }

  const countOf = async (
    table: 'sessions' | 'chunks' | 'calls' | 'call_tracks' | 'call_items',
    projectId: string,
  ) =>
    Number(
      (
        await test.database.database
          .selectFrom(table)
          .select(sql<number>`count(*)`.as('count'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow()
      ).count,
    );

  it('deletes what is past the days of the project and of its plan, in batches, and keeps the rest', async () => {
    const database = test.database.database;
    const project = await test.createProject('Retention');
    const projectId = project.project.id;
    // Sessions and calls kept 10 days, calls 3 (the session's replay stays when its calls go).
    await database
      .updateTable('projects')
      .set({
        settings: JSON.stringify({ sessions: { retentionDays: 10 }, calls: { retentionDays: 3 } }),
      })
      .where('id', '=', projectId)
      .execute();
    const now = Date.now();
    const old = [
      await sessionWithCall(project.projectKey, now - 20 * DAY),
      await sessionWithCall(project.projectKey, now - 15 * DAY),
      await sessionWithCall(project.projectKey, now - 12 * DAY),
    ];
    const middle = await sessionWithCall(project.projectKey, now - 5 * DAY);
    const fresh = await sessionWithCall(project.projectKey, now - DAY);
    await test.processingWorker.runUntilIdle();
    expect(await countOf('calls', projectId)).toBe(5);
    // Received just now, they are all kept, whatever their devices' clocks said.
    const received = await sweepRetention(
      { database, blobStore, planRetention: async () => null },
      new Date(now),
    );
    expect(received.removed.sessions ?? 0).toBe(0);
    await arrivedWhenStarted(projectId);
    const oldBlobs = (
      await database.selectFrom('chunks').select('blob_key').where('session_id', 'in', old).execute()
    ).map((row) => row.blob_key);

    const noPlan = async () => null;
    // The injected clock: nothing is due today minus 30 days.
    const early = await sweepRetention(
      { database, blobStore, planRetention: noPlan },
      new Date(now - 30 * DAY),
    );
    expect(early.removed.sessions ?? 0).toBe(0);

    // Batches of 2: the first sweep takes the two oldest and says there is more.
    const first = await sweepRetention({ database, blobStore, planRetention: noPlan }, new Date(now), {
      batchSessions: 2,
    });
    expect(first.removed).toMatchObject({ sessions: 2, chunks: 4, blobs: 4, blobs_removed: 4 });
    expect(first.more).toBe(true);
    const second = await sweepRetention({ database, blobStore, planRetention: noPlan }, new Date(now), {
      batchSessions: 2,
    });
    expect(second.removed).toMatchObject({ sessions: 1 });
    const remaining = (
      await database.selectFrom('sessions').select('id').where('project_id', '=', projectId).execute()
    )
      .map((row) => row.id)
      .sort();
    expect(remaining).toEqual([middle, fresh].sort());
    // The middle session's call was past 3 days: its rows went, its replay stayed.
    expect(await countOf('calls', projectId)).toBe(1);
    expect(await countOf('chunks', projectId)).toBe(4);
    expect(
      await database
        .selectFrom('call_items')
        .select('session_id')
        .distinct()
        .where('project_id', '=', projectId)
        .execute(),
    ).toEqual([{ session_id: fresh }]);
    for (const key of oldBlobs) expect(await blobStore.get(key)).toBeNull();
    expect(
      (await listFiles(join(test.dataDirectory, 'blobs'))).filter((file) =>
        old.some((id) => file.includes(id)),
      ),
    ).toEqual([]);

    // A plan of 2 days lowers the project's 10: the middle session goes too.
    const plan = await sweepRetention(
      { database, blobStore, planRetention: async () => ({ sessions: 2, calls: 2, traces: 2 }) },
      new Date(now),
    );
    expect(plan.removed).toMatchObject({ sessions: 1 });
    expect(
      (await database.selectFrom('sessions').select('id').where('project_id', '=', projectId).execute()).map(
        (row) => row.id,
      ),
    ).toEqual([fresh]);
  }, 120_000);

  it('survives a crash in the middle: a failed batch changes nothing, blobs left behind go on the next sweep', async () => {
    const database = test.database.database;
    const project = await test.createProject('Crash');
    const projectId = project.project.id;
    await database
      .updateTable('projects')
      .set({ settings: JSON.stringify({ sessions: { retentionDays: 1 } }) })
      .where('id', '=', projectId)
      .execute();
    const now = Date.now();
    const doomed = [
      await sessionWithCall(project.projectKey, now - 9 * DAY),
      await sessionWithCall(project.projectKey, now - 8 * DAY),
    ];
    await test.processingWorker.runUntilIdle();
    await arrivedWhenStarted(projectId);
    const blobs = (
      await database.selectFrom('chunks').select('blob_key').where('session_id', 'in', doomed).execute()
    ).map((row) => row.blob_key);
    const before = {
      sessions: await countOf('sessions', projectId),
      chunks: await countOf('chunks', projectId),
      calls: await countOf('calls', projectId),
      tracks: await countOf('call_tracks', projectId),
    };
    const noPlan = async () => null;

    // 1. The database fails in the middle of the batch's transaction (after the chunks, calls and
    //    tracks were deleted in it, at the session rows): it rolls back whole.
    await sql`
      create function fail_session_delete() returns trigger language plpgsql as $$
      begin raise exception 'crash in the middle of the batch'; end $$`.execute(database);
    await sql`
      create trigger fail_session_delete before delete on sessions
      for each row execute function fail_session_delete()`.execute(database);
    await expect(
      sweepRetention({ database, blobStore, planRetention: noPlan }, new Date(now), { batchSessions: 10 }),
    ).rejects.toThrow(/crash in the middle/);
    await sql`drop trigger fail_session_delete on sessions`.execute(database);
    await sql`drop function fail_session_delete()`.execute(database);
    expect({
      sessions: await countOf('sessions', projectId),
      chunks: await countOf('chunks', projectId),
      calls: await countOf('calls', projectId),
      tracks: await countOf('call_tracks', projectId),
    }).toEqual(before);
    expect(await database.selectFrom('blob_deletions').selectAll().execute()).toEqual([]);
    for (const key of blobs) expect(await blobStore.get(key)).not.toBeNull();

    // 2. The process dies after the batch committed, while removing its blobs: the rows are gone,
    //    the blobs not yet removed wait in the queue, and the next sweep removes them.
    let deletes = 0;
    const dying: BlobStore = {
      ...blobStore,
      kind: blobStore.kind,
      put: (...args) => blobStore.put(...args),
      get: (key) => blobStore.get(key),
      check: () => blobStore.check(),
      close: async () => {},
      async delete(key) {
        deletes += 1;
        if (deletes > 1) throw new Error('the process died here');
        await blobStore.delete(key);
      },
    };
    await expect(
      sweepRetention({ database, blobStore: dying, planRetention: noPlan }, new Date(now), {
        batchSessions: 10,
      }),
    ).rejects.toThrow(/died here/);
    expect(await countOf('sessions', projectId)).toBe(0);
    expect(await countOf('calls', projectId)).toBe(0);
    const queued = (await database.selectFrom('blob_deletions').select('blob_key').execute()).map(
      (row) => row.blob_key,
    );
    // A queue row goes once its whole round of blobs is removed: all four wait, one is gone already.
    expect(queued.sort()).toEqual([...blobs].sort());
    const gone = await Promise.all(blobs.map(async (key) => (await blobStore.get(key)) === null));
    expect(gone.filter(Boolean)).toHaveLength(1);
    const next = await sweepRetention({ database, blobStore, planRetention: noPlan }, new Date(now));
    expect(next.removed.blobs_removed).toBe(blobs.length);
    expect(await database.selectFrom('blob_deletions').selectAll().execute()).toEqual([]);
    for (const key of blobs) expect(await blobStore.get(key)).toBeNull();
    expect(await drainBlobDeletions(database, blobStore)).toBe(0);
  }, 120_000);
});
