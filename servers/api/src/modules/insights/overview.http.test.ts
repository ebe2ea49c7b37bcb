import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type Json } from '../../../test/http.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import { DAY_MS, seedCalls, seedCluster, seedPageViews, seedSessions } from './seed.fixture.ts';

// GET /v1/dashboard/overview on seeded sessions, page views, calls and issue occurrences: each
// number of a period next to the previous period of equal length, and the change.

const TO = Date.UTC(2026, 10, 20, 0, 0, 0);
const FROM = TO - 7 * DAY_MS;
const PREVIOUS = FROM - 7 * DAY_MS;
const RANGE = `from=${new Date(FROM).toISOString()}&to=${new Date(TO).toISOString()}`;

describe.each(ENGINES)('GET /v1/dashboard/overview on %s', (engine) => {
  let test: TestApp;
  const { request, get } = apiClient(() => test);
  const clusterIds: string[] = [];

  beforeAll(async () => {
    test = await createTestApp(engine);
    const database = test.database.database;
    const projectId = test.first.project.id;
    // This period: 6 sessions, 2 with an error, 3 users. The one before: 4 sessions, 1 with an error.
    await seedSessions(database, projectId, 6, {
      start: FROM + DAY_MS,
      withErrors: 2,
      user: (index) => (index < 3 ? `u${index}` : null),
    });
    await seedSessions(database, projectId, 4, { start: PREVIOUS + DAY_MS, withErrors: 1 });
    // Outside both periods: before the previous one, and at `to` (exclusive).
    await seedSessions(database, projectId, 1, { start: PREVIOUS - DAY_MS, withErrors: 1 });
    await seedSessions(database, projectId, 1, { start: TO, withErrors: 1 });

    const rage = [2, 1, 0];
    const lcp = [1000, 2000, 3000];
    await seedPageViews(database, projectId, 3, {
      start: FROM + DAY_MS,
      view: (index) => ({ rage_clicks: rage[index] ?? 0, dead_clicks: 1, lcp: lcp[index] ?? null }),
    });
    await seedPageViews(database, projectId, 2, {
      start: PREVIOUS + DAY_MS,
      view: (index) => ({ rage_clicks: index === 0 ? 1 : 0, lcp: index === 0 ? 1000 : 1500 }),
    });

    await seedCalls(database, projectId, [80, 60, 40], { start: FROM + DAY_MS, failed: 1 });
    await seedCalls(database, projectId, [90, 70], { start: PREVIOUS + DAY_MS });

    // Clusters with 5, 4, 3, 2, 1 and 1 occurrences in this period; the first has 2 before it too.
    const counts = [5, 4, 3, 2, 1, 1];
    for (const [index, count] of counts.entries()) {
      const occurrences = Array.from({ length: count }, (_, occurrence) => ({ t: FROM + occurrence * 1000 }));
      if (index === 0) occurrences.push({ t: PREVIOUS + 1000 }, { t: PREVIOUS + 2000 });
      clusterIds.push(await seedCluster(database, projectId, `Issue ${index}`, occurrences));
    }
    // Only before this period: not a top issue of it.
    await seedCluster(database, projectId, 'Old', [{ t: PREVIOUS + 5000 }, { t: PREVIOUS + 6000 }]);
  });

  afterAll(async () => {
    await test?.close();
  });

  it('compares every number with the period before', async () => {
    const overview = await get(`/v1/dashboard/overview?${RANGE}`);
    expect(overview).toMatchObject({
      from: new Date(FROM).toISOString(),
      to: new Date(TO).toISOString(),
      previousFrom: new Date(PREVIOUS).toISOString(),
      sessions: { value: 6, previous: 4, change: 2, relativeChange: 0.5 },
      users: { value: 3, previous: 0, change: 3, relativeChange: null },
      pageViews: { value: 3, previous: 2, change: 1, relativeChange: 0.5 },
      rageClicks: { value: 3, previous: 1, change: 2, relativeChange: 2 },
      deadClicks: { value: 3, previous: 0, change: 3, relativeChange: null },
      calls: { value: 3, previous: 2, change: 1, relativeChange: 0.5 },
      callQuality: { value: 60, previous: 80, change: -20, relativeChange: -0.25 },
    });
    expect(overview.errorRate.value).toBeCloseTo(2 / 6, 12);
    expect(overview.errorRate.previous).toBe(0.25);
    expect(overview.errorRate.change).toBeCloseTo(2 / 6 - 0.25, 12);
    expect(overview.errorRate.relativeChange).toBeCloseTo(1 / 3, 12);
    expect(overview.connectFailureRate.value).toBeCloseTo(1 / 3, 12);
    expect(overview.connectFailureRate).toMatchObject({ previous: 0, relativeChange: null });
    expect(overview.vitals.LCP).toEqual({
      value: 3000,
      previous: 1500,
      change: 1500,
      relativeChange: 1,
      count: 3,
      rating: 'needs-improvement',
      previousRating: 'good',
    });
    expect(overview.vitals.CLS).toEqual({
      value: null,
      previous: null,
      change: null,
      relativeChange: null,
      count: 0,
      rating: null,
      previousRating: null,
    });

    expect(overview.topIssues.map((issue: Json) => issue.title)).toEqual([
      'Issue 0',
      'Issue 1',
      'Issue 2',
      'Issue 3',
      'Issue 4',
    ]);
    expect(overview.topIssues[0]).toEqual({
      id: clusterIds[0],
      kind: 'error',
      title: 'Issue 0',
      severity: 'high',
      status: 'open',
      occurrences: { value: 5, previous: 2, change: 3, relativeChange: 1.5 },
    });
    expect(overview.topIssues[4].occurrences).toEqual({
      value: 1,
      previous: 0,
      change: 1,
      relativeChange: null,
    });
  });

  it('the previous period is as long as the one asked for', async () => {
    // One day: the day after FROM against FROM's day.
    const from = FROM + DAY_MS;
    const overview = await get(`/v1/dashboard/overview?from=${from}&to=${from + DAY_MS}`);
    expect(overview.previousFrom).toBe(new Date(FROM).toISOString());
    expect(overview.sessions).toEqual({ value: 6, previous: 0, change: 6, relativeChange: null });
    expect(overview.topIssues).toEqual([]);
  });

  it('defaults to the last 7 days', async () => {
    const fresh = await test.createProject('Fresh');
    const now = Date.now();
    await seedSessions(test.database.database, fresh.project.id, 2, { start: now - 3600_000, withErrors: 1 });
    await seedSessions(test.database.database, fresh.project.id, 1, { start: now - 10 * DAY_MS });
    const overview = await get('/v1/dashboard/overview', fresh);
    expect(Date.parse(overview.to) - Date.parse(overview.from)).toBe(7 * DAY_MS);
    expect(Math.abs(Date.parse(overview.to) - now)).toBeLessThan(60_000);
    expect(overview.sessions).toEqual({ value: 2, previous: 1, change: 1, relativeChange: 1 });
    expect(overview.errorRate).toEqual({ value: 0.5, previous: 0, change: 0.5, relativeChange: null });
    expect(overview.calls).toEqual({ value: 0, previous: 0, change: 0, relativeChange: null });
    expect(overview.callQuality).toEqual({ value: null, previous: null, change: null, relativeChange: null });
    expect(overview.topIssues).toEqual([]);
  });

  it('refuses a bad range, and needs sessions:read of the project', async () => {
    for (const query of [`from=${TO}&to=${FROM}`, 'from=soon', 'days=7']) {
      const response = await request('GET', `/v1/dashboard/overview?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().code).toBe('invalid');
    }
    const other = await test.createProject('Other');
    const theirs = await get(`/v1/dashboard/overview?${RANGE}`, other);
    expect(theirs.sessions.value).toBe(0);
    expect(theirs.topIssues).toEqual([]);

    const callsOnly = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'calls only',
      scopes: ['calls:read'],
    });
    const refused = await request('GET', '/v1/dashboard/overview', undefined, {
      headers: { authorization: `Bearer ${callsOnly.token}` },
    });
    expect(refused.statusCode).toBe(403);
    expect(
      (await request('GET', '/v1/dashboard/overview', undefined, { headers: { authorization: '' } }))
        .statusCode,
    ).toBe(401);
  });
});
