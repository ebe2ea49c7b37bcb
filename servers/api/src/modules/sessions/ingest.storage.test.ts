import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deflate,
  newSessionId,
  postChunk,
  rewriteChunk,
  storedState,
  validChunkFixture,
} from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { rotateProjectKey } from '../projects/projects.ts';
import { ingestReads } from './ingest.fixture.ts';

// What POST /v1/ingest stores: the protocol fixtures indexed as session, chunks and signals and
// read back byte for byte, duplicates, chunks out of order, and requests that race.

describe.each(ENGINES)('POST /v1/ingest on %s', (engine) => {
  let test: TestApp;
  let seq0: Buffer;
  let seq1: Buffer;
  let call: Buffer;
  beforeAll(async () => {
    test = await createTestApp(engine);
    [seq0, seq1, call] = await Promise.all([
      validChunkFixture('recording-seq-0'),
      validChunkFixture('recording-seq-1'),
      validChunkFixture('call'),
    ]);
  });
  afterAll(async () => {
    await test?.close();
  });

  const { state, sessionRow, chunkRows, signalRows, readBack } = ingestReads(() => test);

  describe('happy path', () => {
    it('stores the protocol fixtures (json+deflate and json) and indexes session, chunks and signals', async () => {
      const project = test.first;
      const sessionId = 'ses_01KAJBCH80XTQ0YDPAV81S476S';
      const first = await postChunk(test.app, project.projectKey, seq0);
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toEqual({ seq: 0, duplicate: false });
      const second = await postChunk(test.app, project.projectKey, seq1, {
        encoding: 'json',
        contentType: 'application/json',
      });
      expect(second.statusCode, second.body).toBe(200);
      expect(second.json()).toEqual({ seq: 1, duplicate: false });
      const third = await postChunk(test.app, project.projectKey, call, {
        contentType: 'application/octet-stream',
      });
      expect(third.statusCode, third.body).toBe(200);

      expect(await readBack(project, sessionId, 0)).toEqual(seq0);
      expect(await readBack(project, sessionId, 1)).toEqual(seq1);
      expect(await readBack(project, 'ses_01M806GD0GQSF6C6BZ1E1T0MCD', 0)).toEqual(call);

      const session = await sessionRow(project, sessionId);
      expect(session).toMatchObject({
        visit_id: 'vis_01KAJBCH80XVX6E4BD2QB0Q16Q',
        started_at: new Date(1763700000000),
        last_event_at: new Date(1763700020000),
        duration_ms: 20_000,
        url: 'https://app.example.com/calls/42?ref=calendar',
        referrer: 'https://calendar.example.com/',
        browser_name: 'Chrome',
        browser_version: '142.0.0.0',
        os_name: 'macOS',
        os_version: '15.1',
        device: 'desktop',
        viewport_width: 1280,
        viewport_height: 720,
        release: 'web@2025.11.3',
        environment: 'production',
        // The identify event (with email and name) wins over meta.user.
        user_id: 'u_8842',
        user_email: 'ada@example.com',
        user_name: 'Ada Lovelace',
        recording_mode: 'always',
        sdk_name: '@svc/browser-sdk',
        sdk_version: '0.1.0',
        error_count: 2,
        level: 'high',
        chunk_count: 2,
        max_seq: 1,
      });

      const chunks = await chunkRows(project, sessionId);
      expect(chunks.map((chunk) => [chunk.seq, chunk.encoding])).toEqual([
        [0, 'json+deflate'],
        [1, 'json'],
      ]);
      expect(chunks[0]).toMatchObject({
        inflated_bytes: seq0.byteLength,
        received_bytes: deflate(seq0).byteLength,
        event_count: 20,
        first_event_at: new Date(1763700000000),
        last_event_at: new Date(1763700009050),
        sent_at: new Date(1763700009500),
      });
      expect(chunks[1]).toMatchObject({ inflated_bytes: seq1.byteLength, received_bytes: seq1.byteLength });
      expect(session.stored_bytes).toBe(chunks.reduce((sum, chunk) => sum + chunk.stored_bytes, 0));
      for (const chunk of chunks) {
        expect(chunk.blob_key).toMatch(
          new RegExp(
            `^projects/${project.project.id}/sessions/${sessionId}/000000000${chunk.seq}\\.[0-9a-f]{16}\\.chunk$`,
          ),
        );
      }

      const signals = await signalRows(project, sessionId);
      expect(
        signals.map(({ seq, event_index, kind, severity, name, message }) => ({
          seq,
          event_index,
          kind,
          severity,
          name,
          message,
        })),
      ).toEqual([
        {
          seq: 0,
          event_index: 9,
          kind: 'custom',
          severity: 'info',
          name: 'chat_message_sent',
          message: null,
        },
        {
          seq: 0,
          event_index: 13,
          kind: 'error',
          severity: 'high',
          name: 'TypeError',
          message: "Cannot read properties of undefined (reading 'srcObject')",
        },
        {
          seq: 0,
          event_index: 14,
          kind: 'error',
          severity: 'high',
          name: 'Error',
          message: 'Reconnect failed',
        },
        { seq: 0, event_index: 15, kind: 'trigger', severity: 'info', name: 'webrtc:freeze', message: null },
        { seq: 0, event_index: 18, kind: 'gap', severity: 'info', name: 'hidden', message: null },
        // A track() without a severity: a signal for custom rules, not a problem of the session.
        { seq: 1, event_index: 3, kind: 'custom', severity: null, name: 'call_rated', message: null },
      ]);
      expect(signals[4]?.details).toEqual({ fromT: 1763700006100, toT: 1763700009000, reason: 'hidden' });
      expect(signals[4]?.t).toEqual(new Date(1763700009000));
      expect(signals[1]?.details).toMatchObject({
        source: 'onerror',
        stack: expect.stringContaining('attachRemote'),
      });
      expect(signals[0]?.details).toEqual({ props: { length: 5, channel: 'call', hasMention: false } });

      const callSession = await sessionRow(project, 'ses_01M806GD0GQSF6C6BZ1E1T0MCD');
      expect(callSession).toMatchObject({ chunk_count: 1, max_seq: 0, environment: 'test', error_count: 0 });
    });

    it('answers a re-sent chunk as a duplicate, in either encoding, and changes nothing', async () => {
      const project = test.first;
      const sessionId = 'ses_01KAJBCH80XTQ0YDPAV81S476S';
      const before = await state();
      const sessionBefore = await sessionRow(project, sessionId);
      for (const [body, encoding] of [
        [seq0, 'json'],
        [seq0, 'json+deflate'],
        [seq1, 'json+deflate'],
        [call, null],
      ] as const) {
        const response = await postChunk(test.app, project.projectKey, body, { encoding });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json()).toMatchObject({ duplicate: true });
      }
      expect(await state()).toEqual(before);
      expect(await sessionRow(project, sessionId)).toEqual(sessionBefore);
    });

    it('accepts a rotated project key during its grace period', async () => {
      const project = await test.createProject('Rotated');
      await rotateProjectKey(test.database.database, project.project.id);
      const body = rewriteChunk(seq0, { sessionId: newSessionId() });
      const response = await postChunk(test.app, project.projectKey, body);
      expect(response.statusCode, response.body).toBe(200);
    });

    it('accepts every documented content type, and none', async () => {
      const sessionId = newSessionId();
      const cases: Array<[string | null, string | undefined]> = [
        ['json+deflate', undefined],
        ['json+deflate', 'application/octet-stream'],
        ['json', undefined],
        ['json', 'application/json'],
        ['json', 'application/json; charset=utf-8'],
        ['json', 'application/octet-stream'],
        [null, 'application/json'],
        ['JSON+Deflate', undefined],
      ];
      for (const [index, [encoding, contentType]] of cases.entries()) {
        const body = rewriteChunk(seq1, { sessionId, seq: index + 1 });
        const response = await postChunk(test.app, test.first.projectKey, body, {
          encoding,
          ...(contentType === undefined ? {} : { contentType }),
        });
        expect(response.statusCode, `${encoding} ${contentType}: ${response.body}`).toBe(200);
      }
      expect((await sessionRow(test.first, sessionId)).chunk_count).toBe(cases.length);
    });
  });

  describe('out of order', () => {
    it('builds the same session whatever order its chunks arrive in', async () => {
      const inOrder = newSessionId();
      const reversed = newSessionId();
      const chunks = [0, 1, 2, 3].map((seq) =>
        seq === 0 ? seq0 : rewriteChunk(seq1, { seq, sentAt: 1763700020200 + seq }),
      );
      for (const [sessionId, order] of [
        [inOrder, [0, 1, 2, 3]],
        [reversed, [3, 1, 0, 2]],
      ] as const) {
        for (const seq of order) {
          const body = rewriteChunk(chunks[seq] as Buffer, { sessionId });
          const response = await postChunk(test.app, test.first.projectKey, body);
          expect(response.statusCode, response.body).toBe(200);
        }
      }
      const comparable = ({
        id: _id,
        created_at: _created,
        updated_at: _updated,
        stored_bytes: _bytes,
        ...row
      }: Record<string, unknown>) => row;
      const a = await sessionRow(test.first, inOrder);
      const b = await sessionRow(test.first, reversed);
      expect(comparable(b)).toEqual(comparable(a));
      expect(a).toMatchObject({
        chunk_count: 4,
        max_seq: 3,
        started_at: new Date(1763700000000),
        error_count: 2,
      });
    });

    it('keeps a session whose first chunk has not arrived yet, and fills its meta when it does', async () => {
      const sessionId = newSessionId();
      const later = rewriteChunk(seq1, { sessionId, seq: 5 });
      expect((await postChunk(test.app, test.first.projectKey, later)).statusCode).toBe(200);
      const partial = await sessionRow(test.first, sessionId);
      expect(partial).toMatchObject({
        chunk_count: 1,
        max_seq: 5,
        url: null,
        started_at: new Date(1763700010100),
        last_event_at: new Date(1763700020000),
        duration_ms: 9_900,
        level: null,
        visit_id: 'vis_01KAJBCH80XVX6E4BD2QB0Q16Q',
      });
      expect(
        (await postChunk(test.app, test.first.projectKey, rewriteChunk(seq0, { sessionId }))).statusCode,
      ).toBe(200);
      const complete = await sessionRow(test.first, sessionId);
      // seq 1..4 are still missing: the read API shows them as gaps from chunk_count < max_seq + 1.
      expect(complete).toMatchObject({
        chunk_count: 2,
        max_seq: 5,
        url: 'https://app.example.com/calls/42?ref=calendar',
        started_at: new Date(1763700000000),
        duration_ms: 20_000,
        level: 'high',
        user_email: 'ada@example.com',
      });
      expect((await chunkRows(test.first, sessionId)).map((chunk) => chunk.seq)).toEqual([0, 5]);
    });
  });

  describe('races', () => {
    it('stores exactly one copy when many requests race for the same seq', async () => {
      const project = await test.createProject('Race');
      const sessionId = newSessionId();
      const a = rewriteChunk(seq0, { sessionId });
      const b = rewriteChunk(seq0, { sessionId, sentAt: 1763700009501 });
      const bodies = Array.from({ length: 32 }, (_, index) => (index % 2 === 0 ? a : b));
      const responses = await Promise.all(
        bodies.map((body) => postChunk(test.app, project.projectKey, body)),
      );
      const stored = responses.filter(
        (response) => response.statusCode === 200 && response.json().duplicate === false,
      );
      expect(stored).toHaveLength(1);
      const winner = bodies[responses.indexOf(stored[0] as LightMyRequestResponse)];
      responses.forEach((response, index) => {
        if (bodies[index] === winner) {
          expect(response.statusCode, response.body).toBe(200);
        } else {
          expect(response.statusCode, response.body).toBe(409);
        }
      });

      const chunks = await chunkRows(project, sessionId);
      expect(chunks).toHaveLength(1);
      expect(await readBack(project, sessionId, 0)).toEqual(winner);
      // The losers' blobs are gone: one file for the one row.
      const blobs = (await storedState(test.database.database, test.dataDirectory)).blobs.filter((path) =>
        path.includes(sessionId),
      );
      expect(blobs).toEqual(chunks.map((chunk) => chunk.blob_key));
      const session = await sessionRow(project, sessionId);
      expect(session).toMatchObject({
        chunk_count: 1,
        error_count: 2,
        stored_bytes: chunks[0]?.stored_bytes,
      });
      expect(await signalRows(project, sessionId)).toHaveLength(5);
    });

    it('merges many seqs of one new session arriving at once', async () => {
      const sessionId = newSessionId();
      const bodies = Array.from({ length: 24 }, (_, seq) =>
        seq === 0 ? rewriteChunk(seq0, { sessionId }) : rewriteChunk(seq1, { sessionId, seq }),
      );
      const responses = await Promise.all(
        bodies.map((body) => postChunk(test.app, test.first.projectKey, body)),
      );
      for (const response of responses) expect(response.statusCode, response.body).toBe(200);
      const session = await sessionRow(test.first, sessionId);
      const chunks = await chunkRows(test.first, sessionId);
      expect(session).toMatchObject({
        chunk_count: 24,
        max_seq: 23,
        error_count: 2,
        level: 'high',
        url: 'https://app.example.com/calls/42?ref=calendar',
        stored_bytes: chunks.reduce((sum, chunk) => sum + chunk.stored_bytes, 0),
      });
    });
  });
});
