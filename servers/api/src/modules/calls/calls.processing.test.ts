import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, ingest, sessionMeta, splitItems } from '../../../test/call-timelines.ts';
import { eventually } from '../../../test/eventually.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { claimProcessingJobs, createProcessingWorker, processSessionJob } from '../processing/index.ts';
import { must, T0 } from './calls.fixture.ts';

// The processing job behind the calls: the same call whatever the chunking, idempotent reruns, the
// project's thresholds, closing for inactivity, unreadable chunks, the background worker, several
// workers on one queue, and session facts that arrive after the call.

/** The parts of a call that do not depend on which session or chunks carried it. */
function comparable(call: Json) {
  const { id: _id, sessionId: _session, ...rest } = call;
  return rest;
}

describe.each(ENGINES)('calls on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  const { get } = apiClient(() => test);
  const process = () => test.processingWorker.runUntilIdle();

  it('gives the same call from one chunk as from many, late, duplicated and processed in between', async () => {
    const project = await test.createProject('chunking');
    const timeline = callTimeline({
      start: T0,
      samples: 60,
      lossPct: (i) => (i >= 10 && i < 30 ? 9 : 0),
      height: (i) => (i >= 35 ? 180 : 720),
    });
    const end = timeline.end;
    const whole = newSessionId();
    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({ sessionId: whole, seq: 0, sentAt: end, meta: sessionMeta(T0), events: timeline.items }),
    );

    const split = newSessionId();
    const runs = splitItems(timeline.items, 10);
    const bodies = runs.map((events, seq) =>
      chunkBytes({
        sessionId: split,
        seq,
        sentAt: Math.max(...events.map((event) => event.t)),
        ...(seq === 0 ? { meta: sessionMeta(T0) } : {}),
        events,
      }),
    );
    for (const [step, seq] of [7, 3, 0, 9, 1, 2, 8, 4, 6, 5].entries()) {
      await ingest(test.app, project.projectKey, must(bodies[seq]));
      if (step % 3 === 0) await process();
    }
    await ingest(test.app, project.projectKey, must(bodies[4]), true);
    await process();

    const [one] = (await get(`/v1/sessions/${whole}/calls`, project)).items;
    const [many] = (await get(`/v1/sessions/${split}/calls`, project)).items;
    expect(comparable(many)).toEqual(comparable(one));
    expect(one.issues.map((issue: Json) => issue.kind).sort()).toEqual([
      'webrtc_low_resolution',
      'webrtc_packet_loss',
    ]);
    const detailOne = await get(`/v1/calls/${one.id}`, project);
    const detailMany = await get(`/v1/calls/${many.id}`, project);
    const strip = (detail: Json) => ({
      ...comparable(detail),
      events: detail.events.map(({ seq: _seq, index: _index, ...event }: Json) => event),
    });
    expect(strip(detailMany)).toEqual(strip(detailOne));
    expect(detailOne.tracks.find((track: Json) => track.id === 'trk_vi').series.h).toHaveLength(60);
  });

  it('recomputes idempotently: a second run keeps ids, rows and findings', async () => {
    const project = await test.createProject('rerun');
    const sessionId = newSessionId();
    const { items, end } = callTimeline({ start: T0, samples: 20, lossPct: (i) => (i > 2 ? 20 : 0) });
    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items }),
    );
    await process();
    const before = await get(`/v1/sessions/${sessionId}/calls`, project);
    const issuesBefore = await get(`/v1/sessions/${sessionId}/issues`, project);
    const database = test.database.database;
    await database
      .insertInto('processing_jobs')
      .values({ project_id: project.project.id, session_id: sessionId, due_at: new Date(0) })
      .execute();
    expect(await process()).toBe(1);
    expect(await get(`/v1/sessions/${sessionId}/calls`, project)).toEqual(before);
    expect(await get(`/v1/sessions/${sessionId}/issues`, project)).toEqual(issuesBefore);
    const count = await database
      .selectFrom('call_items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(items.length);
    expect(
      await database.selectFrom('processing_jobs').selectAll().where('session_id', '=', sessionId).execute(),
    ).toEqual([]);
  });

  it("uses the project's detector thresholds", async () => {
    const project = await test.createProject('thresholds');
    const patched = await test.app.inject({
      method: 'PATCH',
      url: `/v1/projects/${project.project.id}`,
      headers: project.headers,
      payload: { settings: { detectorThresholds: { lossPct: 25 } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const { items, end } = callTimeline({ start: T0, samples: 20, lossPct: () => 12 });
    for (const target of [project, test.first]) {
      const sessionId = newSessionId();
      await ingest(
        test.app,
        target.projectKey,
        chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items }),
      );
      await process();
      const [call] = (await get(`/v1/sessions/${sessionId}/calls`, target)).items;
      expect(call.issues.some((issue: Json) => issue.kind === 'webrtc_packet_loss')).toBe(
        target === test.first,
      );
    }
  });

  it('closes a call without pc_closed once the session is inactive, and keeps the job until then', async () => {
    const project = await test.createProject('inactive');
    const sessionId = newSessionId();
    const { items, end } = callTimeline({ start: T0, samples: 5, close: false });
    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items }),
    );
    await process();
    const [open] = (await get(`/v1/sessions/${sessionId}/calls`, project)).items;
    expect(open).toMatchObject({ state: 'open' });
    const database = test.database.database;
    const job = await database
      .selectFrom('processing_jobs')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    // Due when the inactivity timeout (120 s by default) has passed, and not claimed before.
    expect(job.due_at.getTime()).toBeGreaterThan(Date.now() + 100_000);
    expect(job.locked_until).toBeNull();
    expect(await process()).toBe(0);

    await database
      .updateTable('processing_jobs')
      .set({ due_at: new Date(0) })
      .where('session_id', '=', sessionId)
      .execute();
    const [claimed] = await claimProcessingJobs(database, 10, 60_000);
    await processSessionJob(test.processingDependencies, must(claimed), Date.now() + 121_000);
    const [closed] = (await get(`/v1/sessions/${sessionId}/calls`, project)).items;
    expect(closed).toMatchObject({
      id: open.id,
      state: 'closed',
      endReason: 'inactive',
      endedAt: new Date(end).toISOString(),
      durationMs: end - T0,
    });
    expect(
      await database.selectFrom('processing_jobs').selectAll().where('session_id', '=', sessionId).execute(),
    ).toEqual([]);
  });

  it('keeps a job whose chunk cannot be read, with its error and a backoff, and writes nothing', async () => {
    const project = await test.createProject('unreadable');
    const sessionId = newSessionId();
    const { items, end } = callTimeline({ start: T0, samples: 3 });
    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items }),
    );
    const database = test.database.database;
    const chunk = await database
      .selectFrom('chunks')
      .select('blob_key')
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    await test.processingDependencies.blobStore.delete(chunk.blob_key);
    const failures = test.processingWorker.stats().failures;
    await process();
    expect(test.processingWorker.stats().failures).toBe(failures + 1);
    const job = await database
      .selectFrom('processing_jobs')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(job).toMatchObject({ attempts: 1, locked_until: null });
    expect(job.last_error).toContain('missing');
    expect(job.due_at.getTime()).toBeGreaterThan(Date.now());
    expect((await get(`/v1/sessions/${sessionId}/calls`, project)).items).toEqual([]);
    expect(
      await database.selectFrom('call_items').selectAll().where('session_id', '=', sessionId).execute(),
    ).toEqual([]);
    // The job stays (retried with backoff); this test's unreadable chunk would fail forever.
    await database.deleteFrom('processing_jobs').where('session_id', '=', sessionId).execute();
  });

  it('processes by itself in the background once ingest queued a job', async () => {
    const background = await createTestApp(engine, { logger: false }, { SVC_CALL_WORKER: 'true' });
    try {
      const sessionId = newSessionId();
      const { items, end } = callTimeline({ start: T0, samples: 4 });
      await ingest(
        background.app,
        background.first.projectKey,
        chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items }),
      );
      const calls = await eventually(
        async () => {
          const response = await background.app.inject({
            url: `/v1/sessions/${sessionId}/calls`,
            headers: background.first.headers,
          });
          const items: Json[] = response.json().items;
          return items.length === 0 ? undefined : items;
        },
        { timeoutMs: 10_000 },
      );
      expect(calls).toEqual([expect.objectContaining({ state: 'closed', sampleCount: 4 })]);
    } finally {
      await background.close();
    }
  });

  it('lets several workers share the queue without running a job twice', async () => {
    const project = await test.createProject('workers');
    const sessionIds = Array.from({ length: 6 }, () => newSessionId());
    for (const sessionId of sessionIds) {
      const { items, end } = callTimeline({ start: T0, samples: 3 });
      await ingest(
        test.app,
        project.projectKey,
        chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items }),
      );
    }
    const workers = [1, 2, 3].map(() =>
      createProcessingWorker(test.processingDependencies, { batchSize: 2, concurrency: 2 }),
    );
    const ran = await Promise.all(workers.map((worker) => worker.runUntilIdle()));
    expect(ran.reduce((sum, count) => sum + count, 0)).toBe(6);
    expect(workers.reduce((sum, worker) => sum + worker.stats().jobs, 0)).toBe(6);
    for (const sessionId of sessionIds) {
      expect((await get(`/v1/sessions/${sessionId}/calls`, project)).items).toHaveLength(1);
    }
  });

  it('copies session facts that arrive after the call: a late first chunk, a later identify', async () => {
    const project = await test.createProject('late meta');
    const sessionId = newSessionId();
    const { items, end } = callTimeline({ start: T0 + 1_000, samples: 3 });
    await ingest(test.app, project.projectKey, chunkBytes({ sessionId, seq: 1, sentAt: end, events: items }));
    await process();
    const [before] = (await get(`/v1/sessions/${sessionId}/calls`, project)).items;
    expect(before.browser).toBeUndefined();

    const meta = sessionMeta(T0, { browser: 'Firefox', release: '2.0', userId: 'u-meta' });
    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({
        sessionId,
        seq: 0,
        sentAt: T0 + 500,
        meta,
        events: [{ t: T0, type: 'nav', url: 'https://app.example.com/' }],
      }),
    );
    expect(await process()).toBe(1);
    const [after] = (await get(`/v1/sessions/${sessionId}/calls`, project)).items;
    expect(after).toMatchObject({
      id: before.id,
      browser: { name: 'Firefox' },
      release: '2.0',
      endUser: 'u-meta',
    });

    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({
        sessionId,
        seq: 2,
        sentAt: end + 1_000,
        events: [{ t: end + 500, type: 'identify', user: { id: 'u-later' } }],
      }),
    );
    expect(await process()).toBe(1);
    const [identified] = (await get(`/v1/sessions/${sessionId}/calls`, project)).items;
    expect(identified.endUser).toBe('u-later');

    // A session without calls queues nothing, whatever its chunks carry.
    const quiet = newSessionId();
    await ingest(
      test.app,
      project.projectKey,
      chunkBytes({ sessionId: quiet, seq: 0, sentAt: T0, meta, events: [] }),
    );
    const queued = await test.database.database
      .selectFrom('processing_jobs')
      .selectAll()
      .where('session_id', '=', quiet)
      .execute();
    expect(queued).toEqual([]);
  });
});
