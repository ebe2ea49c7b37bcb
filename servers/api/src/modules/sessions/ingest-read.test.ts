import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSession } from '../../../test/seed.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';

// The read API over what POST /v1/ingest stored (not the seed helper): the views of an ingested
// session agree with those of the same recording seeded by test/seed.ts.

const require = createRequire(import.meta.url);
const fixture = (name: string) =>
  readFileSync(require.resolve(`@svc/protocol/fixtures/valid/Chunk/${name}.json`));
const SESSION_ID = 'ses_01KAJBCH80XTQ0YDPAV81S476S';
const VISIT_ID = 'vis_01KAJBCH80XVX6E4BD2QB0Q16Q';

describe.each(ENGINES)('reading what ingest stored on %s', (engine) => {
  let test: TestApp;
  const sent = [fixture('recording-seq-1'), fixture('recording-seq-0')];
  beforeAll(async () => {
    test = await createTestApp(engine);
    for (const body of sent) {
      const response = await test.app.inject({
        method: 'POST',
        url: '/v1/ingest',
        headers: {
          'x-service-project-key': test.first.projectKey,
          'x-service-encoding': 'json',
          'content-type': 'application/json',
        },
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(200);
    }
  });
  afterAll(async () => {
    await test?.close();
  });

  const get = (url: string) => test.app.inject({ url, headers: test.first.headers });

  it('reads back the chunks byte-identical', async () => {
    for (const [seq, body] of [
      [0, sent[1]],
      [1, sent[0]],
    ] as const) {
      const response = await get(`/v1/sessions/${SESSION_ID}/chunks/${seq}`);
      expect(response.statusCode).toBe(200);
      expect(Buffer.compare(response.rawPayload, body as Buffer)).toBe(0);
    }
  });

  it('answers the same views as the seeded recording', async () => {
    const other = await test.createProject('seeded');
    const seeded = await seedSession(test, other, { id: SESSION_ID, visitId: VISIT_ID });
    const read = async (url: string, headers: { authorization: string }) =>
      (await test.app.inject({ url, headers })).json();
    const comparable = (detail: { chunks: Array<Record<string, unknown>> }) => ({
      ...detail,
      // Sizes differ (the seed pretty-prints differently) and so do arrival times.
      chunks: detail.chunks.map(({ sizeBytes: _size, receivedAt: _received, ...chunk }) => chunk),
    });
    const ingested = await read(`/v1/sessions/${SESSION_ID}`, test.first.headers);
    expect(comparable(ingested)).toEqual(comparable(await read(`/v1/sessions/${seeded.id}`, other.headers)));
    expect(ingested).toMatchObject({ level: 'high', errorCount: 2, chunks: [{ seq: 0 }, { seq: 1 }] });
    for (const path of ['issues', 'events?limit=1000']) {
      expect(await read(`/v1/sessions/${SESSION_ID}/${path}`, test.first.headers)).toEqual(
        await read(`/v1/sessions/${seeded.id}/${path}`, other.headers),
      );
    }
    expect((await read('/v1/sessions', test.first.headers)).items).toEqual(
      (await read('/v1/sessions', other.headers)).items,
    );
    expect(await read(`/v1/visits/${VISIT_ID}`, test.first.headers)).toEqual(
      await read(`/v1/visits/${VISIT_ID}`, other.headers),
    );
  });
});
