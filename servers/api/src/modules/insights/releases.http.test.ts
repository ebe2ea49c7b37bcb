import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type Json } from '../../../test/http.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import { checkRegressions } from './regressions.ts';
import { DAY_MS, seedCalls, seedCluster, seedPageViews, seedSessions } from './seed.fixture.ts';
import { summarizeVital } from './vitals.ts';

// GET /v1/releases on seeded sessions, calls, page views and issue occurrences: every number
// exact, the order, pages, the from/to and environment filters, refusals and access.

const T0 = Date.UTC(2026, 10, 2, 8, 0, 0);
const HOUR_MS = 3600 * 1000;
const LCP_VALUES = [1000, 2000, 3000, 5000];

const noVital = { count: 0, p75: null, rating: null };

describe.each(ENGINES)('GET /v1/releases on %s', (engine) => {
  let test: TestApp;
  const { request, get } = apiClient(() => test);

  beforeAll(async () => {
    test = await createTestApp(engine);
    const database = test.database.database;
    const projectId = test.first.project.id;
    // 1.0.0 in production: 10 sessions, 2 with an error, users u0..u3 on 8 of them.
    await seedSessions(database, projectId, 10, {
      release: '1.0.0',
      environment: 'production',
      start: T0,
      withErrors: 2,
      user: (index) => (index < 8 ? `u${index % 4}` : null),
    });
    // 1.1.0: 5 sessions in production (1 with an error), 3 in staging a day later (all with one).
    await seedSessions(database, projectId, 5, {
      release: '1.1.0',
      environment: 'production',
      start: T0 + DAY_MS,
      withErrors: 1,
    });
    await seedSessions(database, projectId, 3, {
      release: '1.1.0',
      environment: 'staging',
      start: T0 + 2 * DAY_MS,
      withErrors: 3,
    });
    await seedSessions(database, projectId, 4, {
      release: '2.0.0',
      environment: 'production',
      start: T0 + 3 * DAY_MS,
    });
    // Sessions without a release are no release.
    await seedSessions(database, projectId, 2, { start: T0 + 4 * DAY_MS, withErrors: 2 });

    await seedCalls(database, projectId, [90, 80, 50, null], {
      release: '1.0.0',
      environment: 'production',
      start: T0,
    });
    await seedCalls(database, projectId, [70, 40], {
      release: '1.1.0',
      environment: 'production',
      start: T0 + DAY_MS,
    });
    await seedCalls(database, projectId, [10], {
      release: '1.1.0',
      environment: 'staging',
      start: T0 + 2 * DAY_MS,
    });

    await seedPageViews(database, projectId, 4, {
      release: '1.0.0',
      environment: 'production',
      start: T0,
      view: (index) => ({ lcp: LCP_VALUES[index] ?? null, cls: 0.05 }),
    });
    // A page view of another release does not count in 1.0.0.
    await seedPageViews(database, projectId, 1, {
      release: '2.0.0',
      environment: 'production',
      start: T0 + 3 * DAY_MS,
      view: () => ({ lcp: 9000 }),
    });

    // A: first in 1.0.0. B: first in 1.1.0 (staging), in production first in 2.0.0. C: first in 1.1.0.
    await seedCluster(database, projectId, 'A', [
      { t: T0 + HOUR_MS, release: '1.0.0', environment: 'production' },
      { t: T0 + DAY_MS + HOUR_MS, release: '1.1.0', environment: 'production' },
    ]);
    await seedCluster(database, projectId, 'B', [
      { t: T0 + 2 * DAY_MS + HOUR_MS, release: '1.1.0', environment: 'staging' },
      { t: T0 + 3 * DAY_MS + HOUR_MS, release: '2.0.0', environment: 'production' },
    ]);
    await seedCluster(database, projectId, 'C', [
      { t: T0 + DAY_MS + 2 * HOUR_MS, release: '1.1.0', environment: 'production' },
    ]);
  });

  afterAll(async () => {
    await test?.close();
  });

  it('lists every release, first seen newest first, with exact numbers', async () => {
    const page = await get('/v1/releases');
    expect(page.nextCursor).toBeUndefined();
    expect(page.items.map((item: Json) => item.release)).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    const [newest, middle, oldest] = page.items;

    const lcp = summarizeVital(LCP_VALUES, 'LCP');
    expect(oldest).toEqual({
      release: '1.0.0',
      firstSeenAt: new Date(T0).toISOString(),
      lastSeenAt: new Date(T0 + 9_000 + 500).toISOString(),
      sessions: 10,
      users: 4,
      sessionsWithErrors: 2,
      errorRate: 0.2,
      newIssues: 1,
      calls: 4,
      callQuality: 80,
      poorCallRate: 1 / 3,
      vitals: {
        // The same p75 as summarizeVital's nearest rank.
        LCP: { count: 4, p75: lcp.p75, rating: 'needs-improvement' },
        INP: noVital,
        CLS: { count: 4, p75: 0.05, rating: 'good' },
        FCP: noVital,
        TTFB: noVital,
      },
      regressions: [],
    });
    expect(lcp.p75).toBe(3000);

    expect(middle).toMatchObject({
      release: '1.1.0',
      firstSeenAt: new Date(T0 + DAY_MS).toISOString(),
      lastSeenAt: new Date(T0 + 2 * DAY_MS + 2_000 + 500).toISOString(),
      sessions: 8,
      users: 0,
      sessionsWithErrors: 4,
      errorRate: 0.5,
      newIssues: 2,
      calls: 3,
      callQuality: 40,
      poorCallRate: 2 / 3,
    });
    expect(newest).toMatchObject({
      release: '2.0.0',
      sessions: 4,
      errorRate: 0,
      newIssues: 0,
      calls: 0,
      callQuality: null,
      poorCallRate: null,
      vitals: { LCP: { count: 1, p75: 9000, rating: 'poor' } },
    });
  });

  it('restricts every number to an environment', async () => {
    const production = await get('/v1/releases?environment=production');
    expect(production.items.map((item: Json) => item.release)).toEqual(['2.0.0', '1.1.0', '1.0.0']);
    expect(production.items[1]).toMatchObject({
      sessions: 5,
      sessionsWithErrors: 1,
      errorRate: 0.2,
      // B's first occurrence in production was in 2.0.0.
      newIssues: 1,
      calls: 2,
      callQuality: 55,
      poorCallRate: 0.5,
    });
    expect(production.items[0]).toMatchObject({ release: '2.0.0', newIssues: 1 });

    const staging = await get('/v1/releases?environment=staging');
    expect(staging.items).toHaveLength(1);
    expect(staging.items[0]).toMatchObject({
      release: '1.1.0',
      firstSeenAt: new Date(T0 + 2 * DAY_MS).toISOString(),
      sessions: 3,
      errorRate: 1,
      newIssues: 1,
      calls: 1,
      callQuality: 10,
      poorCallRate: 1,
    });
    expect((await get('/v1/releases?environment=nowhere')).items).toEqual([]);
  });

  it('pages with nextCursor and filters on when releases were first seen', async () => {
    const first = await get('/v1/releases?limit=2');
    expect(first.items.map((item: Json) => item.release)).toEqual(['2.0.0', '1.1.0']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await get(`/v1/releases?limit=2&cursor=${first.nextCursor}`);
    expect(second.items.map((item: Json) => item.release)).toEqual(['1.0.0']);
    expect(second.nextCursor).toBeUndefined();

    const from = new Date(T0 + DAY_MS).toISOString();
    expect((await get(`/v1/releases?from=${from}`)).items.map((item: Json) => item.release)).toEqual([
      '2.0.0',
      '1.1.0',
    ]);
    expect((await get(`/v1/releases?to=${from}`)).items.map((item: Json) => item.release)).toEqual(['1.0.0']);
  });

  it('lists the release regressions that fired for each release; an equal release has none', async () => {
    const project = await test.createProject('Regressions');
    const database = test.database.database;
    const projectId = project.project.id;
    const now = new Date();
    const first = now.getTime() - 10 * DAY_MS;
    // Production: 5% of sessions with an error in 1.0.0, 20% in 2.0.0 (worse), 20% in 3.0.0 (equal).
    // Staging: 10% in both 1.0.0 and 2.0.0.
    for (const [release, environment, start, withErrors] of [
      ['1.0.0', 'production', first, 10],
      ['2.0.0', 'production', now.getTime() - 4 * DAY_MS, 40],
      ['3.0.0', 'production', now.getTime() - 2 * DAY_MS, 40],
      ['1.0.0', 'staging', first, 20],
      ['2.0.0', 'staging', now.getTime() - 4 * DAY_MS, 20],
    ] as const)
      await seedSessions(database, projectId, 200, { release, environment, start, withErrors });
    const check = await checkRegressions(database, project.project, now);
    expect(check.fired).toEqual([
      { type: 'release.regression', key: JSON.stringify(['production', '2.0.0', 'error_rate']) },
    ]);

    const page = await get('/v1/releases', project);
    expect(page.items.map((item: Json) => [item.release, item.regressions.length])).toEqual([
      ['3.0.0', 0],
      ['2.0.0', 1],
      ['1.0.0', 0],
    ]);
    const [regression] = page.items[1].regressions;
    expect(regression).toEqual({
      metric: 'error_rate',
      environment: 'production',
      release: '2.0.0',
      previousRelease: '1.0.0',
      current: { events: 40, total: 200, rate: 0.2 },
      previous: { events: 10, total: 200, rate: 0.05 },
      z: expect.any(Number),
      pOneSided: expect.any(Number),
      alpha: 0.01,
      minTotal: 100,
      firedAt: now.toISOString(),
    });
    // The numbers the webhook carried: pooled p = 50/400, z = 0.15 / √(0.125 · 0.875 · (2/200)).
    expect(regression.z).toBeCloseTo(0.15 / Math.sqrt(0.125 * 0.875 * 0.01), 10);
    expect(regression.pOneSided).toBeLessThan(0.001);

    // With an environment, that environment's regressions only.
    const staging = await get('/v1/releases?environment=staging', project);
    expect(staging.items.map((item: Json) => [item.release, item.regressions])).toEqual([
      ['2.0.0', []],
      ['1.0.0', []],
    ]);
    const production = await get('/v1/releases?environment=production&limit=1', project);
    expect(production.items[0]).toMatchObject({ release: '3.0.0', regressions: [] });
    const second = await get(
      `/v1/releases?environment=production&limit=1&cursor=${production.nextCursor}`,
      project,
    );
    expect(second.items[0].regressions).toEqual([regression]);
    // Another project's releases never show them.
    expect((await get('/v1/releases')).items.every((item: Json) => item.regressions.length === 0)).toBe(true);
  });

  it('refuses bad parameters with 400 invalid', async () => {
    for (const query of [
      'limit=0',
      'limit=101',
      'cursor=nope',
      `from=${T0 + DAY_MS}&to=${T0}`,
      'from=yesterday',
      'release=1.0.0',
    ]) {
      const response = await request('GET', `/v1/releases?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().code, query).toBe('invalid');
    }
  });

  it('shows a project only its own releases and needs sessions:read', async () => {
    const other = await test.createProject('Other');
    expect((await get('/v1/releases', other)).items).toEqual([]);

    expect(
      (await request('GET', '/v1/releases', undefined, { headers: { authorization: '' } })).statusCode,
    ).toBe(401);
    const callsOnly = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'calls only',
      scopes: ['calls:read'],
    });
    const refused = await request('GET', '/v1/releases', undefined, {
      headers: { authorization: `Bearer ${callsOnly.token}` },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'unauthorized' });
    const sessionsOnly = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'sessions only',
      scopes: ['sessions:read'],
    });
    const allowed = await get('/v1/releases', { headers: { authorization: `Bearer ${sessionsOnly.token}` } });
    expect(allowed.items).toHaveLength(3);
  });
});
