import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../../test/call-timelines.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { chunksOf, sessionEvents, T0 } from './insights.fixture.ts';

// `GET /v1/vitals` and `GET /v1/heatmaps` over facts the facts job derived from sessions ingested
// through the real route, on both engines.

describe.each(ENGINES)('insights endpoints on %s', (engine) => {
  let test: TestApp;
  let project: TestProject;
  const sessions: string[] = [];
  beforeAll(async () => {
    test = await createTestApp(engine);
    project = await test.createProject('insights');
    // Two desktop sessions (LCP 1.8 s and 3 s) and one mobile session (LCP 5 s), a day apart.
    const variants = [
      { width: 1280, lcp: 1_800, start: T0 },
      { width: 1280, lcp: 3_000, start: T0 + 60_000 },
      { width: 390, lcp: 5_000, start: T0 + 86_400_000 },
    ];
    for (const variant of variants) {
      const sessionId = newSessionId();
      sessions.push(sessionId);
      for (const body of chunksOf(sessionId, sessionEvents(variant), [6]))
        await ingest(test.app, project.projectKey, body);
    }
    await test.factsWorker.runUntilIdle();
  });
  afterAll(async () => {
    await test?.close();
  });

  const { get, request } = apiClient(
    () => test,
    () => project,
  );
  const range = `from=${T0 - 3_600_000}&to=${T0 + 3 * 86_400_000}`;

  it('gives p75 and rating shares overall, per route and per day', async () => {
    const vitals = await get(`/v1/vitals?${range}`);
    expect(vitals.overall.pageViews).toBe(6);
    expect(vitals.overall.metrics.LCP).toEqual({
      count: 3,
      p75: 5_000,
      rating: 'poor',
      good: 1 / 3,
      needsImprovement: 1 / 3,
      poor: 1 / 3,
    });
    expect(vitals.overall.metrics.INP).toMatchObject({
      count: 3,
      p75: 350,
      rating: 'needs-improvement',
      needsImprovement: 1,
    });
    expect(vitals.overall.metrics.FCP).toEqual({ count: 0, good: 0, needsImprovement: 0, poor: 0 });
    expect(vitals.routes.map((row: Json) => [row.route, row.pageViews, row.metrics.LCP.count])).toEqual([
      ['/orders/:id', 3, 0],
      ['/products', 3, 3],
    ]);
    expect(vitals.series.map((row: Json) => [row.day, row.pageViews, row.metrics.LCP.p75])).toEqual([
      ['2026-11-20', 4, 3_000],
      ['2026-11-21', 2, 5_000],
    ]);
    const desktop = await get(`/v1/vitals?${range}&device=desktop&route=/products`);
    expect(desktop.overall.metrics.LCP).toMatchObject({ count: 3, p75: 5_000 });
    const release = await get(`/v1/vitals?${range}&release=9.9.9`);
    expect(release.overall).toMatchObject({ pageViews: 0, metrics: { LCP: { count: 0 } } });
  });

  it('counts clicks, rage and dead clicks per selector, by breakpoint, with a backdrop session', async () => {
    const clicks = await get(`/v1/heatmaps?${range}&route=/products&kind=click`);
    expect(clicks.total).toBe(12);
    expect(clicks.elements.map((element: Json) => [element.selector, element.count])).toEqual([
      ['main > button.ghost', 9],
      ['main > button#buy.btn.primary', 3],
    ]);
    expect(clicks.elements[1].points[0]).toEqual({ pageX: 100, pageY: 200, elementX: 0.5, elementY: 0.25 });
    expect(clicks.backdrop).toMatchObject({ sessionId: sessions[2], offsetMs: 0 });
    expect(clicks.backdrop.replay).toBe(`${test.configuration.appUrl}/sessions/${sessions[2]}?t=0`);

    const rage = await get(`/v1/heatmaps?${range}&route=/products&kind=rageclick&breakpoint=desktop`);
    expect(rage).toMatchObject({
      breakpoint: 'desktop',
      total: 2,
      elements: [{ selector: 'main > button.ghost', count: 2 }],
    });
    expect(rage.backdrop.sessionId).toBe(sessions[1]);
    const dead = await get(`/v1/heatmaps?${range}&route=/products&kind=deadclick&breakpoint=mobile`);
    expect(dead).toMatchObject({ total: 3, elements: [{ selector: 'main > button.ghost', count: 3 }] });
    const none = await get(`/v1/heatmaps?${range}&route=/nowhere&kind=click`);
    expect(none).toMatchObject({ total: 0, elements: [] });
    expect(none.backdrop).toBeUndefined();
  });

  it('gives the share of page views that reached each depth', async () => {
    const scroll = await get(`/v1/heatmaps?${range}&route=/products&kind=scroll&breakpoint=desktop`);
    expect(scroll).toMatchObject({ pageViews: 2, medianPageHeight: 3_000 });
    expect(scroll.depths).toHaveLength(23);
    expect(scroll.depths[0]).toEqual({ depth: 0, reached: 2, share: 1 });
    expect(scroll.depths[22]).toEqual({ depth: 2_200, reached: 2, share: 1 });
  });

  it('refuses bad queries and callers without the sessions scope', async () => {
    const bad = await request('GET', `/v1/heatmaps?route=/products&kind=hover`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: expect.any(String) });
    expect((await request('GET', '/v1/heatmaps?kind=click')).statusCode).toBe(400);
    expect((await request('GET', `/v1/vitals?from=${T0}&to=${T0 - 1}`)).statusCode).toBe(400);
    expect((await request('GET', `/v1/vitals?from=0&to=${T0}`)).statusCode).toBe(400);
    const anonymous = await test.app.inject({ method: 'GET', url: '/v1/vitals' });
    expect(anonymous.statusCode).toBe(401);
  });
});
