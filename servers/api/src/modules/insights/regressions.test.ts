import { releaseRegressionSchema, vitalsRegressionSchema, webhookEventSchema } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { notificationsSuite, verified } from '../notifications/notifications.fixture.ts';
import { checkAllRegressions, checkRegressions, createRegressionWorker } from './regressions.ts';
import { DAY_MS, seedCalls, seedPageViews, seedSessions } from './seed.fixture.ts';

// Regressions end to end: seeded sessions, calls and page views, checkRegressions, a webhook
// channel and a `regression` rule, the delivery worker posting to a real receiver that verifies
// the signature; each regression fires once, and what is not worse does not fire.

const HOUR_MS = 3600 * 1000;

/** `count` scores, the first `poor` of them below 60. */
const scores = (count: number, poor: number) =>
  Array.from({ length: count }, (_, index) => (index < poor ? 30 : 90));

describe.each(ENGINES)('regressions on %s', (engine) => {
  const { suite, ok, worker, setUp } = notificationsSuite(engine);

  it('a release worse than the one before it fires release.regression once; an equal one does not', async () => {
    const { project } = await setUp({ source: { type: 'regression' } });
    const database = suite.test.database.database;
    const projectId = project.project.id;
    const now = new Date();
    const before = now.getTime() - 10 * DAY_MS;
    const after = now.getTime() - 2 * DAY_MS;
    // Production: 5% of sessions with an error in 1.0.0, 20% in 2.0.0. Calls alike (10 and 12 poor of 120).
    await seedSessions(database, projectId, 200, {
      release: '1.0.0',
      environment: 'production',
      start: before,
      withErrors: 10,
    });
    await seedSessions(database, projectId, 200, {
      release: '2.0.0',
      environment: 'production',
      start: after,
      withErrors: 40,
    });
    await seedCalls(database, projectId, scores(120, 10), {
      release: '1.0.0',
      environment: 'production',
      start: before,
    });
    await seedCalls(database, projectId, scores(120, 12), {
      release: '2.0.0',
      environment: 'production',
      start: after,
    });
    // Staging: the same error rate (10%) in both; poor calls 10 of 150, then 60 of 150.
    await seedSessions(database, projectId, 200, {
      release: '1.0.0',
      environment: 'staging',
      start: before,
      withErrors: 20,
    });
    await seedSessions(database, projectId, 200, {
      release: '2.0.0',
      environment: 'staging',
      start: after,
      withErrors: 20,
    });
    await seedCalls(database, projectId, scores(150, 10), {
      release: '1.0.0',
      environment: 'staging',
      start: before,
    });
    await seedCalls(database, projectId, scores(150, 60), {
      release: '2.0.0',
      environment: 'staging',
      start: after,
    });
    // Too few sessions to tell: 3.0.0 with every one of its 50 sessions failing.
    await seedSessions(database, projectId, 50, {
      release: '3.0.0',
      environment: 'production',
      start: after + HOUR_MS,
      withErrors: 50,
    });

    const check = await checkRegressions(database, project.project, now, {
      appUrl: suite.test.configuration.appUrl,
    });
    expect(check.fired).toEqual([
      { type: 'release.regression', key: JSON.stringify(['production', '2.0.0', 'error_rate']) },
      { type: 'release.regression', key: JSON.stringify(['staging', '2.0.0', 'call_quality']) },
    ]);
    expect(check).toMatchObject({ events: 2, deliveries: 2 });

    expect(await worker().runUntilIdle()).toBe(2);
    const errors = verified(
      await suite.receiver.waitFor(
        (received) =>
          received.event.type === 'release.regression' &&
          (received.event.data as Json).regression?.metric === 'error_rate',
      ),
    );
    expect(errors).toMatchObject({
      type: 'release.regression',
      projectId,
      orgId: project.project.organization_id,
      data: {
        title: 'Release 2.0.0 has more sessions with errors than 1.0.0',
        severity: 'high',
        release: '2.0.0',
        counts: {
          sessions: 200,
          sessionsWithErrors: 40,
          previousSessions: 200,
          previousSessionsWithErrors: 10,
        },
        links: { releases: `${suite.test.configuration.appUrl}/releases` },
        regression: {
          metric: 'error_rate',
          environment: 'production',
          release: '2.0.0',
          previousRelease: '1.0.0',
          current: { events: 40, total: 200, rate: 0.2 },
          previous: { events: 10, total: 200, rate: 0.05 },
          alpha: 0.01,
          minTotal: 100,
        },
      },
    });
    // Pooled p = 50/400: z = 0.15 / √(0.125 · 0.875 · (2/200)).
    expect(errors.data.regression.z).toBeCloseTo(0.15 / Math.sqrt(0.125 * 0.875 * 0.01), 10);
    expect(errors.data.regression.pOneSided).toBeLessThan(0.001);
    expect(errors.data.summary).toContain('20.0% of 200 sessions of 2.0.0 in production had an error');
    // A receiver parses the event with the protocol's schemas: every field the server sent is one
    // of `releaseRegressionSchema`'s (parsing drops none), and the envelope still takes the event.
    expect(webhookEventSchema.safeParse(errors).success).toBe(true);
    expect(releaseRegressionSchema.parse(errors.data.regression)).toEqual(errors.data.regression);

    const calls = verified(
      await suite.receiver.waitFor(
        (received) => (received.event.data as Json).regression?.metric === 'call_quality',
      ),
    );
    expect(calls.data).toMatchObject({
      title: 'Release 2.0.0 has more poor calls than 1.0.0',
      counts: { calls: 150, poorCalls: 60, previousCalls: 150, previousPoorCalls: 10 },
      regression: {
        environment: 'staging',
        current: { events: 60, total: 150 },
        previous: { events: 10, total: 150 },
      },
    });
    expect(releaseRegressionSchema.parse(calls.data.regression)).toEqual(calls.data.regression);

    // Once: checking again (later, or from every project) fires nothing and delivers nothing more.
    const again = await checkRegressions(database, project.project, new Date(now.getTime() + HOUR_MS));
    expect(again).toEqual({ fired: [], events: 0, deliveries: 0 });
    expect(await checkAllRegressions(database, new Date(now.getTime() + 2 * HOUR_MS))).toBe(0);
    const deliveries = await ok('GET', '/v1/notifications/deliveries', undefined, project);
    expect(deliveries.items.map((item: Json) => item.eventType)).toEqual([
      'release.regression',
      'release.regression',
    ]);
    const alerts = await database
      .selectFrom('insight_alerts')
      .select(['alert_key', 'metric', 'previous_release', 'event_id'])
      .where('project_id', '=', projectId)
      .orderBy('alert_key')
      .execute();
    expect(alerts).toEqual([
      {
        alert_key: JSON.stringify(['production', '2.0.0', 'error_rate']),
        metric: 'error_rate',
        previous_release: '1.0.0',
        event_id: errors.id,
      },
      {
        alert_key: JSON.stringify(['staging', '2.0.0', 'call_quality']),
        metric: 'call_quality',
        previous_release: '1.0.0',
        event_id: calls.id,
      },
    ]);
    const inbox = await ok('GET', '/v1/inbox', undefined, project);
    expect(inbox.items.map((item: Json) => item.type).sort()).toEqual([
      'release.regression',
      'release.regression',
    ]);
  });

  it('a route whose p75 goes to a worse rating fires vitals.regression once; stable routes do not', async () => {
    const { project } = await setUp({ source: { type: 'regression', events: ['vitals.regression'] } });
    const database = suite.test.database.database;
    const projectId = project.project.id;
    const now = new Date();
    const previous = now.getTime() - 14 * DAY_MS + HOUR_MS;
    const current = now.getTime() - 7 * DAY_MS + HOUR_MS;
    const views = (route: string, lcp: number) => () => ({ route, lcp });
    const options = { stepMs: 60_000 };
    // /checkout: LCP 2000 (good) for 60 views, then 3000 (needs improvement) for 60.
    await seedPageViews(database, projectId, 60, {
      ...options,
      start: previous,
      view: views('/checkout', 2000),
    });
    await seedPageViews(database, projectId, 60, {
      ...options,
      start: current,
      view: views('/checkout', 3000),
    });
    // /stable: good in both windows. /few: worse, on 40 views only. /better: poor, then good.
    await seedPageViews(database, projectId, 60, {
      ...options,
      start: previous,
      view: views('/stable', 2000),
    });
    await seedPageViews(database, projectId, 60, {
      ...options,
      start: current,
      view: views('/stable', 2400),
    });
    await seedPageViews(database, projectId, 60, { ...options, start: previous, view: views('/few', 2000) });
    await seedPageViews(database, projectId, 40, { ...options, start: current, view: views('/few', 5000) });
    await seedPageViews(database, projectId, 60, {
      ...options,
      start: previous,
      view: views('/better', 5000),
    });
    await seedPageViews(database, projectId, 60, {
      ...options,
      start: current,
      view: views('/better', 1000),
    });

    const check = await checkRegressions(database, project.project, now);
    const day = Math.floor(now.getTime() / DAY_MS);
    const monday = new Date((day - ((day + 3) % 7)) * DAY_MS);
    expect(monday.getUTCDay()).toBe(1);
    const period = monday.toISOString().slice(0, 10);
    expect(check.fired).toEqual([
      { type: 'vitals.regression', key: JSON.stringify(['/checkout', 'LCP', period]) },
    ]);
    expect(check.deliveries).toBe(1);

    expect(await worker().runUntilIdle()).toBe(1);
    const event = verified(
      await suite.receiver.waitFor((received) => received.event.type === 'vitals.regression'),
    );
    expect(event.data).toMatchObject({
      title: 'LCP of /checkout went from good to needs-improvement',
      severity: 'medium',
      route: '/checkout',
      counts: { pageViews: 60, previousPageViews: 60 },
      regression: {
        metric: 'LCP',
        route: '/checkout',
        period,
        current: { p75: 3000, rating: 'needs-improvement', count: 60 },
        previous: { p75: 2000, rating: 'good', count: 60 },
        minPageViews: 50,
      },
    });
    expect(webhookEventSchema.safeParse(event).success).toBe(true);
    expect(vitalsRegressionSchema.parse(event.data.regression)).toEqual(event.data.regression);

    expect(await checkRegressions(database, project.project, new Date(now.getTime() + HOUR_MS))).toEqual({
      fired: [],
      events: 0,
      deliveries: 0,
    });
  });

  it('records a regression no rule matches, without an event', async () => {
    // A rule for vitals only: the release regression is recorded, and notifies nobody.
    const { project } = await setUp({ source: { type: 'regression', events: ['vitals.regression'] } });
    const database = suite.test.database.database;
    const now = new Date();
    await seedSessions(database, project.project.id, 100, {
      release: 'a',
      start: now.getTime() - 3 * DAY_MS,
    });
    await seedSessions(database, project.project.id, 100, {
      release: 'b',
      start: now.getTime() - DAY_MS,
      withErrors: 30,
    });
    const check = await checkRegressions(database, project.project, now);
    expect(check).toEqual({
      fired: [{ type: 'release.regression', key: JSON.stringify([null, 'b', 'error_rate']) }],
      events: 0,
      deliveries: 0,
    });
    const alert = await database
      .selectFrom('insight_alerts')
      .select(['event_id', 'environment', 'release', 'previous_release'])
      .where('project_id', '=', project.project.id)
      .executeTakeFirstOrThrow();
    expect(alert).toEqual({ event_id: null, environment: null, release: 'b', previous_release: 'a' });
    expect((await ok('GET', '/v1/inbox', undefined, project)).items).toEqual([]);
  });

  it("the server's worker checks every project and wakes the deliveries", async () => {
    const { project } = await setUp({ source: { type: 'regression', events: ['release.regression'] } });
    const database = suite.test.database.database;
    const now = Date.now();
    await seedSessions(database, project.project.id, 100, { release: 'x', start: now - 3 * DAY_MS });
    await seedSessions(database, project.project.id, 100, {
      release: 'y',
      start: now - DAY_MS,
      withErrors: 30,
    });
    let woken = 0;
    const regressions = createRegressionWorker({
      database,
      log: suite.test.app.log,
      appUrl: suite.test.configuration.appUrl,
      onDeliveriesQueued: () => {
        woken += 1;
      },
    });
    // Its first check fires y's regression (other projects' already fired), the next one nothing.
    expect(await regressions.runUntilIdle()).toBe(1);
    expect(woken).toBe(1);
    expect(await worker().runUntilIdle()).toBe(1);
    const event = verified(
      await suite.receiver.waitFor((received) => received.event.type === 'release.regression'),
    );
    expect(event.data).toMatchObject({
      release: 'y',
      regression: { previousRelease: 'x', metric: 'error_rate' },
    });
  });
});
