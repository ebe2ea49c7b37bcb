import { startFetchReceiver } from '@example/webhook-receiver';
import { describe, expect, it } from 'vitest';
import { sessionMeta } from '../../../test/call-timelines.ts';
import type { Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { queueReprocessing } from '../processing/index.ts';
import { notificationsSuite, T0, verified } from './notifications.fixture.ts';

// Rules: cluster events past a threshold, regressions, reopening, ignoring and the throttle;
// custom rules on track() events by name, properties and severity.

describe.each(ENGINES)('issues and notifications on %s', (engine) => {
  const { suite, ok, worker, setUp, send, failingCallSession } = notificationsSuite(engine);

  it('threshold, regression, reopening, ignoring and the throttle', async () => {
    // This suite.receiver is the fetch-adapter one (`@svc/webhook-verify/fetch`).
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
    expect(suite.receiver.deliveries.map((delivery) => verified(delivery).type).sort()).toEqual([
      'cluster.regressed',
      'cluster.reopened',
      'cluster.threshold',
    ]);
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
    await suite.test.processingWorker.runUntilIdle();
    await worker().runUntilIdle();
    const received = suite.receiver.deliveries
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
      links: { replay: `${suite.test.configuration.appUrl}/sessions/${sessionId}?t=1000` },
    });
    // Each event notifies once, however often its session is processed again.
    await queueReprocessing(suite.test.database.database, project.project.id);
    await send(project, {
      sessionId,
      seq: 1,
      sentAt: T0 + 9_000,
      events: [{ t: T0 + 8_000, type: 'error', message: 'x', source: 'manual' }],
    });
    await suite.test.processingWorker.runUntilIdle();
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
    await suite.test.processingWorker.runUntilIdle();
    expect(
      (await ok('GET', '/v1/inbox', undefined, project)).items.filter((item: Json) => item.type === 'custom'),
    ).toHaveLength(2);
  });
});
