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
  validChunkFixture,
} from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { updateProjectSettings } from '../projects/projects.ts';
import { DEFAULT_PROJECT_SETTINGS } from '../projects/settings.ts';
import { ingestReads } from './ingest.fixture.ts';

// What POST /v1/ingest refuses: each bad input gets its status and error, and nothing is stored.

describe.each(ENGINES)('POST /v1/ingest on %s', (engine) => {
  let test: TestApp;
  let seq0: Buffer;
  let seq1: Buffer;
  beforeAll(async () => {
    test = await createTestApp(engine);
    [seq0, seq1] = await Promise.all([
      validChunkFixture('recording-seq-0'),
      validChunkFixture('recording-seq-1'),
    ]);
  });
  afterAll(async () => {
    await test?.close();
  });

  const { state, readBack } = ingestReads(() => test);

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
});
