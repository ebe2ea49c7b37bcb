import { detect } from '@svc/detectors';
import { type CallEvent, type CallSample, parseChunk } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTimeline,
  chunkBytes,
  ingest,
  sessionMeta,
  splitItems,
  type WireItem,
} from '../../../test/call-timelines.ts';
import { eventually } from '../../../test/eventually.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import {
  claimProcessingBatch,
  claimProcessingJobs,
  createProcessingWorker,
  type ProcessingResult,
  processSessionJob,
  queueReprocessing,
} from './index.ts';

// Incremental processing end to end, on both engines: a session processed chunk by chunk as it
// uploads (each job going on from the session's stored progress) gives exactly the rows, series
// and findings of the same chunks processed once as a backlog, and of detect() over every item,
// also with late chunks, duplicates, failed jobs, several workers and `reprocess-calls`.

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

/**
 * Two overlapping calls: a long one with a lossy stretch, a drop to 180 p and jittery windows
 * (a window longer than every one before makes its score be summed again), and a relayed one
 * that starts during it and fails to stay clean.
 */
function twoCalls(): { items: WireItem[]; end: number } {
  const long = callTimeline({
    start: T0,
    samples: 90,
    lossPct: (index) => (index >= 20 && index < 45 ? 9 : 0),
    height: (index) => (index >= 60 ? 180 : 720),
  });
  const relayed = callTimeline({
    start: T0 + 30_000,
    samples: 25,
    relayed: true,
    network: 'cellular',
    lossPct: (index) => (index >= 5 ? 30 : 0),
  });
  let sample = 0;
  const items = [...long.items, ...relayed.items].map((item) =>
    item.type === 'call.sample' ? { ...item, windowMs: 1_000 + ((sample++ * 37) % 90) } : item,
  );
  return { items, end: Math.max(long.end, relayed.end) };
}

/** The items as an SDK sends them: `parts` chunks in time order, seq 0 with the session's meta. */
function chunksOf(sessionId: string, items: readonly WireItem[], parts: number): Buffer[] {
  return splitItems(items, parts).map((events, seq) =>
    chunkBytes({
      sessionId,
      seq,
      sentAt: Math.max(...events.map((event) => event.t)) + 200,
      ...(seq === 0 ? { meta: sessionMeta(T0) } : {}),
      events,
    }),
  );
}

describe.each(ENGINES)('incremental call processing on %s', (engine) => {
  let test: TestApp;
  let project: TestProject;
  beforeAll(async () => {
    test = await createTestApp(engine);
    project = await test.createProject('incremental');
  });
  afterAll(async () => {
    await test?.close();
  });

  const { get } = apiClient(
    () => test,
    () => project,
  );

  /** Runs every due job once; the result of each, by session. */
  const runJobs = async (serverNow?: number): Promise<Map<string, ProcessingResult>> => {
    const results = new Map<string, ProcessingResult>();
    for (const job of await claimProcessingJobs(test.database.database, 100, 60_000)) {
      results.set(job.sessionId, await processSessionJob(test.processingDependencies, job, serverNow));
    }
    return results;
  };

  /**
   * What the API shows of a session's calls, without what depends on which session or chunks
   * carried them (ids, seq and index of event markers): as JSON text, so the series' key order
   * counts too.
   */
  const view = async (sessionId: string): Promise<string> => {
    const calls = (await get(`/v1/sessions/${sessionId}/calls`)).items;
    const details = [];
    for (const call of calls) {
      const { id: _id, sessionId: _session, events, ...detail } = await get(`/v1/calls/${call.id}`);
      details.push({
        ...detail,
        events: events.map(({ seq: _seq, index: _index, ...event }: Json) => event),
      });
    }
    const issues = (await get(`/v1/sessions/${sessionId}/issues`)).items.map(
      ({ id: _id, callId: _call, ...issue }: Json) => issue,
    );
    return JSON.stringify({ details, issues }, null, 1);
  };

  /** The same chunks processed as one backlog: ingested, then one job. */
  const backlog = async (items: readonly WireItem[], parts: number): Promise<string> => {
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, parts);
    for (const body of bodies) await ingest(test.app, project.projectKey, body);
    const results = await runJobs();
    expect(results.get(sessionId)).toMatchObject({ recomputed: true, chunksRead: bodies.length });
    return view(sessionId);
  };

  /** Makes the session's job due now (queued again if it was done). */
  const queueAgain = async (sessionId: string) => {
    await test.database.database
      .insertInto('processing_jobs')
      .values({ project_id: project.project.id, session_id: sessionId, due_at: new Date(0) })
      .onConflict((conflict) =>
        conflict
          .columns(['project_id', 'session_id'])
          .doUpdateSet({ due_at: new Date(0), locked_until: null }),
      )
      .execute();
  };

  const segmentsOf = async (sessionId: string): Promise<number> => {
    const rows = await test.database.database
      .selectFrom('call_series_pieces')
      .innerJoin('calls', (join) =>
        join
          .onRef('calls.project_id', '=', 'call_series_pieces.project_id')
          .onRef('calls.id', '=', 'call_series_pieces.call_id'),
      )
      .select('call_series_pieces.first_sample')
      .where('calls.session_id', '=', sessionId)
      .execute();
    return rows.length;
  };

  it('live, one job per chunk, each going on from the last: the rows of one job over the backlog, and detect()', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, 30);
    const results: ProcessingResult[] = [];
    for (const [seq, body] of bodies.entries()) {
      await ingest(test.app, project.projectKey, body);
      const result = (await runJobs()).get(sessionId);
      if (result === undefined) throw new Error(`no job for chunk ${seq}`);
      results.push(result);
      if (seq === 14) {
        // Mid-call, the calls read as the first half computed at once (series from the pieces).
        expect(await segmentsOf(sessionId)).toBeGreaterThan(0);
        expect(await view(sessionId)).toBe(await backlog(splitItems(items, 30).slice(0, 15).flat(), 15));
      }
    }
    // Each job read its own chunk and went on from the progress; only the first computed from scratch.
    expect(results.map((result) => result.chunksRead)).toEqual(bodies.map(() => 1));
    expect(results.filter((result) => result.recomputed)).toHaveLength(1);
    expect(results[0]?.recomputed).toBe(true);
    expect(results.reduce((sum, result) => sum + result.itemsAdded, 0)).toBe(items.length);
    // Some windows were longer than every one before: those calls' scores were summed again.
    expect(results.reduce((sum, result) => sum + result.rescored, 0)).toBeGreaterThan(0);

    const live = await view(sessionId);
    expect(live).toBe(await backlog(items, 30));
    expect(live).toBe(await backlog(items, 1));
    // Both calls closed: their pieces are folded into their rows.
    expect(await segmentsOf(sessionId)).toBe(0);

    const parsed = bodies.flatMap((body) => {
      const chunk = parseChunk(JSON.parse(body.toString('utf8')));
      if (!chunk.success) throw new Error(chunk.error.message);
      return chunk.chunk.events.filter(
        (event): event is CallSample | CallEvent =>
          event.type === 'call.sample' || event.type === 'call.event',
      );
    });
    const lastSent = Math.max(...bodies.map((body) => JSON.parse(body.toString('utf8')).sentAt));
    const expected = detect(parsed, { now: Math.max(lastSent, ...parsed.map((item) => item.t)) });
    const stored = (await get(`/v1/sessions/${sessionId}/issues`)).items.filter(
      (issue: Json) => issue.kind === 'finding',
    );
    expect(stored.map((issue: Json) => `${issue.pc}/${issue.name}`).sort()).toEqual(
      expected.map((finding) => `${finding.pc}/${finding.kind}`).sort(),
    );
    expect(expected.map((finding) => finding.kind).sort()).toEqual([
      'webrtc_call_abandoned',
      'webrtc_low_resolution',
      'webrtc_packet_loss',
      'webrtc_packet_loss',
      'webrtc_relay_fallback',
    ]);
  });

  it('recomputes the session for a late chunk whose items come before what was consumed, then goes on', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, 12);
    const recomputed: boolean[] = [];
    for (const seq of [0, 1, 2, 4, 5, 3, 6, 8, 7, 9, 10, 11]) {
      await ingest(test.app, project.projectKey, bodies[seq] as Buffer);
      recomputed.push((await runJobs()).get(sessionId)?.recomputed ?? false);
    }
    // Chunk 3 after 4 and 5, chunk 7 after 8: each recomputes once; the others go on.
    expect(recomputed).toEqual([
      true,
      false,
      false,
      false,
      false,
      true,
      false,
      false,
      true,
      false,
      false,
      false,
    ]);
    expect(await view(sessionId)).toBe(await backlog(items, 12));
  });

  it('changes nothing for duplicates and for a job run again', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, 8);
    for (const body of bodies.slice(0, 5)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    const before = await view(sessionId);
    const segments = await segmentsOf(sessionId);
    await ingest(test.app, project.projectKey, bodies[3] as Buffer, true);
    await queueAgain(sessionId);
    expect((await runJobs()).get(sessionId)).toMatchObject({
      chunksRead: 0,
      itemsAdded: 0,
      recomputed: false,
    });
    expect(await view(sessionId)).toBe(before);
    expect(await segmentsOf(sessionId)).toBe(segments);
    for (const body of bodies.slice(5)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    expect(await view(sessionId)).toBe(await backlog(items, 8));
  });

  it('keeps everything as it was when a job fails, and its retry goes on from there', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, 10);
    for (const body of bodies.slice(0, 6)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    const database = test.database.database;
    const progressOf = () =>
      database
        .selectFrom('call_progress')
        .select(['version', 'consumed_seq', 'progress'])
        .where('session_id', '=', sessionId)
        .executeTakeFirstOrThrow();
    const before = { progress: await progressOf(), view: await view(sessionId) };
    // Chunk 6's blob cannot be read (then comes back): the job fails and writes nothing.
    await ingest(test.app, project.projectKey, bodies[6] as Buffer);
    const chunk = await database
      .selectFrom('chunks')
      .select('blob_key')
      .where('session_id', '=', sessionId)
      .where('seq', '=', 6)
      .executeTakeFirstOrThrow();
    const sealed = await test.processingDependencies.blobStore.get(chunk.blob_key);
    if (sealed === null) throw new Error('missing blob');
    await test.processingDependencies.blobStore.delete(chunk.blob_key);
    const [job] = await claimProcessingJobs(database, 10, 60_000);
    if (job === undefined) throw new Error('no job');
    await expect(processSessionJob(test.processingDependencies, job)).rejects.toThrow(/missing/);
    expect(await progressOf()).toEqual(before.progress);
    expect(await view(sessionId)).toBe(before.view);
    await test.processingDependencies.blobStore.put(chunk.blob_key, sealed);
    await database
      .updateTable('processing_jobs')
      .set({ due_at: new Date(0), locked_until: null })
      .execute();
    expect((await runJobs()).get(sessionId)).toMatchObject({ chunksRead: 1, recomputed: false });
    for (const body of bodies.slice(7)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    expect(await view(sessionId)).toBe(await backlog(items, 10));
  });

  it('lets one job run twice at once (a lease that ran out) and several workers share live sessions', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, 6);
    const database = test.database.database;
    for (const body of bodies.slice(0, 3)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    // Two runs of the same claimed job at once: one writes, the other gives up its work and runs
    // again from what the first wrote.
    await ingest(test.app, project.projectKey, bodies[3] as Buffer);
    const [job] = await claimProcessingJobs(database, 10, 60_000);
    if (job === undefined) throw new Error('no job');
    const twice = await Promise.all([
      processSessionJob(test.processingDependencies, job),
      processSessionJob(test.processingDependencies, job),
    ]);
    expect(twice.map((result) => result.itemsAdded).sort((a, b) => a - b)).toEqual([
      0,
      splitItems(items, 6)[3]?.length,
    ]);
    for (const body of bodies.slice(4)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    expect(await view(sessionId)).toBe(await backlog(items, 6));

    // Four sessions uploading at once, three workers processing while they do.
    const sessions = Array.from({ length: 4 }, () => newSessionId());
    const uploads = sessions.map((id) => chunksOf(id, items, 6));
    const workers = [1, 2, 3].map(() =>
      createProcessingWorker(test.processingDependencies, { batchSize: 2, concurrency: 2 }),
    );
    for (let seq = 0; seq < 6; seq++) {
      await Promise.all([
        ...uploads.map((upload) => ingest(test.app, project.projectKey, upload[seq] as Buffer)),
        ...workers.map((worker) => worker.runUntilIdle()),
      ]);
    }
    await Promise.all(workers.map((worker) => worker.runUntilIdle()));
    expect(workers.reduce((sum, worker) => sum + worker.stats().failures, 0)).toBe(0);
    const expected = await backlog(items, 6);
    for (const id of sessions) expect(await view(id)).toBe(expected);
  });

  it('leaves a session that just ran to coalesce: the chunks that arrive meanwhile become one job', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    const bodies = chunksOf(sessionId, items, 6);
    const database = test.database.database;
    await runJobs();
    // A session's first chunk is taken at once, whatever the window.
    await ingest(test.app, project.projectKey, bodies[0] as Buffer);
    const first = await claimProcessingBatch(database, { limit: 100, leaseMs: 60_000, coalesceMs: 60_000 });
    expect(first.jobs.map((job) => job.sessionId)).toEqual([sessionId]);
    for (const job of first.jobs) await processSessionJob(test.processingDependencies, job);

    // Chunks that arrive within the window of its last run are left, and the claim says when
    // they are due; without a window (runUntilIdle, the CLI) one job takes both.
    await ingest(test.app, project.projectKey, bodies[1] as Buffer);
    await ingest(test.app, project.projectKey, bodies[2] as Buffer);
    const held = await claimProcessingBatch(database, {
      limit: 100,
      leaseMs: 60_000,
      coalesceMs: 60_000,
      horizonMs: 1_000,
    });
    expect(held.jobs).toEqual([]);
    expect(held.nextDueInMs).toBeGreaterThan(30_000);
    expect(held.nextDueInMs).toBeLessThanOrEqual(60_000);
    expect((await runJobs()).get(sessionId)).toMatchObject({ chunksRead: 2, recomputed: false });

    // A background worker waits out the window by itself (no poll in between) and then takes the
    // chunks that came meanwhile in one job.
    const worker = createProcessingWorker(test.processingDependencies, {
      coalesceMs: 2_000,
      pollMs: 600_000,
    });
    worker.start();
    try {
      for (const body of bodies.slice(3)) {
        await ingest(test.app, project.projectKey, body);
        worker.wake();
      }
      await eventually(
        async () => {
          const progress = await database
            .selectFrom('call_progress')
            .select('consumed_seq')
            .where('session_id', '=', sessionId)
            .executeTakeFirstOrThrow();
          return progress.consumed_seq === bodies.length - 1;
        },
        { intervalMs: 50 },
      );
    } finally {
      await worker.stop();
    }
    expect(worker.stats()).toMatchObject({ jobs: 1, chunksRead: 3, failures: 0 });
    expect(await view(sessionId)).toBe(await backlog(items, 6));
  });

  it('recomputes from all items after reprocess-calls or a change of thresholds, with the same rows', async () => {
    const { items } = twoCalls();
    const sessionId = newSessionId();
    for (const body of chunksOf(sessionId, items, 5)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    const live = await view(sessionId);
    expect(await queueReprocessing(test.database.database, project.project.id)).toBeGreaterThan(0);
    const reprocessed = await runJobs();
    expect([...reprocessed.values()].every((result) => result.recomputed)).toBe(true);
    expect(await view(sessionId)).toBe(live);

    const patched = await test.app.inject({
      method: 'PATCH',
      url: `/v1/projects/${project.project.id}`,
      headers: project.headers,
      payload: { settings: { detectorThresholds: { lossPct: 40 } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    await queueAgain(sessionId);
    expect((await runJobs()).get(sessionId)).toMatchObject({ recomputed: true });
    const calls = (await get(`/v1/sessions/${sessionId}/calls`)).items;
    expect(calls.flatMap((call: Json) => call.issues.map((issue: Json) => issue.kind))).not.toContain(
      'webrtc_packet_loss',
    );
    await test.app.inject({
      method: 'PATCH',
      url: `/v1/projects/${project.project.id}`,
      headers: project.headers,
      payload: { settings: { detectorThresholds: {} } },
    });
  });

  it('rewrites a finding judged again at every job (the frozen share of an open call) as a backlog would', async () => {
    const { items } = callTimeline({ start: T0, samples: 80, close: false });
    const frozen = items.map((item) =>
      item.type === 'call.sample'
        ? {
            ...item,
            tracks: (item.tracks as Json[]).map((track) =>
              track.id === 'trk_vi' ? { ...track, freezes: 1, freezeMs: 300 } : track,
            ),
          }
        : item,
    );
    const sessionId = newSessionId();
    const runs = splitItems(frozen, 8);
    const bodies = chunksOf(sessionId, frozen, 8);
    let ratios = new Set<string>();
    for (const [seq, body] of bodies.entries()) {
      await ingest(test.app, project.projectKey, body);
      expect((await runJobs()).get(sessionId)).toMatchObject({ recomputed: seq === 0 });
      const live = await view(sessionId);
      expect(live).toBe(await backlog(runs.slice(0, seq + 1).flat(), seq + 1));
      const freeze = JSON.parse(live).issues.find((issue: Json) => issue.name === 'webrtc_freeze');
      if (freeze !== undefined) ratios = new Set([...ratios, `${freeze.t} ${freeze.details.observedMs}`]);
    }
    // The finding moved with every job once the call had been observed long enough.
    expect(ratios.size).toBeGreaterThan(2);
  });

  it('closes an open call for inactivity with its pieces folded into its rows', async () => {
    const { items, end } = callTimeline({ start: T0, samples: 30, close: false });
    const sessionId = newSessionId();
    for (const body of chunksOf(sessionId, items, 6)) {
      await ingest(test.app, project.projectKey, body);
      await runJobs();
    }
    expect(await segmentsOf(sessionId)).toBeGreaterThan(0);
    const open = await view(sessionId);
    expect(JSON.parse(open).details[0]).toMatchObject({ state: 'open' });
    await queueAgain(sessionId);
    expect((await runJobs(Date.now() + 121_000)).get(sessionId)).toMatchObject({
      recomputed: false,
      itemsAdded: 0,
    });
    expect(await segmentsOf(sessionId)).toBe(0);
    const closed = JSON.parse(await view(sessionId)).details[0];
    expect(closed).toMatchObject({
      state: 'closed',
      endReason: 'inactive',
      endedAt: new Date(end).toISOString(),
    });
    expect(closed.connection).toEqual(JSON.parse(open).details[0].connection);
    expect(closed.tracks).toEqual(JSON.parse(open).details[0].tracks);
  });
});
