import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVisitId, type SeededSession, seedSession } from '../../../test/seed.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';

const T0 = Date.UTC(2026, 0, 1);

describe.each(ENGINES)('GET /v1/visits/{id} on %s', (engine) => {
  let test: TestApp;
  let other: TestProject;
  const visitId = createVisitId();
  let segments: SeededSession[];
  beforeAll(async () => {
    test = await createTestApp(engine);
    other = await test.createProject('other');
    // Three segments of one visit, seeded out of order, plus a session of another visit.
    segments = [
      await seedSession(test, test.first, { visitId, startedAt: T0 + 120_000, seqs: [0], quiet: true }),
      await seedSession(test, test.first, { visitId, startedAt: T0, seqs: [0, 1] }),
      await seedSession(test, test.first, { visitId, startedAt: T0 + 60_000, seqs: [0], durationMs: 30_000 }),
    ];
    await seedSession(test, test.first, { visitId: createVisitId(), startedAt: T0 + 30_000, seqs: [0] });
    // Visit ids come from clients: another project's visit with the same id stays apart.
    await seedSession(test, other, { visitId, startedAt: T0 + 10_000, seqs: [0] });
  });
  afterAll(async () => {
    await test?.close();
  });

  it("answers the visit's sessions as segments, oldest first", async () => {
    const response = await test.app.inject({ url: `/v1/visits/${visitId}`, headers: test.first.headers });
    expect(response.statusCode).toBe(200);
    const visit = response.json();
    const [late, first, middle] = segments as [SeededSession, SeededSession, SeededSession];
    expect(visit).toMatchObject({
      id: visitId,
      startedAt: new Date(T0).toISOString(),
      durationMs: 120_000 + 9_050,
      truncated: false,
    });
    expect(visit.segments.map((segment: { id: string }) => segment.id)).toEqual([
      first.id,
      middle.id,
      late.id,
    ]);
    expect(visit.segments[0]).toMatchObject({ visitId, errorCount: 2, chunkCount: 2, hasGaps: true });
    expect(visit.segments[1]).toMatchObject({ durationMs: 30_000 });
  });

  it("answers 404 for an unknown visit or another project's, and 400 for a malformed id", async () => {
    for (const [id, status] of [
      [createVisitId(), 404],
      ['vis_nope', 400],
      ['..%2F..%2Fetc', 400],
      [segments[0]?.id as string, 400],
    ] as const) {
      const response = await test.app.inject({ url: `/v1/visits/${id}`, headers: test.first.headers });
      expect(response.statusCode, id).toBe(status);
    }
    const theirs = await test.app.inject({ url: `/v1/visits/${visitId}`, headers: other.headers });
    expect(theirs.json().segments).toHaveLength(1);
    const stranger = await test.createProject('stranger');
    const response = await test.app.inject({ url: `/v1/visits/${visitId}`, headers: stranger.headers });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('not_found');
    expect((await test.app.inject({ url: `/v1/visits/${visitId}` })).statusCode).toBe(401);
  });
});
