import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../../test/call-timelines.ts';
import { apiClient } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { claimFactsJobs, createFactsWorker, runFactsJob } from './index.ts';
import { chunksOf, sessionEvents, T0 } from './insights.fixture.ts';

// The facts job end to end on both engines: chunks through the real ingest route, jobs queued in
// ingest's statement, the facts read back from the tables; the same facts whatever the chunks'
// order and however many jobs ran; a failed job leaves nothing half-written.

describe.each(ENGINES)('the facts job on %s', (engine) => {
  let test: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    test = await createTestApp(engine);
    project = await test.createProject('facts');
  });
  afterAll(async () => {
    await test?.close();
  });

  const dependencies = () => ({
    database: test.database.database,
    blobStore: test.processingDependencies.blobStore,
    masterKey: test.processingDependencies.masterKey,
    log: test.app.log,
    appUrl: test.configuration.appUrl,
  });
  const runJobs = async () => {
    const results = [];
    for (const job of await claimFactsJobs(test.database.database, 100, 60_000))
      results.push(await runFactsJob(dependencies(), job));
    return results;
  };

  const factsOf = async (sessionId: string) => {
    const database = test.database.database;
    const views = await database
      .selectFrom('page_views')
      .selectAll()
      .where('session_id', '=', sessionId)
      .orderBy('view_index')
      .execute();
    const clicks = await database
      .selectFrom('click_facts')
      .selectAll()
      .where('session_id', '=', sessionId)
      .orderBy('kind')
      .orderBy('ordinal')
      .execute();
    const plain = (row: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [
          key,
          value instanceof Date ? value.getTime() - T0 : key === 'session_id' ? '-' : value,
        ]),
      );
    return { views: views.map(plain), clicks: clicks.map(plain) };
  };

  it('derives page views, clicks, rage and dead clicks, scroll depth and vitals from ingested chunks', async () => {
    const sessionId = newSessionId();
    for (const body of chunksOf(sessionId, sessionEvents(), [4, 9]))
      await ingest(test.app, project.projectKey, body);
    expect(await runJobs()).toEqual([{ chunksRead: 3, events: 16, recomputed: true, views: 2, clicks: 5 }]);
    const { views, clicks } = await factsOf(sessionId);
    const common = {
      project_id: project.project.id,
      session_id: '-',
      device: 'desktop',
      browser_name: 'Chrome',
      release: '1.2.0',
      environment: 'test',
    };
    expect(views).toEqual([
      {
        ...common,
        view_index: 0,
        started_at: 0,
        day: Date.UTC(2026, 10, 20) - T0,
        ended_at: 7_000,
        duration_ms: 7_000,
        route: '/products',
        viewport_width: 1280,
        breakpoint: 'desktop',
        page_height: 3_000,
        scroll_depth: 2_200,
        clicks: 4,
        rage_clicks: 1,
        dead_clicks: 3,
        lcp: 1_800,
        inp: 350,
        cls: 0.05,
        fcp: null,
        ttfb: null,
      },
      {
        ...common,
        view_index: 1,
        started_at: 7_000,
        day: Date.UTC(2026, 10, 20) - T0,
        ended_at: 12_000,
        duration_ms: 5_000,
        route: '/orders/:id',
        viewport_width: 1280,
        breakpoint: 'desktop',
        page_height: null,
        scroll_depth: 2_200,
        clicks: 1,
        rage_clicks: 0,
        dead_clicks: 0,
        lcp: null,
        inp: null,
        cls: null,
        fcp: null,
        ttfb: null,
      },
    ]);
    const clickRow = (fields: Record<string, unknown>) => ({
      project_id: project.project.id,
      session_id: '-',
      day: Date.UTC(2026, 10, 20) - T0,
      breakpoint: 'desktop',
      element_x: null,
      element_y: null,
      count: 1,
      ...fields,
    });
    const ghost = { view_index: 0, route: '/products', selector: 'main > button.ghost' };
    expect(clicks).toEqual([
      clickRow({
        kind: 'click',
        ordinal: 0,
        t: 1_000,
        view_index: 0,
        route: '/products',
        selector: 'main > button#buy.btn.primary',
        page_x: 100,
        page_y: 200,
        element_x: 0.5,
        element_y: 0.25,
      }),
      clickRow({ kind: 'click', ordinal: 1, t: 2_000, ...ghost, page_x: 300, page_y: 400 }),
      clickRow({ kind: 'click', ordinal: 2, t: 2_200, ...ghost, page_x: 302, page_y: 401 }),
      clickRow({ kind: 'click', ordinal: 3, t: 2_400, ...ghost, page_x: 299, page_y: 398 }),
      clickRow({
        kind: 'click',
        ordinal: 4,
        t: 8_000,
        view_index: 1,
        route: '/orders/:id',
        selector: 'main > section.order > button#pay',
        page_x: 50,
        page_y: 1_560,
        element_x: 1,
        element_y: 0,
      }),
      clickRow({ kind: 'dead', ordinal: 1, t: 2_000, ...ghost, page_x: 300, page_y: 400 }),
      clickRow({ kind: 'dead', ordinal: 2, t: 2_200, ...ghost, page_x: 302, page_y: 401 }),
      clickRow({ kind: 'dead', ordinal: 3, t: 2_400, ...ghost, page_x: 299, page_y: 398 }),
      clickRow({ kind: 'rage', ordinal: 1, t: 2_000, ...ghost, page_x: 300, page_y: 400, count: 3 }),
    ]);
    // Nothing masked entered a fact: no text, no aria-label, no query string.
    expect(JSON.stringify({ views, clicks })).not.toMatch(/\*\*\*|Buy now|ref=mail/);
  });

  it('gives the same facts one job per chunk, with late chunks, duplicates and a job run again', async () => {
    const events = sessionEvents();
    const reference = newSessionId();
    for (const body of chunksOf(reference, events, [4, 9])) await ingest(test.app, project.projectKey, body);
    await runJobs();
    const expected = await factsOf(reference);

    // One job per chunk: each goes on from the last, reading only its chunk.
    const live = newSessionId();
    const liveChunks = chunksOf(live, events, [1, 3, 5, 8, 11, 14]);
    const runs = [];
    for (const body of liveChunks) {
      await ingest(test.app, project.projectKey, body);
      runs.push(...(await runJobs()));
    }
    expect(runs.map((run) => [run.chunksRead, run.recomputed])).toEqual([
      [1, true],
      ...liveChunks.slice(1).map(() => [1, false]),
    ]);
    expect(await factsOf(live)).toEqual(expected);

    // Chunks out of order: a late chunk makes the session computed again, to the same facts.
    const late = newSessionId();
    const lateChunks = chunksOf(late, events, [2, 6, 10, 13]);
    const order = [0, 2, 1, 4, 3];
    const recomputed = [];
    for (const seq of order) {
      await ingest(test.app, project.projectKey, lateChunks[seq] as Buffer);
      recomputed.push((await runJobs())[0]?.recomputed);
    }
    expect(recomputed).toEqual([true, false, true, false, true]);
    expect(await factsOf(late)).toEqual(expected);

    // A duplicate queues nothing; a job run again (its progress as it was) changes nothing.
    await ingest(test.app, project.projectKey, lateChunks[2] as Buffer, true);
    expect(await runJobs()).toEqual([]);
    await test.database.database
      .insertInto('insight_jobs')
      .values({ project_id: project.project.id, session_id: late, due_at: new Date(0) })
      .execute();
    expect(await runJobs()).toEqual([{ chunksRead: 0, events: 0, recomputed: false, views: 0, clicks: 0 }]);
    expect(await factsOf(late)).toEqual(expected);
  });

  it('writes nothing when a chunk cannot be read, and its retry goes on from the last progress', async () => {
    const events = sessionEvents();
    const sessionId = newSessionId();
    const chunks = chunksOf(sessionId, events, [5, 10]);
    await ingest(test.app, project.projectKey, chunks[0] as Buffer);
    await runJobs();
    const before = await factsOf(sessionId);
    await ingest(test.app, project.projectKey, chunks[1] as Buffer);
    const database = test.database.database;
    const { blob_key } = await database
      .selectFrom('chunks')
      .select('blob_key')
      .where('session_id', '=', sessionId)
      .where('seq', '=', 1)
      .executeTakeFirstOrThrow();
    const { blobStore } = test.processingDependencies;
    const sealed = await blobStore.get(blob_key);
    if (sealed === null) throw new Error('missing blob');
    await blobStore.delete(blob_key);
    // The worker's run throws: the job is released with a backoff and its error, never lost.
    const worker = createFactsWorker(dependencies());
    await worker.runUntilIdle();
    expect(worker.stats()).toMatchObject({ jobs: 0, failures: 1 });
    const released = await database
      .selectFrom('insight_jobs')
      .select(['due_at', 'locked_until', 'attempts', 'last_error'])
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(released).toMatchObject({
      locked_until: null,
      attempts: 1,
      last_error: expect.stringMatching(/missing/),
    });
    expect(released.due_at.getTime()).toBeGreaterThan(Date.now());
    expect(await factsOf(sessionId)).toEqual(before);
    await blobStore.put(blob_key, sealed);
    await database
      .updateTable('insight_jobs')
      .set({ due_at: new Date(0), locked_until: null })
      .execute();
    expect(await runJobs()).toMatchObject([{ chunksRead: 1, recomputed: false }]);
    await ingest(test.app, project.projectKey, chunks[2] as Buffer);
    await runJobs();
    const reference = newSessionId();
    for (const body of chunksOf(reference, events, [5, 10])) await ingest(test.app, project.projectKey, body);
    await runJobs();
    expect(await factsOf(sessionId)).toEqual(await factsOf(reference));
  });

  it("names routes with the project's route patterns first", async () => {
    const { ok: send, request } = apiClient(
      () => test,
      () => project,
    );
    await send('PATCH', `/v1/projects/${project.project.id}`, {
      settings: { insights: { routePatterns: ['/orders/:order', '/products'] } },
    });
    const sessionId = newSessionId();
    for (const body of chunksOf(sessionId, sessionEvents(), [8]))
      await ingest(test.app, project.projectKey, body);
    await runJobs();
    const { views } = await factsOf(sessionId);
    expect(views.map((view) => view.route)).toEqual(['/products', '/orders/:order']);
    await send('PATCH', `/v1/projects/${project.project.id}`, {
      settings: { insights: { routePatterns: [] } },
    });
    const refused = await request('PATCH', `/v1/projects/${project.project.id}`, {
      settings: { insights: { routePatterns: ['orders?x=1'] } },
    });
    expect(refused.statusCode).toBe(400);
  });
});
