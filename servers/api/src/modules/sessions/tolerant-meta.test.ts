import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../../../test/http.ts';
import { captureLogs, newSessionId, postChunk } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';

// PROTOCOL.md §1: an empty or malformed optional meta field is dropped, the chunk stored without
// it, and the answer says what was dropped. Required fields keep refusing the chunk.

const require = createRequire(import.meta.url);

interface ToleratedEntry {
  name: string;
  schema: string;
  value: Record<string, unknown>;
  dropped?: Array<{ path: string; reason: string }>;
}

/** The protocol's tolerated chunks that drop optional meta fields. */
async function metaCases(): Promise<ToleratedEntry[]> {
  const entries = JSON.parse(
    await readFile(require.resolve('@svc/protocol/fixtures/tolerated/catalogue.json'), 'utf8'),
  ) as ToleratedEntry[];
  return entries.filter((entry) => entry.schema === 'Chunk' && (entry.dropped?.length ?? 0) > 0);
}

const cases = await metaCases();

describe.each(ENGINES)('tolerant meta on POST /v1/ingest on %s', (engine) => {
  let test: TestApp;
  const logs = captureLogs();
  beforeAll(async () => {
    test = await createTestApp(engine, { logger: logs.logger });
  });
  afterAll(async () => {
    await test?.close();
  });

  const { get } = apiClient(() => test);
  const readChunk = (sessionId: string, seq: number) =>
    get<Record<string, unknown> & { meta: Record<string, unknown> }>(
      `/v1/sessions/${sessionId}/chunks/${seq}`,
    );
  const sessionRow = (sessionId: string) =>
    test.database.database
      .selectFrom('sessions')
      .selectAll()
      .where('project_id', '=', test.first.project.id)
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();

  it('covers the catalogue', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  it.each(cases)(
    '$name: stored without the dropped fields, which the answer lists',
    async ({ value, dropped }) => {
      const sessionId = newSessionId();
      const sent: Record<string, unknown> = { ...value, sessionId };
      const response = await postChunk(test.app, test.first.projectKey, Buffer.from(JSON.stringify(sent)));
      expect(response.statusCode, response.body).toBe(200);
      const answer = response.json();
      expect(answer).toMatchObject({ seq: sent.seq, duplicate: false });
      expect(
        answer.dropped.map(({ path, reason }: { path: string; reason: string }) => ({ path, reason })),
      ).toEqual(dropped);
      expect(answer).not.toHaveProperty('redacted');

      const stored = await readChunk(sessionId, sent.seq as number);
      // Exactly what was sent, less the dropped fields.
      const expected = structuredClone(sent) as unknown as typeof stored;
      for (const { path } of dropped ?? []) {
        const [, ...keys] = path.split('.');
        const last = keys.pop() as string;
        const container = keys.reduce<Record<string, unknown>>(
          (object, key) => object[key] as Record<string, unknown>,
          expected.meta,
        );
        delete container[last];
      }
      expect(stored).toEqual(expected);
    },
  );

  it('indexes the session from what it kept, counts the drops, and answers a retry alike', async () => {
    const [first] = cases.filter(({ name }) => name === 'meta-several-bad-optional-fields');
    if (first === undefined) throw new Error('the catalogue lost meta-several-bad-optional-fields');
    const sessionId = newSessionId();
    const bytes = Buffer.from(JSON.stringify({ ...first.value, sessionId }));

    const answer = (await postChunk(test.app, test.first.projectKey, bytes)).json();
    const session = await sessionRow(sessionId);
    expect(session).toMatchObject({
      referrer: null,
      browser_name: 'Firefox',
      browser_version: null,
      os_name: 'Linux',
      os_version: null,
      user_id: 'u_8842',
      user_email: null,
      user_name: null,
      chunk_count: 1,
    });
    const logged = () => logs.lines.filter((line) => line.sessionId === sessionId && 'dropped' in line);
    expect(logged()).toEqual([
      expect.objectContaining({
        level: 30,
        seq: 0,
        msg: 'dropped 5 empty or malformed optional meta field(s)',
        dropped: answer.dropped,
      }),
    ]);

    // The same bytes again: a duplicate (the hash is of the bytes as sent), the same report.
    const retry = await postChunk(test.app, test.first.projectKey, bytes, { encoding: 'json' });
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json()).toEqual({ ...answer, duplicate: true });
    // Counted once: a duplicate stored nothing.
    expect(logged()).toHaveLength(1);
    // Other bytes for the same seq are still a conflict.
    const other = Buffer.from(JSON.stringify({ ...first.value, sessionId, sentAt: 1763700009000 }));
    expect((await postChunk(test.app, test.first.projectKey, other)).statusCode).toBe(409);
  });

  it('answers a chunk with nothing to drop exactly as before: { seq, duplicate }', async () => {
    const [conforming] = (
      JSON.parse(
        await readFile(require.resolve('@svc/protocol/fixtures/tolerated/catalogue.json'), 'utf8'),
      ) as ToleratedEntry[]
    ).filter(({ name }) => name === 'meta-os-version-omitted');
    if (conforming === undefined) throw new Error('the catalogue lost meta-os-version-omitted');
    const sessionId = newSessionId();
    const bytes = Buffer.from(JSON.stringify({ ...conforming.value, sessionId }));
    const response = await postChunk(test.app, test.first.projectKey, bytes);
    expect(response.json()).toEqual({ seq: 0, duplicate: false });
    expect(Buffer.from(JSON.stringify(await readChunk(sessionId, 0)))).toEqual(bytes);
    expect(await sessionRow(sessionId)).toMatchObject({ os_name: 'Linux', os_version: null });
  });

  it('still refuses a chunk whose required meta field is bad, storing nothing', async () => {
    const [base] = cases;
    if (base === undefined) throw new Error('no cases');
    const sessionId = newSessionId();
    const meta = base.value.meta as Record<string, unknown>;
    const bad = { ...base.value, sessionId, meta: { ...meta, os: { name: '', version: '' } } };
    const response = await postChunk(test.app, test.first.projectKey, Buffer.from(JSON.stringify(bad)));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      code: 'invalid',
      error: expect.stringMatching(/meta\.os\.name/),
    });
    const rows = await test.database.database
      .selectFrom('chunks')
      .select('seq')
      .where('session_id', '=', sessionId)
      .execute();
    expect(rows).toEqual([]);
  });
});
