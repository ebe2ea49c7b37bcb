import { webhookEventSchema } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createAiJobWorker, queueAiJob } from '../ai/index.ts';
import { notificationsSuite, verified } from '../notifications/notifications.fixture.ts';
import { scanAnomalies } from './anomalies.ts';
import { createReportJobHandlers } from './index.ts';
import {
  ActivityRows,
  HOUR_MS,
  type HourActivity,
  MINUTE_MS,
  seededRandom,
  WEEK_MS,
} from './reports.fixture.ts';

// Anomalies end to end on both engines: six weeks of hourly activity with a daily and weekly
// season (busy weekday afternoons, quiet nights and weekends), scanned hour by hour. A usual hour
// fires nothing; a spike of errors and connect failures fires exactly those two, once, through an
// `ai` rule to a real webhook receiver; a quiet project's "spike" of one error in two sessions
// fires nothing.

/** Monday 2026-10-12 00:00 UTC: the first of the six seeded weeks. */
const FIRST_WEEK = Date.UTC(2026, 9, 12);
/** Tuesday 2026-11-17 14:00 UTC, in the sixth week: the spike. */
const SPIKE = Date.UTC(2026, 10, 17, 14);
/** The hour after it, as usual as every other. */
const USUAL = SPIKE + HOUR_MS;
/** Saturday 2026-11-21 03:00 UTC: a quiet hour. */
const NIGHT = Date.UTC(2026, 10, 21, 3);

/** How many of `count` trials succeed with probability `p`. */
const binomial = (count: number, p: number, random: () => number) =>
  Array.from({ length: count }, random).filter((draw) => draw < p).length;

/**
 * An hour as usual: 40 sessions on weekday afternoons (12–18 UTC), 15 on weekday mornings and
 * evenings, 4 at night and at weekends, 5% of them with an error; calls with 7% connect failures
 * and quality around 74 when busy (3% and 86 when quiet); rage clicks on 12% of page views when
 * busy, 3% otherwise.
 */
function usualHour(hour: number, random: () => number): HourActivity {
  const date = new Date(hour);
  const workday = date.getUTCDay() >= 1 && date.getUTCDay() <= 5;
  const time = date.getUTCHours();
  const busy = workday && time >= 12 && time < 18;
  const shoulder = workday && !busy && time >= 8 && time < 22;
  const sessions = busy ? 40 : shoulder ? 15 : 4;
  const calls = busy ? 14 : shoulder ? 5 : 1;
  const pageViews = busy ? 56 : shoulder ? 20 : 4;
  const quality = busy ? 74 : 86;
  return {
    sessions,
    sessionsWithErrors: binomial(sessions, 0.05, random),
    callScores: Array.from({ length: calls }, () => Math.round(quality - 4 + 8 * random())),
    failedCalls: binomial(calls, busy ? 0.07 : 0.03, random),
    pageViews,
    rageClicks: binomial(pageViews, busy ? 0.12 : 0.03, random),
  };
}

/** Six weeks of usual hours of the project, with `overrides` for some hours. */
function sixWeeks(projectId: string, seed: number, overrides: ReadonlyMap<number, HourActivity>) {
  const random = seededRandom(seed);
  const rows = new ActivityRows(projectId);
  for (let hour = FIRST_WEEK; hour < FIRST_WEEK + 6 * WEEK_MS; hour += HOUR_MS)
    rows.add(hour, overrides.get(hour) ?? usualHour(hour, random));
  return rows;
}

/** The scan's time: 10 minutes after the end of the hour, as the scheduler makes it due. */
const scanTime = (hour: number) => new Date(hour + HOUR_MS + 10 * MINUTE_MS);

describe.each(ENGINES)('anomalies on %s', (engine) => {
  const { suite, ok, worker, setUp } = notificationsSuite(engine);

  it('fires nothing for a usual hour, and exactly the spiking metrics, once, through an ai rule', async () => {
    const { project } = await setUp({ source: { type: 'ai', events: ['ai.anomaly'] } });
    const database = suite.test.database.database;
    const projectId = project.project.id;
    const appUrl = suite.test.configuration.appUrl;
    // The spike: 16 of 40 sessions with errors, 8 of 14 calls failing to connect; the rest as usual.
    const random = seededRandom(7);
    const spike: HourActivity = { ...usualHour(SPIKE, random), sessionsWithErrors: 16, failedCalls: 8 };
    const started = performance.now();
    await sixWeeks(projectId, 42, new Map([[SPIKE, spike]])).insert(database);
    expect(performance.now() - started).toBeLessThan(20_000);

    // A usual busy hour: every metric scored against its own hour of the five weeks before, normal.
    const usual = await scanAnomalies(database, project.project, new Date(USUAL), {
      now: scanTime(USUAL),
      appUrl,
    });
    expect(usual.fired).toEqual([]);
    expect(usual.metrics.map((metric) => [metric.metric, metric.status, metric.baselineWeeks])).toEqual([
      ['error_rate', 'normal', 5],
      ['connect_failure_rate', 'normal', 5],
      ['median_call_quality', 'normal', 5],
      ['rage_click_rate', 'normal', 5],
    ]);
    // Seasonal: the baseline of a busy hour is the busy hours' quality, not the night's 86.
    const quality = usual.metrics.find((metric) => metric.metric === 'median_call_quality') as Json;
    expect(quality.median).toBeGreaterThan(70);
    expect(quality.median).toBeLessThan(78);
    // A quiet hour is never scored.
    const night = await scanAnomalies(database, project.project, new Date(NIGHT), {
      now: scanTime(NIGHT),
      appUrl,
    });
    expect(night.metrics.map((metric) => metric.status)).toEqual([
      'low_volume',
      'low_volume',
      'low_volume',
      'low_volume',
    ]);

    // The spike, scanned by the AI job worker as the scheduler queues it.
    const clock = { now: scanTime(SPIKE).getTime() };
    const jobs = createAiJobWorker({
      database,
      handlers: createReportJobHandlers({ appUrl }),
      log: suite.test.app.log,
      now: () => new Date(clock.now),
      schedule: false,
    });
    const job = await queueAiJob(database, {
      projectId,
      kind: 'anomaly_scan',
      input: { hour: new Date(SPIKE).toISOString() },
      dedupeKey: `anomaly:${projectId}:${new Date(SPIKE).toISOString()}`,
      now: new Date(clock.now),
    });
    expect(await jobs.runUntilIdle()).toBe(1);
    const done = await ok('GET', `/v1/ai/jobs/${job.id}`, undefined, project);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { fired: ['error_rate', 'connect_failure_rate'], events: 2, deliveries: 2 },
    });

    expect(await worker().runUntilIdle()).toBe(2);
    const errors = verified(
      await suite.receiver.waitFor(
        (received) =>
          received.event.type === 'ai.anomaly' &&
          (received.event.data as Json).anomaly?.metric === 'error_rate',
      ),
    );
    expect(webhookEventSchema.safeParse(errors).success).toBe(true);
    expect(errors).toMatchObject({
      type: 'ai.anomaly',
      projectId,
      orgId: project.project.organization_id,
      data: {
        title: 'More sessions with errors than usual',
        severity: 'high',
        counts: { sessions: 40, sessionsWithErrors: 16, baselineWeeks: 5 },
        links: {
          overview: `${appUrl}/overview?from=2026-11-17T14:00:00.000Z&to=2026-11-17T15:00:00.000Z`,
          issues: `${appUrl}/issues`,
        },
        anomaly: {
          metric: 'error_rate',
          hour: '2026-11-17T14:00:00.000Z',
          value: 0.4,
          volume: 40,
          direction: 'up',
          threshold: 3.5,
          minChange: 0.05,
          baseline: { weeks: 5 },
        },
      },
    });
    const anomaly = errors.data.anomaly;
    expect(anomaly.score).toBeGreaterThanOrEqual(3.5);
    // The score is the robust z of the value against the baseline's median and (floored) MAD.
    expect(anomaly.baseline.median).toBeLessThan(0.1);
    expect(errors.data.summary).toContain('2026-11-17 14:00–15:00 UTC: 40.0% over 40 sessions');

    const failures = verified(
      await suite.receiver.waitFor(
        (received) => (received.event.data as Json).anomaly?.metric === 'connect_failure_rate',
      ),
    );
    expect(failures.data).toMatchObject({
      title: 'More calls failing to connect than usual',
      counts: { calls: 14, failedToConnect: 8, baselineWeeks: 5 },
      links: { calls: `${appUrl}/calls/overview?from=2026-11-17T14:00:00.000Z&to=2026-11-17T15:00:00.000Z` },
      anomaly: { metric: 'connect_failure_rate', value: 8 / 14, volume: 14, direction: 'up' },
    });

    // Once: scanning the hour again (later, or a second job of it) fires and delivers nothing more.
    const again = await scanAnomalies(database, project.project, new Date(SPIKE), {
      now: new Date(clock.now + HOUR_MS),
      appUrl,
    });
    expect(again).toMatchObject({ fired: [], events: 0, deliveries: 0 });
    expect(
      again.metrics.filter((metric) => metric.status === 'anomaly').map((metric) => metric.metric),
    ).toEqual(['error_rate', 'connect_failure_rate']);
    const recorded = await database
      .selectFrom('ai_anomalies')
      .select(['metric', 'hour', 'event_id'])
      .where('project_id', '=', projectId)
      .orderBy('metric')
      .execute();
    expect(recorded).toEqual([
      { metric: 'connect_failure_rate', hour: new Date(SPIKE), event_id: failures.id },
      { metric: 'error_rate', hour: new Date(SPIKE), event_id: errors.id },
    ]);
    const inbox = await ok('GET', '/v1/inbox', undefined, project);
    expect(inbox.items.map((item: Json) => [item.type, item.data.anomaly.metric]).sort()).toEqual([
      ['ai.anomaly', 'connect_failure_rate'],
      ['ai.anomaly', 'error_rate'],
    ]);
    const deliveries = await ok('GET', '/v1/notifications/deliveries', undefined, project);
    expect(deliveries.items.map((item: Json) => [item.eventType, item.status])).toEqual([
      ['ai.anomaly', 'delivered'],
      ['ai.anomaly', 'delivered'],
    ]);
  });

  it('fires nothing for a quiet project, whose one error in two sessions is no evidence', async () => {
    const { project } = await setUp({ source: { type: 'ai' } });
    const database = suite.test.database.database;
    const rows = new ActivityRows(project.project.id);
    const quiet = (errors: number): HourActivity => ({
      sessions: 2,
      sessionsWithErrors: errors,
      callScores: [80],
      failedCalls: errors,
      pageViews: 3,
      rageClicks: errors,
    });
    for (let week = 1; week <= 5; week += 1) rows.add(SPIKE - week * WEEK_MS, quiet(0));
    rows.add(SPIKE, quiet(1));
    await rows.insert(database);
    const scan = await scanAnomalies(database, project.project, new Date(SPIKE), {
      now: scanTime(SPIKE),
      appUrl: suite.test.configuration.appUrl,
    });
    expect(scan).toMatchObject({ fired: [], events: 0, deliveries: 0 });
    expect(scan.metrics).toEqual([
      { metric: 'error_rate', status: 'low_volume', value: 0.5, volume: 2 },
      { metric: 'connect_failure_rate', status: 'low_volume', value: 1, volume: 1 },
      { metric: 'median_call_quality', status: 'low_volume', value: null, volume: 0 },
      { metric: 'rage_click_rate', status: 'low_volume', value: 1 / 3, volume: 3 },
    ]);
    expect(
      await database
        .selectFrom('ai_anomalies')
        .where('project_id', '=', project.project.id)
        .selectAll()
        .execute(),
    ).toEqual([]);
    expect((await ok('GET', '/v1/inbox', undefined, project)).items).toEqual([]);
  });
});
