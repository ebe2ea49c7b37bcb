import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import {
  deflate,
  deflateBomb,
  invalidChunkCatalogue,
  newSessionId,
  postChunk,
  rewriteChunk,
  storedState,
  validChunkFixture,
} from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { type BlobStore, createFileBlobStore } from '../../platform/blob-store/index.ts';
import { loadMasterKey, type MasterKey } from '../../platform/crypto/index.ts';
import { projectDataKey } from '../projects/data-key.ts';
import { rotateProjectKey, updateProjectSettings } from '../projects/projects.ts';
import { DEFAULT_PROJECT_SETTINGS } from '../projects/settings.ts';
import { openChunk } from './chunk-storage.ts';

describe.each(ENGINES)('POST /v1/ingest on %s', (engine) => {
  let test: TestApp;
  let seq0: Buffer;
  let seq1: Buffer;
  let call: Buffer;
  let blobStore: BlobStore;
  let masterKey: MasterKey;
  beforeAll(async () => {
    test = await createTestApp(engine);
    // The app's own services are encapsulated in it: open the same data directory again.
    blobStore = createFileBlobStore({ directory: join(test.dataDirectory, 'blobs') });
    masterKey = await loadMasterKey({ dataDirectory: test.dataDirectory });
    [seq0, seq1, call] = await Promise.all([
      validChunkFixture('recording-seq-0'),
      validChunkFixture('recording-seq-1'),
      validChunkFixture('call'),
    ]);
  });
  afterAll(async () => {
    await blobStore?.close();
    await test?.close();
  });

  const state = () => storedState(test.database.database, test.dataDirectory);
  const sessionRow = (project: TestProject, sessionId: string) =>
    test.database.database
      .selectFrom('sessions')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
  const chunkRows = (project: TestProject, sessionId: string) =>
    test.database.database
      .selectFrom('chunks')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('session_id', '=', sessionId)
      .orderBy('seq')
      .execute();
  const signalRows = (project: TestProject, sessionId: string) =>
    test.database.database
      .selectFrom('session_signals')
      .selectAll()
      .where('project_id', '=', project.project.id)
      .where('session_id', '=', sessionId)
      .orderBy('seq')
      .orderBy('event_index')
      .execute();
  /** Reads a stored chunk back the way the read API does: the row's blob, opened. */
  const readBack = async (project: TestProject, sessionId: string, seq: number) => {
    const row = await test.database.database
      .selectFrom('chunks')
      .select('blob_key')
      .where('project_id', '=', project.project.id)
      .where('session_id', '=', sessionId)
      .where('seq', '=', seq)
      .executeTakeFirstOrThrow();
    const sealed = await blobStore.get(row.blob_key);
    expect(sealed).not.toBeNull();
    const bytes = await openChunk(projectDataKey(masterKey, project.project), sealed as Uint8Array, {
      projectId: project.project.id,
      sessionId,
      seq,
    });
    return Buffer.from(bytes);
  };

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

  describe('bad input catalogue: the right error, and nothing stored', () => {
    const expectRefused = async (
      send: () => Promise<LightMyRequestResponse>,
      status: number,
      code: string,
      message?: RegExp,
    ) => {
      const before = await state();
      const response = await send();
      const body = expectJson<{ error: string; code: string }>(response, status);
      expect(body).toEqual({ error: expect.any(String), code });
      if (message !== undefined) expect(body.error).toMatch(message);
      expect(await state()).toEqual(before);
      return response;
    };
    const freshChunk = () => rewriteChunk(seq0, { sessionId: newSessionId() });

    it('refuses a missing or unknown project key with 401', async () => {
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, freshChunk(), { projectKey: null }),
        401,
        'unauthorized',
        /X-Service-Project-Key/,
      );
      for (const key of ['pk_not-a-real-key', ' ', 'x'.repeat(5000), '../../etc/passwd']) {
        await expectRefused(
          () => postChunk(test.app, test.first.projectKey, freshChunk(), { projectKey: key }),
          401,
          'unauthorized',
        );
      }
    });

    it('refuses malformed deflate with 400', async () => {
      const good = deflate(freshChunk());
      for (const body of [
        Buffer.from('definitely not deflate'),
        good.subarray(0, good.byteLength - 10), // truncated
        Buffer.concat([good.subarray(0, 2), Buffer.alloc(50, 0xff)]), // corrupt after the header
      ]) {
        await expectRefused(
          () => postChunk(test.app, test.first.projectKey, body, { raw: true }),
          400,
          'invalid',
          /deflate/,
        );
      }
    });

    it('refuses a deflate bomb (1 GB of zeros) with 413 quickly and with bounded memory', async () => {
      const bomb = await deflateBomb();
      expect(bomb.byteLength).toBeLessThanOrEqual(1_048_576);
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, bomb, { raw: true }),
        413,
        'invalid',
        /inflates to more than/,
      );
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    });

    it('refuses invalid JSON and invalid UTF-8 with 400', async () => {
      for (const body of ['{"v":1,', 'null', '[]', '"chunk"', '{"v":1}']) {
        await expectRefused(
          () => postChunk(test.app, test.first.projectKey, Buffer.from(body), { encoding: 'json' }),
          400,
          'invalid',
        );
      }
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, Buffer.from('{"v":1,'), { encoding: 'json' }),
        400,
        'invalid',
        /not valid JSON/,
      );
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])),
        400,
        'invalid',
        /UTF-8/,
      );
      // A deflated body sent as json gets a hint.
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, deflate(freshChunk()), { encoding: 'json' }),
        400,
        'invalid',
        /X-Service-Encoding: json\+deflate/,
      );
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, Buffer.alloc(0), { encoding: 'json', raw: true }),
        400,
        'invalid',
      );
    });

    it('refuses every chunk of the protocol invalid catalogue with 400, saying where', async () => {
      const catalogue = await invalidChunkCatalogue();
      expect(catalogue.length).toBeGreaterThan(30);
      const before = await state();
      for (const entry of catalogue) {
        const response = await postChunk(
          test.app,
          test.first.projectKey,
          Buffer.from(JSON.stringify(entry.value)),
        );
        expect(response.statusCode, `${entry.name}: ${response.body}`).toBe(400);
        expect(response.json()).toMatchObject({
          code: 'invalid',
          error: expect.stringMatching(/^Invalid chunk: .*First: /),
        });
      }
      expect(await state()).toEqual(before);
    });

    it('refuses path traversal and other junk in ids with 400', async () => {
      for (const sessionId of [
        '../../../etc/passwd',
        'ses_../../../../etc/passwd',
        'ses_01KAJBCH80XTQ0YDPAV81S476S/../../x',
        'ses_01KAJBCH80XTQ0YDPAV81S476S%2F..',
        'ses_01KAJBCH80XTQ0YDPAV81S476\u0000',
        `ses_${'A'.repeat(300)}`,
      ]) {
        await expectRefused(
          () => postChunk(test.app, test.first.projectKey, rewriteChunk(seq0, { sessionId })),
          400,
          'invalid',
          /sessionId/,
        );
      }
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, rewriteChunk(seq1, { visitId: 'vis_../x' })),
        400,
        'invalid',
        /visitId/,
      );
    });

    it('refuses a seq reused with different content with 409', async () => {
      const sessionId = newSessionId();
      const original = rewriteChunk(seq1, { sessionId, seq: 7 });
      expect((await postChunk(test.app, test.first.projectKey, original)).statusCode).toBe(200);
      const changed = rewriteChunk(seq1, { sessionId, seq: 7, sentAt: 1763700020201 });
      await expectRefused(
        () => postChunk(test.app, test.first.projectKey, changed),
        409,
        'invalid',
        /seq 7 was already received with different content/,
      );
      // Re-serialized (other whitespace) is other content too: the hash covers the bytes.
      await expectRefused(
        () =>
          postChunk(
            test.app,
            test.first.projectKey,
            Buffer.from(JSON.stringify(JSON.parse(original.toString()), null, 2)),
          ),
        409,
        'invalid',
      );
      expect(await readBack(test.first, sessionId, 7)).toEqual(original);
    });

    it('refuses unsupported content types and encodings with 415', async () => {
      const body = freshChunk();
      for (const [encoding, contentType] of [
        ['json+deflate', 'application/json'],
        ['json+deflate', 'text/plain;charset=UTF-8'],
        ['json', 'text/plain'],
        ['json', 'application/x-www-form-urlencoded'],
        ['json', 'multipart/form-data; boundary=x'],
        ['json', 'application/json; charset=latin1'],
      ] as const) {
        await expectRefused(
          () => postChunk(test.app, test.first.projectKey, body, { encoding, contentType }),
          415,
          'invalid',
        );
      }
      for (const encoding of ['gzip', 'deflate', 'json+gzip', 'br', '']) {
        await expectRefused(
          () => postChunk(test.app, test.first.projectKey, body, { encoding }),
          415,
          'invalid',
          /X-Service-Encoding/,
        );
      }
      await expectRefused(
        () =>
          postChunk(test.app, test.first.projectKey, body, {
            encoding: 'json',
            headers: { 'content-encoding': 'gzip' },
          }),
        415,
        'invalid',
        /Content-Encoding/,
      );
    });

    it('refuses an oversized body with 413, before reading it when Content-Length says so', async () => {
      const response = await expectRefused(
        () =>
          postChunk(test.app, test.first.projectKey, Buffer.alloc(1_048_577, 0x20), {
            raw: true,
          }),
        413,
        'invalid',
        /limit for json\+deflate is 1048576 bytes/,
      );
      expect(response.headers.connection).toBe('close');
      await expectRefused(
        () =>
          postChunk(test.app, test.first.projectKey, Buffer.alloc(16_777_217, 0x20), { encoding: 'json' }),
        413,
        'invalid',
      );
    });

    it('refuses an origin the project does not allow with 403', async () => {
      const project = await test.createProject('Origins');
      await updateProjectSettings(test.database.database, project.project.id, {
        ...DEFAULT_PROJECT_SETTINGS,
        allowedOrigins: ['https://app.example.com', 'http://localhost:3000'],
      });
      for (const origin of [
        'https://evil.example',
        'https://app.example.com.evil.example',
        'null',
        'http://app.example.com',
      ]) {
        const response = await expectRefused(
          () => postChunk(test.app, project.projectKey, freshChunk(), { origin }),
          403,
          'unauthorized',
          /is not allowed/,
        );
        expect(response.headers['access-control-allow-origin']).toBe(origin);
      }
      const allowed = await postChunk(test.app, project.projectKey, freshChunk(), {
        origin: 'http://localhost:3000',
      });
      expect(allowed.statusCode, allowed.body).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe('http://localhost:3000');
      expect(allowed.headers.vary).toMatch(/Origin/);
      // Native SDKs send no Origin.
      expect((await postChunk(test.app, project.projectKey, freshChunk())).statusCode).toBe(200);
    });
  });

  describe('rate limit', () => {
    it('answers 429 with Retry-After beyond the project limit, stores nothing of those, and accepts again later', async () => {
      const project = await test.createProject('Rate limited');
      const patched = await test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${project.project.id}`,
        headers: project.headers,
        payload: { settings: { ingest: { maxChunksPerSecond: 2 } } },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json().settings.ingest).toEqual({ maxChunksPerSecond: 2 });
      const sessionId = newSessionId();
      const bodies = Array.from({ length: 7 }, (_, seq) =>
        rewriteChunk(seq === 0 ? seq0 : seq1, { sessionId, seq }),
      );
      const answers = [];
      for (const body of bodies) {
        answers.push(
          await postChunk(test.app, project.projectKey, body, { origin: 'https://app.example.com' }),
        );
      }
      // A burst of two seconds' worth passes (the clock may add a token meanwhile, never two).
      const accepted = answers.filter((answer) => answer.statusCode === 200).length;
      expect(accepted).toBeGreaterThanOrEqual(4);
      expect(accepted).toBeLessThanOrEqual(5);
      const refused = answers.slice(accepted);
      for (const answer of refused) {
        expect(answer.statusCode).toBe(429);
        expect(answer.json()).toEqual({
          error: expect.stringMatching(/more than 2 chunks a second/),
          code: 'invalid',
        });
        expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(answer.headers['access-control-expose-headers']).toMatch(/Retry-After/i);
      }
      expect((await chunkRows(project, sessionId)).map((row) => row.seq)).toEqual(
        Array.from({ length: accepted }, (_, seq) => seq),
      );
      // Another project is not held back.
      const other = rewriteChunk(seq0, { sessionId: newSessionId() });
      expect((await postChunk(test.app, test.first.projectKey, other)).statusCode).toBe(200);
      // After Retry-After the same chunk goes through.
      await new Promise((resolve) => setTimeout(resolve, Number(refused[0]?.headers['retry-after']) * 1000));
      const retried = await postChunk(test.app, project.projectKey, bodies[accepted] as Uint8Array);
      expect(retried.statusCode, retried.body).toBe(200);
      // Lifting the limit lifts it at once.
      await test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${project.project.id}`,
        headers: project.headers,
        payload: { settings: { ingest: { maxChunksPerSecond: null } } },
      });
      for (let seq = accepted + 1; seq < 20; seq += 1) {
        const answer = await postChunk(test.app, project.projectKey, rewriteChunk(seq1, { sessionId, seq }));
        expect(answer.statusCode, answer.body).toBe(200);
      }
    });
  });

  describe('over real HTTP', () => {
    let origin: string;
    beforeAll(async () => {
      origin = await test.app.listen({ port: 0, host: '127.0.0.1' });
    });

    /** POSTs `parts` one by one (chunked unless `contentLength` is given) and stops at the answer. */
    const send = (parts: Iterable<Buffer>, contentLength?: number) =>
      new Promise<{ statusCode: number; body: string; headers: IncomingHttpHeaders }>((resolve, reject) => {
        const request = httpRequest(`${origin}/v1/ingest`, {
          method: 'POST',
          headers: {
            'x-service-project-key': test.first.projectKey,
            'x-service-encoding': 'json+deflate',
            ...(contentLength === undefined ? {} : { 'content-length': String(contentLength) }),
          },
        });
        let answered = false;
        request.on('response', (response) => {
          answered = true;
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (part: string) => {
            body += part;
          });
          response.on('end', () =>
            resolve({ statusCode: response.statusCode ?? 0, body, headers: response.headers }),
          );
        });
        // Once the server has answered and closed, further writes fail: that is expected.
        request.on('error', (error) => {
          if (!answered) reject(error);
        });
        const iterator = parts[Symbol.iterator]();
        const writeNext = () => {
          if (answered || request.destroyed) return;
          const next = iterator.next();
          if (next.done === true) {
            if (contentLength === undefined) request.end();
            return;
          }
          if (request.write(next.value)) setImmediate(writeNext);
          else request.once('drain', writeNext);
        };
        writeNext();
      });

    it('takes a chunked body within the limit', async () => {
      const body = deflate(rewriteChunk(seq0, { sessionId: newSessionId() }));
      const parts = [body.subarray(0, 100), body.subarray(100, 2000), body.subarray(2000)];
      const response = await send(parts);
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ seq: 0, duplicate: false });
    });

    it('stops reading a chunked body at the limit and answers 413', async () => {
      const before = await state();
      function* parts() {
        // Up to 64 MiB, far past the 1 MiB limit: the answer must come long before the end.
        for (let index = 0; index < 1024; index += 1) yield Buffer.alloc(65_536, 0x61);
      }
      const response = await send(parts());
      expect(response.statusCode).toBe(413);
      expect(JSON.parse(response.body)).toMatchObject({ code: 'invalid' });
      expect(response.headers.connection).toBe('close');
      expect(await state()).toEqual(before);
    });

    it('answers 413 from the declared Content-Length without waiting for the body', async () => {
      const before = await state();
      const started = performance.now();
      // Declares 100 MB and sends 1 KB: the answer comes anyway.
      const response = await send([Buffer.alloc(1024, 0x61)], 100_000_000);
      expect(response.statusCode).toBe(413);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(await state()).toEqual(before);
    });
  });

  describe('CORS', () => {
    it('answers the preflight for any origin, cacheable for a day', async () => {
      const response = await test.app.inject({
        method: 'OPTIONS',
        url: '/v1/ingest',
        headers: {
          origin: 'https://anywhere.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-service-project-key,x-service-encoding',
        },
      });
      expect(response.statusCode).toBe(204);
      expect(response.headers).toMatchObject({
        'access-control-allow-origin': 'https://anywhere.example',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'content-type, x-service-project-key, x-service-encoding',
        'access-control-max-age': '86400',
        vary: 'Origin',
      });
    });

    it('lets any origin read the answer when the project allows every origin', async () => {
      const response = await postChunk(
        test.app,
        test.first.projectKey,
        rewriteChunk(seq0, { sessionId: newSessionId() }),
        {
          origin: 'https://shop.example',
        },
      );
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe('https://shop.example');
      const refused = await postChunk(test.app, 'pk_unknown', seq0, { origin: 'https://shop.example' });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['access-control-allow-origin']).toBe('https://shop.example');
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
