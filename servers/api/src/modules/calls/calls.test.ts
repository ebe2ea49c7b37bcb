import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { detect } from '@svc/detectors';
import { type CallEvent, type CallSample, parseChunk } from '@svc/protocol';
import { scoreCall } from '@svc/quality-score';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, ingest, sessionMeta, splitItems } from '../../../test/call-timelines.ts';
import { eventually } from '../../../test/eventually.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { claimCallJobs, processCallJob } from '../processing/call-processing.ts';
import { createCallWorker } from '../processing/call-worker.ts';

// Calls end to end: chunks through POST /v1/ingest, the processing job, and the calls API.

const require = createRequire(import.meta.url);
const realCallChunk = readFileSync(require.resolve('@svc/protocol/fixtures/valid/Chunk/call.json'));
const realParsed = parseChunk(JSON.parse(realCallChunk.toString('utf8')));
if (!realParsed.success) throw new Error(realParsed.error.message);
const realItems = realParsed.chunk.events.filter(
  (event): event is CallSample | CallEvent => event.type === 'call.sample' || event.type === 'call.event',
);

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

/** The value, or a thrown error naming what was missing. */
function must<Value>(value: Value | undefined, what = 'value'): Value {
  if (value === undefined) throw new Error(`missing ${what}`);
  return value;
}

/** p-quantile with linear interpolation between closest ranks (numpy's default, percentile_cont). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return must(sorted[low]) + (must(sorted[high]) - must(sorted[low])) * (rank - low);
}

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
  const process = () => test.callWorker.runUntilIdle();
  const allCalls = async (query = '', project: TestProject = test.first) => {
    const items: Json[] = [];
    let cursor: string | undefined;
    do {
      const separator = query === '' ? '' : '&';
      const page = await get(
        `/v1/calls?limit=3${separator}${query}${cursor === undefined ? '' : `&cursor=${cursor}`}`,
        project,
      );
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return items;
  };

  describe('the recorded Chromium calls', () => {
    let project: TestProject;
    let calls: Json[];
    beforeAll(async () => {
      project = await test.createProject('real');
      await ingest(test.app, project.projectKey, realCallChunk);
      expect(await process()).toBe(1);
      calls = (await get(`/v1/sessions/${realParsed.chunk.sessionId}/calls`, project)).items;
    });

    it('makes one call per peer connection, scored with scoreCall and timed from the events', () => {
      const pcs = [...new Set(realItems.flatMap((item) => (item.pc === undefined ? [] : [item.pc])))];
      expect(calls.map((call) => call.pc).sort()).toEqual(pcs.sort());
      for (const call of calls) {
        const own = realItems.filter((item) => item.pc === call.pc);
        const samples = own.filter((item): item is CallSample => item.type === 'call.sample');
        const created = must(own.find((item) => item.type === 'call.event' && item.name === 'pc_created'));
        const connected = must(
          own.find(
            (item) =>
              item.type === 'call.event' && item.name === 'connection_state' && item.state === 'connected',
          ),
        );
        const closed = must(own.find((item) => item.type === 'call.event' && item.name === 'pc_closed'));
        expect(call).toMatchObject({
          sessionId: realParsed.chunk.sessionId,
          state: 'closed',
          endReason: 'closed',
          startedAt: new Date(created.t).toISOString(),
          endedAt: new Date(closed.t).toISOString(),
          setupMs: connected.t - created.t,
          connected: true,
          failedToConnect: false,
          relayed: must(samples[0]).conn.relayed,
          sampleCount: samples.length,
        });
        expect(call.qualityScore).toBe(scoreCall(samples) ?? undefined);
        expect(call.id).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
      }
      expect(calls.filter((call) => call.relayed)).toHaveLength(6);
    });

    it("stores the detectors' findings, the same as detect() on the session's items", async () => {
      const expected = detect(realItems, {
        now: Math.max(realParsed.chunk.sentAt, ...realItems.map((item) => item.t)),
      });
      const issues = (await get(`/v1/sessions/${realParsed.chunk.sessionId}/issues`, project)).items.filter(
        (issue: Json) => issue.kind === 'finding',
      );
      const key = (finding: { kind?: string; name?: string; pc?: string }) =>
        `${finding.pc ?? ''}/${finding.name ?? finding.kind}`;
      expect(issues.map(key).sort()).toEqual(expected.map(key).sort());
      expect(expected.length).toBeGreaterThan(0);
      for (const call of calls.filter((call) => call.relayed)) {
        expect(call.issues).toContainEqual({ kind: 'webrtc_relay_fallback', severity: 'info' });
      }
    });

    it('serves the detail: time-aligned track series and event markers', async () => {
      const call = must(calls.find((candidate) => candidate.relayed));
      const detail = await get(`/v1/calls/${call.id}`, project);
      const samples = realItems.filter(
        (item): item is CallSample => item.type === 'call.sample' && item.pc === call.pc,
      );
      expect(detail.tracks).toHaveLength(must(samples[0]).tracks.length);
      for (const track of detail.tracks) {
        const sent = samples.map((sample) => sample.tracks.find((entry) => entry.id === track.id));
        expect(track.series.t).toEqual(samples.map((sample) => sample.t));
        for (const [metric, values] of Object.entries(track.series)) {
          expect(values).toHaveLength(samples.length);
          if (metric === 't' || metric === 'windowMs') continue;
          expect(values).toEqual(sent.map((entry) => (entry as Json)?.[metric] ?? null));
        }
      }
      const eventNames = realItems
        .filter((item) => item.type === 'call.event' && item.pc === call.pc)
        .map((item) => (item as CallEvent).name);
      expect(detail.events.map((event: Json) => event.name)).toEqual(eventNames);
      expect(detail.connection.t).toHaveLength(samples.length);
    });
  });

  describe('generated calls', () => {
    let project: TestProject;
    const sessions = [
      {
        id: newSessionId(),
        meta: { browser: 'Chrome', os: 'Linux', device: 'desktop', release: '1.0', userId: 'u1' },
      },
      {
        id: newSessionId(),
        meta: { browser: 'Firefox', os: 'Windows', device: 'mobile', release: '1.1', userId: 'u2' },
      },
      { id: newSessionId(), meta: { browser: 'Safari', os: 'macOS', device: 'tablet', release: '1.0' } },
    ];
    let all: Json[];
    beforeAll(async () => {
      project = await test.createProject('generated');
      const start = (minute: number) => T0 + minute * 60_000;
      const timelines = [
        // Chrome: a clean call and one with sustained loss.
        [
          callTimeline({ start: start(0), setupMs: 150, network: 'wifi' }),
          callTimeline({
            start: start(1),
            setupMs: 400,
            network: 'cellular',
            samples: 20,
            lossPct: (i) => (i >= 2 && i < 18 ? 12 : 0),
          }),
        ],
        // Firefox: a relayed call and one that fails on a candidate error.
        [
          callTimeline({ start: start(2), setupMs: 900, network: 'ethernet', relayed: true }),
          callTimeline({ start: start(3), candidateError: 701, fail: true }),
        ],
        // Safari: one that never connects (still open), a clean one on a VPN.
        [
          callTimeline({ start: start(4), setupMs: null, close: false }),
          callTimeline({ start: start(5), setupMs: 60, network: 'vpn', samples: 30 }),
        ],
      ];
      for (const [index, session] of sessions.entries()) {
        const items = must(timelines[index]).flatMap((timeline) => timeline.items);
        const last = Math.max(...items.map((item) => item.t));
        // The session keeps sending after its last call item: 20 s are known to have passed.
        await ingest(
          test.app,
          project.projectKey,
          chunkBytes({
            sessionId: session.id,
            seq: 0,
            sentAt: last + 20_000,
            meta: sessionMeta(start(0), session.meta),
            events: items,
          }),
        );
      }
      await process();
      all = await allCalls('', project);
    });

    it('derives each call: setup, connection, failure reason, relay, network, quality and issues', () => {
      expect(all).toHaveLength(6);
      const byStart = [...all].sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
      const [clean, lossy, relayed, failed, neverConnected, vpn] = byStart;
      expect(clean).toMatchObject({
        setupMs: 150,
        connected: true,
        failedToConnect: false,
        relayed: false,
        networkType: 'wifi',
        hasIssue: false,
        issues: [],
        browser: { name: 'Chrome', version: '156' },
        os: { name: 'Linux', version: '6' },
        device: 'desktop',
        release: '1.0',
        endUser: 'u1',
        codec: 'video/VP8',
        codecs: ['audio/opus', 'video/VP8'],
        trackCount: 4,
        sampleCount: 12,
        state: 'closed',
        candidateTypes: { local: ['host'], remote: ['srflx'] },
        protocol: 'udp',
      });
      expect(clean.qualityScore).toBeGreaterThanOrEqual(80);
      expect(lossy).toMatchObject({ setupMs: 400, networkType: 'cellular', hasIssue: true });
      expect(lossy.issues).toContainEqual({ kind: 'webrtc_packet_loss', severity: 'medium' });
      expect(lossy.qualityScore).toBeLessThan(clean.qualityScore);
      expect(relayed).toMatchObject({
        relayed: true,
        networkType: 'ethernet',
        hasIssue: false,
        issues: [{ kind: 'webrtc_relay_fallback', severity: 'info' }],
        candidateTypes: { local: ['relay'], remote: ['relay'] },
        endUser: 'u2',
        device: 'mobile',
      });
      expect(failed).toMatchObject({
        connected: false,
        failedToConnect: true,
        failureReason: 'ice_candidate_error_701',
        hasIssue: true,
        sampleCount: 0,
      });
      expect(failed.qualityScore).toBeUndefined();
      expect(failed.setupMs).toBeUndefined();
      expect(neverConnected).toMatchObject({
        connected: false,
        failedToConnect: true,
        failureReason: 'connect_timeout',
        state: 'open',
      });
      expect(neverConnected.endedAt).toBeUndefined();
      expect(neverConnected.endUser).toBeUndefined();
      expect(vpn).toMatchObject({ setupMs: 60, networkType: 'vpn', device: 'tablet' });
    });

    it('filters on every parameter exactly like a direct selection of the full list', async () => {
      const cases: Array<[string, (call: Json) => boolean]> = [
        ['relayed=true', (call) => call.relayed],
        ['relayed=false', (call) => !call.relayed],
        ['failedToConnect=true', (call) => call.failedToConnect],
        ['failedToConnect=false', (call) => !call.failedToConnect],
        ['networkType=cellular', (call) => call.networkType === 'cellular'],
        ['networkType=vpn', (call) => call.networkType === 'vpn'],
        ['minQuality=80', (call) => call.qualityScore !== undefined && call.qualityScore >= 80],
        ['maxQuality=79', (call) => call.qualityScore !== undefined && call.qualityScore <= 79],
        ['minQuality=0&maxQuality=100', (call) => call.qualityScore !== undefined],
        ['browser=firefox', (call) => call.browser?.name === 'Firefox'],
        ['os=MACOS', (call) => call.os?.name === 'macOS'],
        ['device=mobile', (call) => call.device === 'mobile'],
        ['release=1.0', (call) => call.release === '1.0'],
        ['endUser=u1', (call) => call.endUser === 'u1'],
        ['hasIssue=true', (call) => call.hasIssue],
        ['hasIssue=false', (call) => !call.hasIssue],
        [`from=${T0 + 120_000}`, (call) => Date.parse(call.startedAt) >= T0 + 120_000],
        [`to=${new Date(T0 + 120_000).toISOString()}`, (call) => Date.parse(call.startedAt) < T0 + 120_000],
        [
          `from=${T0 + 60_000}&to=${T0 + 240_000}&relayed=false`,
          (call) =>
            Date.parse(call.startedAt) >= T0 + 60_000 &&
            Date.parse(call.startedAt) < T0 + 240_000 &&
            !call.relayed,
        ],
        ['release=1.0&hasIssue=true', (call) => call.release === '1.0' && call.hasIssue],
      ];
      for (const [query, predicate] of cases) {
        const expected = all.filter(predicate).map((call) => call.id);
        expect(expected.length, query).toBeGreaterThan(0);
        expect(expected.length, query).toBeLessThan(query.includes('minQuality=0') ? 7 : 6);
        expect(
          (await allCalls(query, project)).map((call) => call.id),
          query,
        ).toEqual(expected);
      }
      // Newest first, and the cursor walks every call once.
      const times = all.map((call) => Date.parse(call.startedAt));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(new Set(all.map((call) => call.id)).size).toBe(6);
    });

    it('computes the overview like a direct computation over the calls', async () => {
      const overview = await get('/v1/calls/overview', project);
      const setups = all.flatMap((call) => (call.setupMs === undefined ? [] : [call.setupMs]));
      expect(overview).toMatchObject({
        calls: 6,
        failedToConnect: all.filter((call) => call.failedToConnect).length,
        connectFailureRate: all.filter((call) => call.failedToConnect).length / 6,
        relayed: 1,
        relayRate: 1 / 6,
      });
      expect(overview.setupMs.count).toBe(setups.length);
      for (const [name, p] of [
        ['p50', 0.5],
        ['p90', 0.9],
        ['p99', 0.99],
      ] as const) {
        expect(overview.setupMs[name], name).toBeCloseTo(percentile(setups, p), 6);
      }
      const buckets = Array.from(
        { length: 10 },
        (_, bucket) =>
          all.filter(
            (call) =>
              call.qualityScore !== undefined && Math.min(9, Math.floor(call.qualityScore / 10)) === bucket,
          ).length,
      );
      expect(overview.qualityDistribution.map((bucket: Json) => bucket.calls)).toEqual(buckets);
      expect(overview.qualityDistribution[9]).toMatchObject({ from: 90, to: 100 });
      expect(overview.topFailureReasons).toEqual([
        { reason: 'connect_timeout', calls: 1 },
        { reason: 'ice_candidate_error_701', calls: 1 },
      ]);
      const browsers = overview.breakdowns.browser.map((row: Json) => [
        row.key,
        row.calls,
        row.failedToConnect,
      ]);
      expect(browsers.sort()).toEqual([
        ['Chrome', 2, 0],
        ['Firefox', 2, 1],
        ['Safari', 2, 1],
      ]);
      const chrome = overview.breakdowns.browser.find((row: Json) => row.key === 'Chrome');
      const chromeScores = all
        .filter((call) => call.browser.name === 'Chrome')
        .map((call) => call.qualityScore);
      expect(chrome.averageQuality).toBeCloseTo((chromeScores[0] + chromeScores[1]) / 2, 6);
      expect(overview.breakdowns.networkType.map((row: Json) => row.key ?? null).sort()).toEqual(
        [...new Set(all.map((call) => call.networkType ?? null))].sort(),
      );
      expect(overview.breakdowns.device).toHaveLength(3);
      expect(overview.breakdowns.release.map((row: Json) => [row.key, row.calls]).sort()).toEqual([
        ['1.0', 4],
        ['1.1', 2],
      ]);

      const ranged = await get(`/v1/calls/overview?from=${T0 + 120_000}&to=${T0 + 180_000}`, project);
      expect(ranged).toMatchObject({
        calls: 1,
        relayed: 1,
        relayRate: 1,
        setupMs: { count: 1, p50: 900, p99: 900 },
      });
      const empty = await get(`/v1/calls/overview?from=${T0 - 120_000}&to=${T0 - 60_000}`, project);
      expect(empty).toMatchObject({ calls: 0, connectFailureRate: 0, relayRate: 0, setupMs: { count: 0 } });
      expect(empty.setupMs.p50).toBeUndefined();
    });

    it("lists a session's calls and its findings among its issues", async () => {
      const session = must(sessions[1]);
      const calls = (await get(`/v1/sessions/${session.id}/calls`, project)).items;
      expect(calls.map((call: Json) => call.id).sort()).toEqual(
        all
          .filter((call) => call.sessionId === session.id)
          .map((call) => call.id)
          .sort(),
      );
      const issues = (await get(`/v1/sessions/${session.id}/issues`, project)).items;
      const failed = must(calls.find((call: Json) => call.failedToConnect));
      expect(issues).toContainEqual(
        expect.objectContaining({
          kind: 'finding',
          name: 'webrtc_connect_failure',
          severity: 'critical',
          callId: failed.id,
          pc: failed.pc,
        }),
      );
    });

    it("keeps another project's calls out of reach", async () => {
      const other = await test.createProject('other');
      expect(await allCalls('', other)).toEqual([]);
      const call = must(all[0]);
      const detail = await test.app.inject({ url: `/v1/calls/${call.id}`, headers: other.headers });
      expect(detail.statusCode).toBe(404);
      expect(detail.json()).toEqual({ error: `No call ${call.id}`, code: 'not_found' });
      const sessionCalls = await test.app.inject({
        url: `/v1/sessions/${call.sessionId}/calls`,
        headers: other.headers,
      });
      expect(sessionCalls.statusCode).toBe(404);
      expect((await get('/v1/calls/overview', other)).calls).toBe(0);
    });

    it('refuses bad parameters with a 400 and no credentials with a 401', async () => {
      for (const url of [
        '/v1/calls?cursor=abc',
        `/v1/calls?cursor=${Buffer.from(JSON.stringify([1, 'ses_01KAJBCH80XTQ0YDPAV81S476S'])).toString('base64url')}`,
        '/v1/calls?minQuality=80&maxQuality=10',
        '/v1/calls?minQuality=101',
        '/v1/calls?networkType=5g',
        '/v1/calls?relayed=yes',
        '/v1/calls?bogus=1',
        '/v1/calls?limit=0',
        '/v1/calls/not-a-call',
        '/v1/calls/overview?from=2026-11-22&to=2026-11-21',
      ]) {
        const response = await test.app.inject({ url, headers: project.headers });
        expect(response.statusCode, url).toBe(400);
        expect(response.json().code, url).toBe('invalid');
      }
      const anonymous = await test.app.inject({ url: '/v1/calls' });
      expect(anonymous.statusCode).toBe(401);
    });
  });

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
      .insertInto('call_jobs')
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
      await database.selectFrom('call_jobs').selectAll().where('session_id', '=', sessionId).execute(),
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
      .selectFrom('call_jobs')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    // Due when the inactivity timeout (120 s by default) has passed, and not claimed before.
    expect(job.due_at.getTime()).toBeGreaterThan(Date.now() + 100_000);
    expect(job.locked_until).toBeNull();
    expect(await process()).toBe(0);

    await database
      .updateTable('call_jobs')
      .set({ due_at: new Date(0) })
      .where('session_id', '=', sessionId)
      .execute();
    const [claimed] = await claimCallJobs(database, 10, 60_000);
    await processCallJob(test.callDependencies, must(claimed), Date.now() + 121_000);
    const [closed] = (await get(`/v1/sessions/${sessionId}/calls`, project)).items;
    expect(closed).toMatchObject({
      id: open.id,
      state: 'closed',
      endReason: 'inactive',
      endedAt: new Date(end).toISOString(),
      durationMs: end - T0,
    });
    expect(
      await database.selectFrom('call_jobs').selectAll().where('session_id', '=', sessionId).execute(),
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
    await test.callDependencies.blobStore.delete(chunk.blob_key);
    const failures = test.callWorker.stats().failures;
    await process();
    expect(test.callWorker.stats().failures).toBe(failures + 1);
    const job = await database
      .selectFrom('call_jobs')
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
    await database.deleteFrom('call_jobs').where('session_id', '=', sessionId).execute();
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
      createCallWorker(test.callDependencies, { batchSize: 2, concurrency: 2 }),
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
      .selectFrom('call_jobs')
      .selectAll()
      .where('session_id', '=', quiet)
      .execute();
    expect(queued).toEqual([]);
  });
});
