import {
  type ReceivedDelivery,
  type ReceiverResponse,
  startNodeReceiver,
  type WebhookReceiver,
} from '@example/webhook-receiver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/eventually.ts';
import type { Json } from '../../../test/http.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createDestinationPolicy, parseAllowedHosts } from '../../platform/http/destination-policy.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from './deliveries.ts';
import { createDeliveryWorker } from './delivery-worker.ts';
import { notificationsSuite } from './notifications.fixture.ts';

// The delivery worker: the retry schedule and its attempt log, replays, receivers that hang,
// redirects, closed connections and Retry-After, destinations that are not allowed.

describe.each(ENGINES)('issues and notifications on %s', (engine) => {
  const { suite, ok, worker, setUp, failingCallSession } = notificationsSuite(engine);

  it('retries on the PROTOCOL.md schedule, records every attempt, and fails after the sixth', async () => {
    const { project } = await setUp({ source: { type: 'cluster', events: ['cluster.created'] } });
    suite.receiver.setResponder(() => ({ status: 500, body: 'x'.repeat(5_000) }));
    await failingCallSession(project);
    const deliveries = worker();
    const [queued] = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items;
    // The worker's clock is the test's, never behind the wall clock: each attempt runs at a test
    // time ahead of the wall clock, so a slow attempt moves nothing.
    const delays: number[] = [];
    let attemptedAt: number | undefined;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const state = await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project);
      const dueAt = Date.parse(state.nextAttemptAt);
      if (attemptedAt !== undefined) {
        delays.push(dueAt - attemptedAt);
        // One millisecond early, nothing is due.
        suite.clock = dueAt - 1;
        expect(await deliveries.runUntilIdle()).toBe(0);
      }
      attemptedAt = Math.max(dueAt, Date.now() + 60_000);
      suite.clock = attemptedAt;
      expect(await deliveries.runUntilIdle()).toBe(1);
    }
    // 1 min, 10 min, 1 h, 4 h, 12 h after each failure (jitter pinned to 0).
    expect(delays).toEqual([...RETRY_DELAYS_MS]);
    const expected = RETRY_DELAYS_MS.reduce((total, delay) => total + delay, 0);
    expect(expected).toBeLessThan(24 * 3600 * 1000);

    const final = await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project);
    expect(final).toMatchObject({ status: 'failed', attempts: 6, lastStatus: 500 });
    expect(final.attemptLog.map((attempt: Json) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(final.attemptLog[0].responseBody).toHaveLength(2048);
    expect(suite.receiver.deliveries.map((delivery) => delivery.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(suite.receiver.deliveries.map((delivery) => delivery.eventId)).size).toBe(1);
    // Each attempt was signed when it was sent (its `t` is the wall suite.clock of that attempt).
    expect(suite.receiver.rejected).toHaveLength(0);
    for (const delivery of suite.receiver.deliveries) {
      const signedAt = Number(/^t=(\d+),/.exec(delivery.signature)?.[1]) * 1000;
      expect(Math.abs(delivery.receivedAt - signedAt)).toBeLessThan(2_000);
    }
    suite.clock += 48 * 3600 * 1000;
    expect(await deliveries.runUntilIdle()).toBe(0);

    const failed = await ok('GET', '/v1/notifications/deliveries?status=failed', undefined, project);
    expect(failed.items.map((item: Json) => item.id)).toEqual([queued.id]);
    expect(
      (await ok('GET', '/v1/notifications/deliveries?status=delivered', undefined, project)).items,
    ).toHaveLength(0);

    // Replay: a new delivery of the same event; the suite.receiver sees the same evt_ id again.
    suite.receiver.setResponder(() => ({ status: 204 }));
    const replay = await ok('POST', `/v1/notifications/deliveries/${queued.id}/replay`, undefined, project);
    expect(replay).toMatchObject({ status: 'pending', replayOf: queued.id, eventId: queued.eventId });
    expect(await deliveries.runUntilIdle()).toBe(1);
    const replayed = suite.receiver.deliveries.at(-1) as ReceivedDelivery;
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

  it('a suite.receiver that hangs holds one slot: deliveries to other channels go on meanwhile', async () => {
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
        await eventually(() => suite.receiver.deliveries.length === 5, { timeoutMs: 4_000, intervalMs: 20 });
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
    suite.receiver.setResponder(() => answers[suite.receiver.deliveries.length - 1] ?? { status: 200 });
    await failingCallSession(project);
    const deliveries = worker();
    const [queued] = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items;
    const states: Json[] = [];
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      const state = await ok('GET', `/v1/notifications/deliveries/${queued.id}`, undefined, project);
      suite.clock = Date.parse(state.nextAttemptAt);
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

  it('refuses private, loopback and metadata destinations that are not allow-listed, and records it', async () => {
    const { project, channel } = await setUp({ source: { type: 'cluster', events: ['cluster.created'] } });
    await failingCallSession(project);
    // No allow-list: the suite.receiver on 127.0.0.1 is refused and sees nothing.
    expect(await worker({ allowed: '' }).runUntilIdle()).toBe(1);
    const [refused] = (await ok('GET', '/v1/notifications/deliveries', undefined, project)).items;
    expect(refused).toMatchObject({ status: 'failed', attempts: 1 });
    expect(refused.attemptLog[0]).toMatchObject({ outcome: 'refused' });
    expect(refused.attemptLog[0].error).toMatch(/127\.0\.0\.1/);
    expect(suite.receiver.deliveries).toHaveLength(0);

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
      masterKey: test.processingDependencies.masterKey,
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
