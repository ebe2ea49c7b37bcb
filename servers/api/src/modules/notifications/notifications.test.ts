import {
  type ReceivedDelivery,
  type ReceiverResponse,
  startFetchReceiver,
  startNodeReceiver,
  type WebhookReceiver,
} from '@example/webhook-receiver';
import { webhookEventSchema } from '@svc/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, ingest, sessionMeta } from '../../../test/call-timelines.ts';
import { eventually } from '../../../test/eventually.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createDestinationPolicy, parseAllowedHosts } from '../../platform/http/destination-policy.ts';
import { queueCallReprocessing } from '../processing/call-processing.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from './deliveries.ts';
import { createDeliveryWorker } from './delivery-worker.ts';
import { MAX_CHANNELS } from './routes.ts';

// Issues and notifications end to end: chunks through POST /v1/ingest, the processing job that
// clusters findings and errors, rules, the outbox, and the delivery worker posting signed
// webhooks to a real receiver (examples/webhook-receiver, verifying with @svc/webhook-verify).

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

describe.each(ENGINES)('issues and notifications on %s', (engine) => {
  let test: TestApp;
  let receiver: WebhookReceiver;
  /** The clock the delivery worker schedules with. */
  let clock: number;

  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });
  beforeEach(async () => {
    clock = Date.now();
  });
  afterEach(async () => {
    await receiver?.close();
  });

  const { request, ok } = apiClient(() => test);

  const worker = (options: { timeoutMs?: number; allowed?: string } = {}) =>
    createDeliveryWorker(
      {
        database: test.database.database,
        masterKey: test.callDependencies.masterKey,
        policy: createDestinationPolicy(parseAllowedHosts(options.allowed ?? '127.0.0.1').allowed),
        log: test.app.log,
      },
      // The test's clock, never behind the wall clock (events are queued at wall-clock time).
      {
        now: () => Math.max(clock, Date.now()),
        random: () => 0.5,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    );

  /** A fresh project with a webhook channel at a fresh receiver and one rule. */
  async function setUp(
    rule: Record<string, unknown>,
    project?: TestProject,
    start: typeof startNodeReceiver = startNodeReceiver,
  ) {
    const owner = project ?? (await test.createProject());
    const created = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'http://127.0.0.1:9/' },
      owner,
    );
    receiver = await start({ secrets: created.secret });
    await ok('PATCH', `/v1/notifications/channels/${created.channel.id}`, { url: receiver.url }, owner);
    const made = await ok(
      'POST',
      '/v1/notifications/rules',
      { name: 'rule', channelIds: [created.channel.id], throttleMinutes: 0, ...rule },
      owner,
    );
    return { project: owner, channel: created.channel, secret: created.secret as string, rule: made };
  }

  /** Ingests one chunk (its JSON) for the project, and expects it stored. */
  const send = (project: TestProject, chunk: Parameters<typeof chunkBytes>[0]) =>
    ingest(test.app, project.projectKey, chunkBytes(chunk));

  /** Ingests one session with a call that never connects (webrtc_connect_failure). */
  async function failingCallSession(
    project: TestProject,
    options: { release?: string; start?: number } = {},
  ) {
    const sessionId = newSessionId();
    const start = options.start ?? T0;
    const call = callTimeline({ start: start + 1_000, setupMs: null, fail: true, candidateError: 701 });
    await send(project, {
      sessionId,
      seq: 0,
      sentAt: call.end + 100,
      meta: sessionMeta(start, options.release === undefined ? {} : { release: options.release }),
      events: call.items,
    });
    await test.callWorker.runUntilIdle();
    return sessionId;
  }

  const verified = (delivery: ReceivedDelivery) => {
    const parsed = webhookEventSchema.safeParse(JSON.parse(delivery.rawBody));
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    return delivery.event as Json;
  };

  it('a call that fails to connect clusters, notifies once, and reaches the receiver verified', async () => {
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
    const delivery = await receiver.waitFor((received) => received.event.type === 'cluster.created');
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
      `${test.configuration.appUrl}/sessions/${sessionId}?t=${Date.parse(finding.t) - T0}`,
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
    await queueCallReprocessing(test.database.database, project.project.id);
    await test.callWorker.runUntilIdle();
    expect((await ok('GET', `/v1/issues/${failure.id}`, undefined, project)).occurrences).toBe(2);
    expect((await ok('GET', '/v1/inbox', undefined, project)).items).toHaveLength(1);
  });

  it('threshold, regression, reopening, ignoring and the throttle', async () => {
    // This receiver is the fetch-adapter one (`@svc/webhook-verify/fetch`).
    const { project, rule } = await setUp(
      {
        source: {
          type: 'cluster',
          events: ['cluster.threshold', 'cluster.regressed', 'cluster.reopened'],
          threshold: 2,
        },
      },
      undefined,
      startFetchReceiver,
    );
    const types = async () =>
      (await ok('GET', '/v1/inbox', undefined, project)).items.map((item: Json) => item.type).reverse();

    await failingCallSession(project, { release: '1.0.0' });
    expect(await types()).toEqual([]);
    await failingCallSession(project, { release: '1.0.0' });
    expect(await types()).toEqual(['cluster.threshold']);
    await failingCallSession(project, { release: '1.0.0' });
    expect(await types()).toEqual(['cluster.threshold']); // crossed once, not again

    const cluster = (await ok('GET', '/v1/issues?kind=webrtc_connect_failure', undefined, project)).items[0];
    const resolved = await ok('PATCH', `/v1/issues/${cluster.id}`, { status: 'resolved' }, project);
    expect(resolved).toMatchObject({ status: 'resolved', resolvedRelease: '1.0.0' });

    await failingCallSession(project, { release: '1.1.0' });
    expect(await types()).toEqual(['cluster.threshold', 'cluster.regressed']);
    expect((await ok('GET', `/v1/issues/${cluster.id}`, undefined, project)).status).toBe('open');

    await ok(
      'PATCH',
      '/v1/issues',
      { ids: [cluster.id], status: 'resolved', resolvedInRelease: '1.1.0' },
      project,
    );
    await failingCallSession(project, { release: '1.0.5' });
    expect(await types()).toEqual(['cluster.threshold', 'cluster.regressed', 'cluster.reopened']);

    // A throttle of 60 minutes holds the next reopening of the same cluster.
    await ok('PATCH', `/v1/notifications/rules/${rule.id}`, { throttleMinutes: 60 }, project);
    await ok(
      'PATCH',
      `/v1/issues/${cluster.id}`,
      { status: 'resolved', resolvedInRelease: '1.1.0' },
      project,
    );
    await failingCallSession(project, { release: '1.0.5' });
    expect((await ok('GET', `/v1/issues/${cluster.id}`, undefined, project)).status).toBe('open');
    expect(await types()).toHaveLength(3);

    // Ignored: counted, never notified.
    await ok('PATCH', `/v1/notifications/rules/${rule.id}`, { throttleMinutes: 0 }, project);
    await ok('PATCH', `/v1/issues/${cluster.id}`, { status: 'ignored' }, project);
    await failingCallSession(project, { release: '2.0.0' });
    const ignored = await ok('GET', `/v1/issues/${cluster.id}`, undefined, project);
    expect(ignored).toMatchObject({ status: 'ignored', occurrences: 7 });
    expect(await types()).toHaveLength(3);

    // Every notification went to the channel, each verified.
    await worker().runUntilIdle();
    expect(receiver.deliveries.map((delivery) => verified(delivery).type).sort()).toEqual([
      'cluster.regressed',
      'cluster.reopened',
      'cluster.threshold',
    ]);
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
    await test.callWorker.runUntilIdle();
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
    const events = receiver.deliveries.map((delivery) => verified(delivery));
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

  it('custom rules match track() events by name, properties and severity, once each', async () => {
    const { project } = await setUp({
      source: { type: 'custom', name: 'checkout_failed', properties: { plan: 'pro' } },
    });
    const sessionId = newSessionId();
    const events = [
      { t: T0 + 1_000, type: 'custom', name: 'checkout_failed', props: { plan: 'pro', amount: 49 } },
      { t: T0 + 2_000, type: 'custom', name: 'checkout_failed', props: { plan: 'free' } },
      { t: T0 + 3_000, type: 'custom', name: 'page_viewed' },
      {
        t: T0 + 4_000,
        type: 'custom',
        name: 'checkout_failed',
        props: { plan: 'pro' },
        severity: 'critical',
      },
    ];
    await send(project, {
      sessionId,
      seq: 0,
      sentAt: T0 + 5_000,
      meta: sessionMeta(T0, { release: '4.2.0' }),
      events,
    });
    await test.callWorker.runUntilIdle();
    await worker().runUntilIdle();
    const received = receiver.deliveries
      .map((delivery) => verified(delivery))
      .sort((a, b) => a.data.links.replay.localeCompare(b.data.links.replay));
    expect(received.map((event) => [event.type, event.data.severity, event.data.properties])).toEqual([
      ['custom', 'info', { plan: 'pro', amount: 49 }],
      ['custom', 'critical', { plan: 'pro' }],
    ]);
    expect(received[0].data).toMatchObject({
      title: 'Custom event: checkout_failed',
      release: '4.2.0',
      route: '/call',
      links: { replay: `${test.configuration.appUrl}/sessions/${sessionId}?t=1000` },
    });
    // Each event notifies once, however often its session is processed again.
    await queueCallReprocessing(test.database.database, project.project.id);
    await send(project, {
      sessionId,
      seq: 1,
      sentAt: T0 + 9_000,
      events: [{ t: T0 + 8_000, type: 'error', message: 'x', source: 'manual' }],
    });
    await test.callWorker.runUntilIdle();
    expect(
      (await ok('GET', '/v1/inbox', undefined, project)).items.filter((item: Json) => item.type === 'custom'),
    ).toHaveLength(2);
    // A track() without a severity is not a problem of the session.
    const issues = await ok('GET', `/v1/sessions/${sessionId}/issues`, undefined, project);
    expect(
      issues.items.filter((item: Json) => item.kind === 'custom').map((item: Json) => item.severity),
    ).toEqual(['critical']);
    expect((await ok('GET', `/v1/sessions/${sessionId}`, undefined, project)).level).toBe('critical');

    // minSeverity: only the critical one would match now.
    const [rule] = (await ok('GET', '/v1/notifications/rules', undefined, project)).items;
    await ok(
      'PATCH',
      `/v1/notifications/rules/${rule.id}`,
      { source: { type: 'custom', name: 'checkout_failed', minSeverity: 'high' } },
      project,
    );
    const next = newSessionId();
    await send(project, {
      sessionId: next,
      seq: 0,
      sentAt: T0 + 5_000,
      meta: sessionMeta(T0),
      events: events.slice(0, 2),
    });
    await test.callWorker.runUntilIdle();
    expect(
      (await ok('GET', '/v1/inbox', undefined, project)).items.filter((item: Json) => item.type === 'custom'),
    ).toHaveLength(2);
  });

  it('a session with thousands of errors and distinct fingerprints is clustered in one job', async () => {
    const project = await test.createProject();
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
    await test.callWorker.runUntilIdle();
    const page = await ok('GET', '/v1/errors?limit=200', undefined, project);
    expect(page.items).toHaveLength(200);
    expect(page.items.every((item: Json) => item.occurrences === 2 && item.sessions === 1)).toBe(true);
    const clusters = await test.database.database
      .selectFrom('issue_clusters')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', project.project.id)
      .executeTakeFirstOrThrow();
    expect(Number(clusters.count)).toBe(5_000);
    const stored = await test.database.database
      .selectFrom('cluster_occurrences')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', project.project.id)
      .executeTakeFirstOrThrow();
    expect(Number(stored.count)).toBe(10_000);
  });

  it('retries on the PROTOCOL.md schedule, records every attempt, and fails after the sixth', async () => {
    const { project } = await setUp({ source: { type: 'cluster', events: ['cluster.created'] } });
    receiver.setResponder(() => ({ status: 500, body: 'x'.repeat(5_000) }));
    await failingCallSession(project);
    const deliveries = worker();
    const [queued] = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items;
    const start = Date.parse(queued.nextAttemptAt);
    const due: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const state = await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project);
      const dueAt = Date.parse(state.nextAttemptAt);
      due.push(dueAt - start);
      if (attempt > 1) {
        // One millisecond early, nothing is due.
        clock = dueAt - 1;
        expect(await deliveries.runUntilIdle()).toBe(0);
      }
      clock = dueAt;
      expect(await deliveries.runUntilIdle()).toBe(1);
    }
    // 0, then 1 min, 10 min, 1 h, 4 h, 12 h after each failure (jitter pinned to 0).
    const expected = [0];
    for (const delay of RETRY_DELAYS_MS) expected.push((expected.at(-1) as number) + delay);
    expect(due.map((value) => Math.round(value / 1000))).toEqual(expected.map((value) => value / 1000));
    expect(expected.at(-1)).toBeLessThan(24 * 3600 * 1000);

    const final = await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project);
    expect(final).toMatchObject({ status: 'failed', attempts: 6, lastStatus: 500 });
    expect(final.attemptLog.map((attempt: Json) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(final.attemptLog[0].responseBody).toHaveLength(2048);
    expect(receiver.deliveries.map((delivery) => delivery.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(receiver.deliveries.map((delivery) => delivery.eventId)).size).toBe(1);
    // Each attempt was signed when it was sent (its `t` is the wall clock of that attempt).
    expect(receiver.rejected).toHaveLength(0);
    for (const delivery of receiver.deliveries) {
      const signedAt = Number(/^t=(\d+),/.exec(delivery.signature)?.[1]) * 1000;
      expect(Math.abs(delivery.receivedAt - signedAt)).toBeLessThan(2_000);
    }
    clock += 48 * 3600 * 1000;
    expect(await deliveries.runUntilIdle()).toBe(0);

    const failed = await ok('GET', '/v1/notifications/deliveries?status=failed', undefined, project);
    expect(failed.items.map((item: Json) => item.id)).toEqual([queued.id]);
    expect(
      (await ok('GET', '/v1/notifications/deliveries?status=delivered', undefined, project)).items,
    ).toHaveLength(0);

    // Replay: a new delivery of the same event; the receiver sees the same evt_ id again.
    receiver.setResponder(() => ({ status: 204 }));
    const replay = await ok('POST', `/v1/notifications/deliveries/${queued.id}/replay`, undefined, project);
    expect(replay).toMatchObject({ status: 'pending', replayOf: queued.id, eventId: queued.eventId });
    expect(await deliveries.runUntilIdle()).toBe(1);
    const replayed = receiver.deliveries.at(-1) as ReceivedDelivery;
    expect(replayed).toMatchObject({
      eventId: queued.eventId,
      deliveryId: replay.id,
      attempt: 1,
      duplicate: true,
    });
    expect(await ok('GET', `/v1/notifications/deliveries/${replay.id}`, undefined, project)).toMatchObject({
      status: 'delivered',
      lastStatus: 204,
    });
  });

  it('a receiver that hangs holds one slot: deliveries to other channels go on meanwhile', async () => {
    const { project, channel } = await setUp({ source: { type: 'cluster', events: ['cluster.created'] } });
    const slow = await startNodeReceiver({ secrets: 'whsec_unused', respond: () => 'hang' });
    try {
      const hanging = await ok(
        'POST',
        '/v1/notifications/channels',
        { type: 'webhook', name: 'slow', url: slow.url },
        project,
      );
      slow.setSecrets(hanging.secret);
      await ok('POST', `/v1/notifications/channels/${hanging.channel.id}/test`, undefined, project);
      const deliveries = worker({ timeoutMs: 5_000 });
      deliveries.start();
      try {
        await slow.waitFor(() => true);
        const started = Date.now();
        for (let index = 0; index < 5; index += 1)
          await ok('POST', `/v1/notifications/channels/${channel.id}/test`, undefined, project);
        deliveries.wake();
        await eventually(() => receiver.deliveries.length === 5, { timeoutMs: 4_000, intervalMs: 20 });
        // Well before the hanging attempt's 5 s timeout.
        expect(Date.now() - started).toBeLessThan(4_000);
        expect(slow.deliveries).toHaveLength(1);
      } finally {
        await deliveries.stop();
      }
      const failed = await ok(
        'GET',
        `/v1/notifications/deliveries?channel=${hanging.channel.id}`,
        undefined,
        project,
      );
      expect(failed.items[0].attemptLog[0]).toMatchObject({ outcome: 'failed' });
      expect(failed.items[0].attemptLog[0].error).toMatch(/5000 ms/);
      // Its retry would be due in a minute: deleting the channel ends it (other tests share the outbox).
      await ok('DELETE', `/v1/notifications/channels/${hanging.channel.id}`, undefined, project);
    } finally {
      await slow.close();
    }
  });

  it('3xx, a closed connection and 429 with Retry-After are failures that follow the schedule', async () => {
    const { project } = await setUp({ source: { type: 'cluster', events: ['cluster.created'] } });
    const answers: ReceiverResponse[] = [
      { status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } },
      'close',
      { status: 429, headers: { 'retry-after': '7200' } },
      { status: 200 },
    ];
    receiver.setResponder(() => answers[receiver.deliveries.length - 1] ?? { status: 200 });
    await failingCallSession(project);
    const deliveries = worker();
    const [queued] = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items;
    const states: Json[] = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      const state = await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project);
      clock = Date.parse(state.nextAttemptAt);
      expect(await deliveries.runUntilIdle()).toBe(1);
      states.push(await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project));
    }
    const log = (states.at(-1) as Json).attemptLog;
    expect(log.map((attempt: Json) => [attempt.outcome, attempt.statusCode ?? null])).toEqual([
      ['failed', 302],
      ['failed', null],
      ['failed', 429],
      ['delivered', 200],
    ]);
    expect(log[0].error).toMatch(/redirect/i);
    expect(log[1].error).toBeDefined();
    // Retry-After 7200 s pushed the fourth attempt past the schedule's 1 h.
    expect(Date.parse(log[3].startedAt) - Date.parse(log[2].startedAt)).toBeGreaterThanOrEqual(7_200_000);
    expect((states.at(-1) as Json).status).toBe('delivered');
  });

  it('the rotation window signs with both secrets for 24 h, then with the new one', async () => {
    const {
      project,
      channel,
      secret: oldSecret,
    } = await setUp({
      source: { type: 'cluster', events: ['cluster.created', 'cluster.threshold'], threshold: 2 },
    });
    const rotated = await ok(
      'POST',
      `/v1/notifications/channels/${channel.id}/rotate-secret`,
      undefined,
      project,
    );
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(Date.parse(rotated.channel.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(
      23.9 * 3600 * 1000,
    );

    // A receiver still on the old secret accepts deliveries in the window, as does one on the new.
    receiver.setSecrets(oldSecret);
    await failingCallSession(project);
    await worker().runUntilIdle();
    const first = await receiver.waitFor(() => true);
    expect(first.signature.match(/v1=/g)).toHaveLength(2);
    receiver.setSecrets(rotated.secret);
    await failingCallSession(project);
    clock = Date.now() + 25 * 3600 * 1000;
    await worker().runUntilIdle();
    const second = await receiver.waitFor((delivery) => delivery.event.type === 'cluster.threshold');
    expect(second.signature.match(/v1=/g)).toHaveLength(1);
    expect(receiver.rejected).toHaveLength(0);

    // A test notification after the window: the old secret alone no longer verifies.
    receiver.setSecrets(oldSecret);
    const queued = await ok('POST', `/v1/notifications/channels/${channel.id}/test`, undefined, project);
    await worker().runUntilIdle();
    expect(receiver.rejected).toHaveLength(1);
    // The worker's clock is past this delivery's 24 h window too, so it is not retried: replay it.
    const state = await ok('GET', `/v1/notifications/deliveries/${queued.deliveryId}`, undefined, project);
    expect(state).toMatchObject({ status: 'failed', lastStatus: 400 });
    receiver.setSecrets(rotated.secret);
    await ok('POST', `/v1/notifications/deliveries/${queued.deliveryId}/replay`, undefined, project);
    await worker().runUntilIdle();
    const test_ = await receiver.waitFor((delivery) => delivery.event.type === 'notification.test');
    expect(verified(test_)).toMatchObject({ id: queued.eventId, data: { severity: 'info' } });
    // A test notification is not in the inbox.
    expect(
      (await ok('GET', '/v1/inbox', undefined, project)).items.some(
        (item: Json) => item.type === 'notification.test',
      ),
    ).toBe(false);
  });

  it('refuses private, loopback and metadata destinations that are not allow-listed, and records it', async () => {
    const { project, channel } = await setUp({ source: { type: 'cluster', events: ['cluster.created'] } });
    await failingCallSession(project);
    // No allow-list: the receiver on 127.0.0.1 is refused and sees nothing.
    expect(await worker({ allowed: '' }).runUntilIdle()).toBe(1);
    const [refused] = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items;
    expect(refused).toMatchObject({ status: 'failed', attempts: 1 });
    expect(refused.attemptLog[0]).toMatchObject({ outcome: 'refused' });
    expect(refused.attemptLog[0].error).toMatch(/127\.0\.0\.1/);
    expect(receiver.deliveries).toHaveLength(0);

    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/hook',
      'http://[::1]:9/',
    ]) {
      await ok('PATCH', `/v1/notifications/channels/${channel.id}`, { url }, project);
      const queued = await ok('POST', `/v1/notifications/channels/${channel.id}/test`, undefined, project);
      await worker().runUntilIdle();
      const state = await ok('GET', `/v1/notifications/deliveries/${queued.deliveryId}`, undefined, project);
      expect(state, url).toMatchObject({
        status: 'failed',
        attemptLog: [expect.objectContaining({ outcome: 'refused' })],
      });
    }
  });

  it('validates channels and rules, keeps secrets out of reads, and scopes everything to the project', async () => {
    const owner = await test.createProject();
    const other = await test.createProject();
    const bad = async (url: string, body: unknown, status = 400) => {
      const response = await request('POST', url, body, owner);
      expect(response.statusCode, response.body).toBe(status);
      expect(response.json()).toMatchObject({ code: status === 404 ? 'not_found' : 'invalid' });
    };
    await bad('/v1/notifications/channels', { type: 'webhook', name: 'x', url: 'ftp://example.com' });
    await bad('/v1/notifications/channels', {
      type: 'webhook',
      name: 'x',
      url: 'https://user:pw@example.com/',
    });
    await bad('/v1/notifications/channels', { type: 'email', name: 'x', url: 'https://example.com/' });
    await bad('/v1/notifications/rules', {
      name: 'x',
      source: { type: 'cluster', events: ['cluster.threshold'] },
    });
    await bad('/v1/notifications/rules', {
      name: 'x',
      source: { type: 'cluster', events: ['cluster.created'], kinds: ['nope'] },
    });
    await bad('/v1/notifications/rules', { name: 'x', source: { type: 'custom' } });

    const created = await ok(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'hooks', url: 'https://hooks.example.com/x' },
      owner,
    );
    expect(created.secret).toMatch(/^whsec_[0-9a-z]{52}$/);
    const read = await ok('GET', `/v1/notifications/channels/${created.channel.id}`, undefined, owner);
    expect(JSON.stringify(read)).not.toContain(created.secret);
    const stored = await test.database.database
      .selectFrom('notification_channels')
      .select('sealed_secret')
      .where('id', '=', created.channel.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.sealed_secret).includes(Buffer.from(created.secret.slice(6)))).toBe(false);

    // Another project's channel is not found, and cannot be routed to.
    expect(
      (await request('GET', `/v1/notifications/channels/${created.channel.id}`, undefined, other)).statusCode,
    ).toBe(404);
    const foreign = await request(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'x',
        source: { type: 'cluster', events: ['cluster.created'] },
        channelIds: [created.channel.id],
      },
      other,
    );
    expect(foreign.statusCode, foreign.body).toBe(400);

    const rule = await ok(
      'POST',
      '/v1/notifications/rules',
      {
        name: 'calls',
        source: { type: 'cluster', events: ['cluster.created'], minSeverity: 'high' },
        channelIds: [created.channel.id],
      },
      owner,
    );
    expect(rule).toMatchObject({ enabled: true, throttleMinutes: 60, channelIds: [created.channel.id] });
    expect((await ok('GET', '/v1/notifications/rules', undefined, owner)).items).toHaveLength(1);
    expect((await ok('GET', '/v1/notifications/rules', undefined, other)).items).toHaveLength(0);
    expect((await request('DELETE', `/v1/notifications/rules/${rule.id}`, undefined, other)).statusCode).toBe(
      404,
    );

    // Deleting the channel fails its pending deliveries and unroutes the rule.
    const queued = await ok(
      'POST',
      `/v1/notifications/channels/${created.channel.id}/test`,
      undefined,
      owner,
    );
    await ok('DELETE', `/v1/notifications/channels/${created.channel.id}`, undefined, owner);
    expect((await ok('GET', `/v1/notifications/rules/${rule.id}`, undefined, owner)).channelIds).toEqual([]);
    expect(
      await ok('GET', `/v1/notifications/deliveries/${queued.deliveryId}`, undefined, owner),
    ).toMatchObject({
      status: 'failed',
      lastError: 'The channel was deleted',
    });
    await ok('DELETE', `/v1/notifications/rules/${rule.id}`, undefined, owner);

    // A project has at most MAX_CHANNELS channels: the next is a 409 that creates nothing.
    const fresh = await test.createProject();
    for (let index = 0; index < MAX_CHANNELS; index += 1)
      await ok(
        'POST',
        '/v1/notifications/channels',
        { type: 'webhook', name: `c${index}`, url: 'https://hooks.example.com/x' },
        fresh,
      );
    const full = await request(
      'POST',
      '/v1/notifications/channels',
      { type: 'webhook', name: 'one more', url: 'https://hooks.example.com/x' },
      fresh,
    );
    expect(full.statusCode, full.body).toBe(409);
    expect(full.json()).toMatchObject({
      code: 'invalid',
      error: `A project has at most ${MAX_CHANNELS} channels`,
    });
    expect((await ok('GET', '/v1/notifications/channels', undefined, fresh)).items).toHaveLength(
      MAX_CHANNELS,
    );
    expect(
      (await request('GET', '/v1/issues', undefined, { ...owner, headers: { authorization: 'Bearer nope' } }))
        .statusCode,
    ).toBe(401);
  });
});

describe('a receiver that hangs', () => {
  let test: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    test = await createTestApp('pglite');
  });
  afterAll(async () => {
    await receiver?.close();
    await test?.close();
  });

  it('is a failed attempt after the 10 s timeout', { timeout: 30_000 }, async () => {
    receiver = await startNodeReceiver({ secrets: 'unused', respond: () => 'hang' });
    const project = test.first;
    const created = await test.app.inject({
      method: 'POST',
      url: '/v1/notifications/channels',
      headers: project.headers,
      payload: { type: 'webhook', name: 'slow', url: receiver.url },
    });
    receiver.setSecrets(created.json().secret);
    const queued = await test.app.inject({
      method: 'POST',
      url: `/v1/notifications/channels/${created.json().channel.id}/test`,
      headers: project.headers,
    });
    const started = Date.now();
    const worker = createDeliveryWorker({
      database: test.database.database,
      masterKey: test.callDependencies.masterKey,
      policy: createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed),
      log: test.app.log,
    });
    expect(await worker.runUntilIdle()).toBe(1);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(9_900);
    expect(elapsed).toBeLessThan(15_000);
    const state = await test.app.inject({
      url: `/v1/notifications/deliveries/${queued.json().deliveryId}`,
      headers: project.headers,
    });
    expect(state.json()).toMatchObject({ status: 'pending', attempts: 1 });
    expect(state.json().attemptLog[0]).toMatchObject({ outcome: 'failed' });
    expect(state.json().attemptLog[0].error).toMatch(/10000 ms/);
    expect(receiver.deliveries).toHaveLength(1);
  });
});
