import { webhookEventSchema } from '@svc/protocol';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/http.ts';
import { createSessionId } from '../../../test/seed.ts';
import { ENGINES } from '../../../test/test-database.ts';
import type { Database } from '../../platform/database/schema.ts';
import { createId } from '../../platform/ids.ts';
import { createAiJobWorker, queueAiJob } from '../ai/index.ts';
import { notificationsSuite, verified } from '../notifications/notifications.fixture.ts';
import { makeDigest } from './digests.ts';
import { createReportJobHandlers } from './index.ts';
import { ActivityRows, DAY_MS, HOUR_MS, MINUTE_MS } from './reports.fixture.ts';

// Digests end to end on both engines: two consecutive days of sessions, calls, page views, issue
// occurrences, a regression and an anomaly; the daily digest made by the AI job worker, its exact
// numbers, GET /v1/ai/digests, the `ai.digest` webhook through an `ai` rule to a real receiver;
// made once per period; the weekly digest; a quiet project's digest, stored and notifying nobody.

/** Monday 2026-11-16 00:00 UTC: the day before the digest's. */
const PREVIOUS_DAY = Date.UTC(2026, 10, 16);
/** Tuesday 2026-11-17 00:00 UTC: the digest's day. */
const DAY = PREVIOUS_DAY + DAY_MS;

/** An issue cluster first seen at `firstSeenAt`, with occurrences recorded at `seen`. Returns its id. */
async function seedIssue(
  database: Kysely<Database>,
  projectId: string,
  title: string,
  firstSeenAt: number,
  seen: readonly number[],
  sessions = seen.length,
): Promise<string> {
  const id = createId('cl');
  await database
    .insertInto('issue_clusters')
    .values({
      project_id: projectId,
      id,
      fingerprint: `error:${id}`,
      kind: 'error',
      title,
      severity: 'high',
      first_seen_at: new Date(firstSeenAt),
      last_seen_at: new Date(Math.max(firstSeenAt, ...seen)),
      last_release: null,
      resolved_at: null,
      resolved_release: null,
    })
    .execute();
  const sessionIds = Array.from({ length: sessions }, () => createSessionId(firstSeenAt));
  if (seen.length > 0)
    await database
      .insertInto('cluster_occurrences')
      .values(
        seen.map((time, index) => ({
          project_id: projectId,
          session_id: sessionIds[index % sessions] as string,
          occurrence_key: `error:${index}:0`,
          cluster_id: id,
          t: new Date(time),
          seen_at: new Date(time),
          release: null,
          environment: null,
        })),
      )
      .execute();
  return id;
}

/** `count` times, an hour apart from `start` + 1 h. */
const times = (start: number, count: number) =>
  Array.from({ length: count }, (_, index) => start + (index + 1) * HOUR_MS);

describe.each(ENGINES)('digests on %s', (engine) => {
  const { suite, ok, request, worker, setUp } = notificationsSuite(engine);

  it('makes the daily digest once, with the numbers of the day against the day before, and sends ai.digest', async () => {
    const { project } = await setUp({ source: { type: 'ai', events: ['ai.digest'] } });
    const database = suite.test.database.database;
    const projectId = project.project.id;
    const appUrl = suite.test.configuration.appUrl;

    const rows = new ActivityRows(projectId);
    rows.add(PREVIOUS_DAY + 10 * HOUR_MS, {
      sessions: 50,
      sessionsWithErrors: 5,
      callScores: [null, null, ...Array<number>(18).fill(80)],
      failedCalls: 2,
      relayedCalls: 3,
      pageViews: 20,
      rageClicks: 0,
      vitals: () => ({ lcp: 2000, inp: 100, cls: 0.05 }),
    });
    rows.add(DAY + 10 * HOUR_MS, {
      sessions: 80,
      sessionsWithErrors: 12,
      callScores: [...Array<null>(6).fill(null), ...Array<number>(8).fill(50), ...Array<number>(16).fill(80)],
      failedCalls: 6,
      relayedCalls: 6,
      pageViews: 20,
      rageClicks: 0,
      vitals: (index) => ({ lcp: index < 10 ? 2000 : 3000, ...(index < 5 ? { inp: 300 } : {}) }),
    });
    await rows.insert(database);
    const longAgo = PREVIOUS_DAY - 6 * DAY_MS;
    const growing = await seedIssue(database, projectId, 'TypeError: x is undefined', longAgo, [
      ...times(PREVIOUS_DAY, 2),
      ...times(DAY, 7),
    ]);
    await seedIssue(database, projectId, 'Steady', longAgo, [...times(PREVIOUS_DAY, 5), ...times(DAY, 5)]);
    const slower = await seedIssue(database, projectId, 'RangeError', longAgo, [
      ...times(PREVIOUS_DAY, 4),
      ...times(DAY, 6),
    ]);
    const yesterdays = await seedIssue(database, projectId, 'Yesterday', PREVIOUS_DAY + HOUR_MS, [
      ...times(PREVIOUS_DAY, 1),
      ...times(DAY, 3),
    ]);
    const fresh = await seedIssue(database, projectId, 'New in the day', DAY + HOUR_MS, times(DAY, 3), 2);
    const single = await seedIssue(database, projectId, 'Once', DAY + 2 * HOUR_MS, [DAY + 5 * HOUR_MS]);
    // A regression fired in the day, one the day before; an anomaly of an hour of the day.
    const alert = (type: 'release.regression' | 'vitals.regression', at: number, release: string | null) => ({
      project_id: projectId,
      type,
      alert_key: JSON.stringify([at]),
      metric: type === 'release.regression' ? 'error_rate' : 'LCP',
      environment: release === null ? null : 'production',
      release,
      previous_release: release === null ? null : '1.0.0',
      route: release === null ? '/checkout' : null,
      period: null,
      details: JSON.stringify({}),
      created_at: new Date(at),
    });
    await database
      .insertInto('insight_alerts')
      .values([
        alert('release.regression', DAY + 9 * HOUR_MS, '2.0.0'),
        alert('vitals.regression', PREVIOUS_DAY + 9 * HOUR_MS, null),
      ])
      .execute();
    await database
      .insertInto('ai_anomalies')
      .values({
        project_id: projectId,
        metric: 'error_rate',
        hour: new Date(DAY + 14 * HOUR_MS),
        value: 0.4,
        score: 9.5,
        details: JSON.stringify({}),
        created_at: new Date(DAY + 15 * HOUR_MS),
      })
      .execute();

    // The digest job, as the scheduler queues it: due 10 minutes after the day.
    const clock = { now: DAY + DAY_MS + 10 * MINUTE_MS };
    const jobs = createAiJobWorker({
      database,
      handlers: createReportJobHandlers({ appUrl }),
      log: suite.test.app.log,
      now: () => new Date(clock.now),
      schedule: false,
    });
    const input = {
      period: 'daily',
      start: new Date(DAY).toISOString(),
      end: new Date(DAY + DAY_MS).toISOString(),
    };
    const job = await queueAiJob(database, { projectId, kind: 'digest', input, now: new Date(clock.now) });
    expect(await jobs.runUntilIdle()).toBe(1);
    const result = (await ok('GET', `/v1/ai/jobs/${job.id}`, undefined, project)).result;
    expect(result).toMatchObject({ created: true, events: 1, deliveries: 1 });

    const listed = await ok('GET', '/v1/ai/digests', undefined, project);
    expect(listed.nextCursor).toBeUndefined();
    expect(listed.items).toHaveLength(1);
    const digest = listed.items[0];
    expect(digest).toMatchObject({
      id: result.digestId,
      period: 'daily',
      start: '2026-11-17T00:00:00.000Z',
      end: '2026-11-18T00:00:00.000Z',
      createdAt: new Date(clock.now).toISOString(),
    });
    const issue = (id: string) => `${appUrl}/issues/${id}`;
    const period = 'from=2026-11-17T00:00:00.000Z&to=2026-11-18T00:00:00.000Z';
    expect(digest.content).toEqual({
      period: 'daily',
      start: '2026-11-17T00:00:00.000Z',
      end: '2026-11-18T00:00:00.000Z',
      previousStart: '2026-11-16T00:00:00.000Z',
      quiet: false,
      sessions: {
        sessions: { value: 80, previous: 50 },
        sessionsWithErrors: { value: 12, previous: 5 },
        errorRate: { value: 0.15, previous: 0.1 },
      },
      newIssues: {
        total: 2,
        items: [
          {
            id: fresh,
            kind: 'error',
            title: 'New in the day',
            severity: 'high',
            occurrences: 3,
            sessions: 2,
            firstSeenAt: new Date(DAY + HOUR_MS).toISOString(),
            link: issue(fresh),
          },
          {
            id: single,
            kind: 'error',
            title: 'Once',
            severity: 'high',
            occurrences: 1,
            sessions: 1,
            firstSeenAt: new Date(DAY + 2 * HOUR_MS).toISOString(),
            link: issue(single),
          },
        ],
      },
      growingIssues: [
        {
          id: growing,
          title: 'TypeError: x is undefined',
          occurrences: 7,
          previousOccurrences: 2,
          growth: 5,
        },
        { id: slower, title: 'RangeError', occurrences: 6, previousOccurrences: 4, growth: 2 },
        { id: yesterdays, title: 'Yesterday', occurrences: 3, previousOccurrences: 1, growth: 2 },
      ].map((item) => ({ kind: 'error', severity: 'high', link: issue(item.id), ...item })),
      regressions: [
        {
          type: 'release.regression',
          metric: 'error_rate',
          environment: 'production',
          release: '2.0.0',
          previousRelease: '1.0.0',
          route: null,
          firedAt: new Date(DAY + 9 * HOUR_MS).toISOString(),
        },
      ],
      anomalies: [
        { metric: 'error_rate', hour: new Date(DAY + 14 * HOUR_MS).toISOString(), value: 0.4, score: 9.5 },
      ],
      calls: {
        calls: { value: 30, previous: 20 },
        failedToConnect: { value: 6, previous: 2 },
        connectFailureRate: { value: 0.2, previous: 0.1 },
        relayed: { value: 6, previous: 3 },
        relayRate: { value: 0.2, previous: 0.15 },
        scoredCalls: { value: 24, previous: 18 },
        // 8 calls at 50 and 16 at 80: the median is 80, the mean 70.
        medianQuality: { value: 80, previous: 80 },
        averageQuality: { value: 70, previous: 80 },
      },
      pageViews: { value: 20, previous: 20 },
      vitals: {
        // Nearest rank: the 15th of 20 (ten at 2000, ten at 3000).
        LCP: {
          p75: 3000,
          previousP75: 2000,
          count: 20,
          previousCount: 20,
          rating: 'needs-improvement',
          previousRating: 'good',
        },
        INP: {
          p75: 300,
          previousP75: 100,
          count: 5,
          previousCount: 20,
          rating: 'needs-improvement',
          previousRating: 'good',
        },
        CLS: {
          p75: null,
          previousP75: 0.05,
          count: 0,
          previousCount: 20,
          rating: null,
          previousRating: 'good',
        },
      },
      links: {
        overview: `${appUrl}/overview?${period}`,
        issues: `${appUrl}/issues`,
        releases: `${appUrl}/releases`,
        calls: `${appUrl}/calls/overview?${period}`,
        vitals: `${appUrl}/vitals?${period}`,
      },
    });

    // The ai.digest webhook, signed, with the digest as data.digest.
    expect(await worker().runUntilIdle()).toBe(1);
    const event = verified(await suite.receiver.waitFor((received) => received.event.type === 'ai.digest'));
    expect(webhookEventSchema.safeParse(event).success).toBe(true);
    expect(event).toMatchObject({
      id: digest.eventId,
      type: 'ai.digest',
      projectId,
      data: {
        title: 'Daily digest of Test project: 2026-11-17',
        severity: 'info',
        counts: {
          sessions: 80,
          sessionsWithErrors: 12,
          newIssues: 2,
          growingIssues: 3,
          regressions: 1,
          anomalies: 1,
          calls: 30,
          failedToConnect: 6,
          pageViews: 20,
        },
        links: digest.content.links,
        digest: digest.content,
      },
    });
    expect(event.data.summary).toBe(
      '80 (+60%) sessions, 15.0% with errors; 2 new issue(s); 3 growing; 1 regression(s); 1 anomaly(ies); 30 (+50%) calls, 20.0% failed to connect, median quality 80.0; LCP p75 3000 ms (needs-improvement).',
    );
    const inbox = await ok('GET', '/v1/inbox', undefined, project);
    expect(inbox.items.map((item: Json) => [item.id, item.type])).toEqual([[digest.eventId, 'ai.digest']]);

    // Once: the same period again stores and sends nothing.
    const again = await makeDigest(
      database,
      project.project,
      { period: 'daily', start: new Date(DAY), end: new Date(DAY + DAY_MS) },
      { now: new Date(clock.now + HOUR_MS), appUrl },
    );
    expect(again).toMatchObject({ created: false, events: 0, deliveries: 0 });
    expect(again.digest.id).toBe(digest.id);

    // The week of both days, against an empty week before; listed newest first, a page at a time.
    const week = await makeDigest(
      database,
      project.project,
      { period: 'weekly', start: new Date(PREVIOUS_DAY), end: new Date(PREVIOUS_DAY + 7 * DAY_MS) },
      { now: new Date(PREVIOUS_DAY + 7 * DAY_MS + 10 * MINUTE_MS), appUrl },
    );
    expect(week).toMatchObject({ created: true, events: 1 });
    const weekly = await ok('GET', '/v1/ai/digests?period=weekly', undefined, project);
    expect(weekly.items.map((item: Json) => item.id)).toEqual([week.digest.id]);
    expect(weekly.items[0].content).toMatchObject({
      previousStart: '2026-11-09T00:00:00.000Z',
      sessions: { sessions: { value: 130, previous: 0 } },
      calls: { calls: { value: 50, previous: 0 }, connectFailureRate: { value: 0.16, previous: null } },
      newIssues: { total: 3 },
      regressions: [{ type: 'vitals.regression', route: '/checkout' }, { type: 'release.regression' }],
    });
    const first = await ok('GET', '/v1/ai/digests?limit=1', undefined, project);
    expect(first.items.map((item: Json) => item.id)).toEqual([week.digest.id]);
    const second = await ok('GET', `/v1/ai/digests?limit=1&cursor=${first.nextCursor}`, undefined, project);
    expect(second.items.map((item: Json) => item.id)).toEqual([digest.id]);
    expect(second.nextCursor).toBeUndefined();
    expect((await request('GET', '/v1/ai/digests?cursor=abc', undefined, project)).statusCode).toBe(400);
    // Another project sees none of them.
    expect((await ok('GET', '/v1/ai/digests')).items).toEqual([]);
  });

  it("stores a quiet project's digest, saying so, and notifies nobody", async () => {
    const { project } = await setUp({ source: { type: 'ai' } });
    const database = suite.test.database.database;
    const made = await makeDigest(
      database,
      project.project,
      { period: 'daily', start: new Date(DAY), end: new Date(DAY + DAY_MS) },
      { now: new Date(DAY + DAY_MS + 10 * MINUTE_MS), appUrl: suite.test.configuration.appUrl },
    );
    expect(made).toMatchObject({ created: true, events: 0, deliveries: 0 });
    const listed = await ok('GET', '/v1/ai/digests', undefined, project);
    expect(listed.items).toHaveLength(1);
    expect(listed.items[0].eventId).toBeUndefined();
    expect(listed.items[0].content).toMatchObject({
      quiet: true,
      sessions: { sessions: { value: 0, previous: 0 }, errorRate: { value: null, previous: null } },
      newIssues: { total: 0, items: [] },
      growingIssues: [],
      calls: { calls: { value: 0, previous: 0 }, medianQuality: { value: null, previous: null } },
    });
    expect((await ok('GET', '/v1/inbox', undefined, project)).items).toEqual([]);
  });
});
