import { describe, expect, it } from 'vitest';
import { sessionMeta } from '../../../test/call-timelines.ts';
import type { Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { queueReprocessing } from '../processing/index.ts';
import { notificationsSuite, T0, verified } from './notifications.fixture.ts';

// Clusters and what they notify: a failing call clustered and its cluster.created delivered,
// verified, in the inbox and acknowledged; errors clustered by fingerprint (error.new,
// error.rate, GET /v1/errors) and the deliveries list; thousands of clusters in one job.

describe.each(ENGINES)('issues and notifications on %s', (engine) => {
  const { suite, request, ok, worker, setUp, send, failingCallSession } = notificationsSuite(engine);

  it('a call that fails to connect clusters, notifies once, and reaches the suite.receiver verified', async () => {
    const { project, channel } = await setUp({
      source: { type: 'cluster', events: ['cluster.created'], kinds: ['webrtc_connect_failure'] },
    });
    const sessionId = await failingCallSession(project, { release: '1.0.0' });

    const issues = await ok('GET', '/v1/issues', undefined, project);
    const failure = issues.items.find((item: Json) => item.kind === 'webrtc_connect_failure');
    expect(failure).toMatchObject({
      status: 'open',
      severity: 'critical',
      count24h: 1,
      occurrences: 1,
      sessions: 1,
      releases: ['1.0.0'],
      fingerprint: 'webrtc_connect_failure',
    });
    expect(failure.id).toMatch(/^cl_/);

    const pending = await ok('GET', '/v1/notifications/deliveries', undefined, project);
    expect(pending.items).toHaveLength(1);
    expect(pending.items[0]).toMatchObject({
      status: 'pending',
      attempts: 0,
      channelId: channel.id,
      eventType: 'cluster.created',
    });

    expect(await worker().runUntilIdle()).toBe(1);
    const delivery = await suite.receiver.waitFor((received) => received.event.type === 'cluster.created');
    const event = verified(delivery);
    expect(event).toMatchObject({
      type: 'cluster.created',
      version: '2026-11-01',
      projectId: project.project.id,
      orgId: project.project.organization_id,
      data: {
        title: 'Call failed to connect',
        severity: 'critical',
        route: '/call',
        release: '1.0.0',
        counts: { count24h: 1, occurrences: 1, sessions: 1 },
        cluster: {
          id: failure.id,
          kind: 'webrtc_connect_failure',
          title: 'Call failed to connect',
          count24h: 1,
        },
      },
    });
    // The replay link opens the session where the finding was first met.
    const findings = await ok('GET', `/v1/sessions/${sessionId}/issues`, undefined, project);
    const finding = findings.items.find((item: Json) => item.name === 'webrtc_connect_failure');
    expect(event.data.links.replay).toBe(
      `${suite.test.configuration.appUrl}/sessions/${sessionId}?t=${Date.parse(finding.t) - T0}`,
    );
    expect(delivery.attempt).toBe(1);
    expect(delivery.deliveryId).toBe(pending.items[0].id);
    expect(delivery.eventId).toBe(event.id);
    expect(delivery.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const done = await ok('GET', `/v1/notifications/deliveries/${pending.items[0].id}`, undefined, project);
    expect(done).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
    expect(done.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'delivered', statusCode: 200 }),
    ]);

    const inbox = await ok('GET', '/v1/inbox', undefined, project);
    expect(inbox.items).toHaveLength(1);
    expect(inbox.items[0]).toMatchObject({
      id: event.id,
      type: 'cluster.created',
      clusterId: failure.id,
      severity: 'critical',
    });
    const acked = await ok('POST', `/v1/inbox/${event.id}/ack`, undefined, project);
    expect(acked.ackedAt).toBeDefined();
    expect((await ok('GET', '/v1/inbox?acked=false', undefined, project)).items).toHaveLength(0);

    // The same failure in another session joins the cluster and creates nothing new.
    await failingCallSession(project, { release: '1.0.0' });
    expect((await ok('GET', `/v1/issues/${failure.id}`, undefined, project)).count24h).toBe(2);
    expect((await ok('GET', '/v1/notifications/deliveries', undefined, project)).items).toHaveLength(1);
    const sessions = await ok('GET', `/v1/issues/${failure.id}/sessions?limit=1`, undefined, project);
    expect(sessions.items).toHaveLength(1);
    const rest = await ok(
      'GET',
      `/v1/issues/${failure.id}/sessions?limit=1&cursor=${sessions.nextCursor}`,
      undefined,
      project,
    );
    expect(new Set([sessions.items[0].sessionId, rest.items[0].sessionId]).has(sessionId)).toBe(true);
    expect(rest.nextCursor).toBeUndefined();
    for (const cursor of [
      'nope',
      Buffer.from('[-1]').toString('base64url'),
      Buffer.from('{"o":1}').toString('base64url'),
    ]) {
      const bad = await request(
        'GET',
        `/v1/issues/${failure.id}/sessions?cursor=${cursor}`,
        undefined,
        project,
      );
      expect(bad.statusCode, cursor).toBe(400);
    }

    // Reprocessing every session changes nothing: occurrences are counted once.
    await queueReprocessing(suite.test.database.database, project.project.id);
    await suite.test.processingWorker.runUntilIdle();
    expect((await ok('GET', `/v1/issues/${failure.id}`, undefined, project)).occurrences).toBe(2);
    expect((await ok('GET', '/v1/inbox', undefined, project)).items).toHaveLength(1);
  });

  it('errors cluster by fingerprint: error.new, GET /v1/errors and /v1/errors/{fingerprint}', async () => {
    // With a throttle: it holds repeats of one event type per cluster, not the other types.
    const { project, channel } = await setUp({
      source: { type: 'cluster', events: ['cluster.created', 'error.new', 'error.rate'], threshold: 2 },
      throttleMinutes: 60,
    });
    const stack = (line: number) =>
      `TypeError: Cannot read properties of undefined (reading 'id')\n    at loadUser (https://app.example.com/static/app.3f9a2b7c.js:10:${line})\n    at onClick (https://app.example.com/static/app.3f9a2b7c.js:20:5)`;
    for (const [index, line] of [12, 99].entries()) {
      const sessionId = newSessionId();
      await send(project, {
        sessionId,
        seq: 0,
        sentAt: T0 + 5_000,
        meta: sessionMeta(T0, { release: '3.0.0' }),
        events: [
          {
            t: T0 + 1_000 + index,
            type: 'error',
            name: 'TypeError',
            message: `Cannot read properties of undefined (reading 'id') for user alice${index}@example.com`,
            stack: stack(line),
            source: 'onerror',
          },
        ],
      });
    }
    await suite.test.processingWorker.runUntilIdle();
    const errors = await ok('GET', '/v1/errors', undefined, project);
    expect(errors.items).toHaveLength(1);
    const [error] = errors.items;
    expect(error).toMatchObject({ kind: 'error', severity: 'high', occurrences: 2, sessions: 2 });
    expect(error.fingerprint).toMatch(/^error:[0-9a-f]{32}$/);
    expect(error.title).not.toContain('alice');
    expect(
      await ok('GET', `/v1/errors/${error.fingerprint.slice('error:'.length)}`, undefined, project),
    ).toMatchObject({ id: error.id });
    expect(
      (await ok('GET', '/v1/issues?kind=error', undefined, project)).items.map((item: Json) => item.id),
    ).toEqual([error.id]);

    await worker().runUntilIdle();
    const events = suite.receiver.deliveries.map((delivery) => verified(delivery));
    expect(events.map((event) => event.type).sort()).toEqual(['cluster.created', 'error.new', 'error.rate']);
    const event = events.find((candidate) => candidate.type === 'error.new');
    expect(event).toMatchObject({ data: { severity: 'high', release: '3.0.0', counts: { count24h: 1 } } });
    expect(events.find((candidate) => candidate.type === 'error.rate').data.counts.count24h).toBe(2);
    expect(JSON.stringify(events)).not.toContain('alice');

    // The deliveries list filters by channel, event type and status.
    const list = async (query: string) =>
      (await ok('GET', `/v1/notifications/deliveries?${query}`, undefined, project)).items.map(
        (item: Json) => item.eventType,
      );
    expect((await list(`channel=${channel.id}`)).sort()).toEqual([
      'cluster.created',
      'error.new',
      'error.rate',
    ]);
    expect(await list('eventType=error.rate')).toEqual(['error.rate']);
    expect(await list('eventType=error.rate&status=pending')).toEqual([]);
    expect(await list('channel=ch_01JD2S5V8Q8C4Y3K2W9T7N6M5H')).toEqual([]);
    // Pages of one: every delivery once, newest first, then no cursor.
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(
        'GET',
        `/v1/notifications/deliveries?limit=1${cursor === undefined ? '' : `&cursor=${cursor}`}`,
        undefined,
        project,
      );
      paged.push(...page.items.map((item: Json) => item.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const all = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items.map(
      (item: Json) => item.id,
    );
    expect(paged).toEqual(all);
    expect(all).toEqual([...all].sort().reverse());
    const bad = await request('GET', '/v1/notifications/deliveries?cursor=nope', undefined, project);
    expect(bad.statusCode).toBe(400);
  });

  it('a session with thousands of errors and distinct fingerprints is clustered in one job', async () => {
    const project = await suite.test.createProject();
    const sessionId = newSessionId();
    // 2 chunks × 5 000 errors: 10 000 occurrences, 5 000 distinct error names (clusters).
    for (const seq of [0, 1]) {
      // Distinct function names (letters: digits in names are scrubbed) give distinct fingerprints.
      const letters = (index: number) =>
        Array.from({ length: 3 }, (_, place) =>
          String.fromCharCode(97 + (Math.floor(index / 26 ** place) % 26)),
        ).join('');
      const events = Array.from({ length: 5_000 }, (_, index) => ({
        t: T0 + seq * 10_000 + index,
        type: 'error',
        name: 'TypeError',
        message: 'boom',
        stack: `TypeError: boom\n    at handle_${letters(index)} (https://app.example.com/static/app.js:1:1)`,
        source: 'manual',
      }));
      await send(project, {
        sessionId,
        seq,
        sentAt: T0 + 20_000,
        ...(seq === 0 ? { meta: sessionMeta(T0) } : {}),
        events,
      });
    }
    await suite.test.processingWorker.runUntilIdle();
    const page = await ok('GET', '/v1/errors?limit=200', undefined, project);
    expect(page.items).toHaveLength(200);
    expect(page.items.every((item: Json) => item.occurrences === 2 && item.sessions === 1)).toBe(true);
    const clusters = await suite.test.database.database
      .selectFrom('issue_clusters')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', project.project.id)
      .executeTakeFirstOrThrow();
    expect(Number(clusters.count)).toBe(5_000);
    const stored = await suite.test.database.database
      .selectFrom('cluster_occurrences')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', project.project.id)
      .executeTakeFirstOrThrow();
    expect(Number(stored.count)).toBe(10_000);
  });
});
