import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, ingest, sessionMeta } from '../../../test/call-timelines.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { must, T0 } from './calls.fixture.ts';

// The calls API over generated calls: what each call derives, the list's filters and cursor, the
// overview, a session's calls and findings, other projects kept out, and bad parameters.

/** p-quantile with linear interpolation between closest ranks (numpy's default, percentile_cont). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return must(sorted[low]) + (must(sorted[high]) - must(sorted[low])) * (rank - low);
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
});
