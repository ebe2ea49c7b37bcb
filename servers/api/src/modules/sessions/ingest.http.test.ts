import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deflate,
  newSessionId,
  postChunk,
  rewriteChunk,
  validChunkFixture,
} from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { ingestReads } from './ingest.fixture.ts';

// POST /v1/ingest as HTTP: the project's rate limit, bodies streamed over a real connection and
// cut off at the limit, and CORS.

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

  const { state, chunkRows } = ingestReads(() => test);

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
      const bodies = Array.from({ length: 12 }, (_, seq) =>
        rewriteChunk(seq === 0 ? seq0 : seq1, { sessionId, seq }),
      );
      const answers = [];
      const started = performance.now();
      for (const body of bodies) {
        answers.push(
          await postChunk(test.app, project.projectKey, body, { origin: 'https://app.example.com' }),
        );
      }
      const elapsedSeconds = (performance.now() - started) / 1000;
      // A burst of two seconds' worth passes, plus what the clock added meanwhile (2 a second: a
      // slow machine may take more than half a second for the seven).
      const acceptedSeqs = answers.flatMap((answer, seq) => (answer.statusCode === 200 ? [seq] : []));
      expect(acceptedSeqs.slice(0, 4)).toEqual([0, 1, 2, 3]);
      expect(acceptedSeqs.length).toBeLessThanOrEqual(Math.floor(4 + 2 * elapsedSeconds + 1e-9));
      const refused = answers.filter((answer) => answer.statusCode !== 200);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused) {
        expect(answer.statusCode).toBe(429);
        expect(answer.json()).toEqual({
          error: expect.stringMatching(/more than 2 chunks a second/),
          code: 'invalid',
        });
        expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(answer.headers['access-control-expose-headers']).toMatch(/Retry-After/i);
      }
      expect((await chunkRows(project, sessionId)).map((row) => row.seq)).toEqual(acceptedSeqs);
      // Another project is not held back.
      const other = rewriteChunk(seq0, { sessionId: newSessionId() });
      expect((await postChunk(test.app, test.first.projectKey, other)).statusCode).toBe(200);
      // After Retry-After the same chunk goes through.
      await new Promise((resolve) => setTimeout(resolve, Number(refused[0]?.headers['retry-after']) * 1000));
      const firstRefused = answers.findIndex((answer) => answer.statusCode !== 200);
      const retried = await postChunk(test.app, project.projectKey, bodies[firstRefused] as Uint8Array);
      expect(retried.statusCode, retried.body).toBe(200);
      // Lifting the limit lifts it at once.
      await test.app.inject({
        method: 'PATCH',
        url: `/v1/projects/${project.project.id}`,
        headers: project.headers,
        payload: { settings: { ingest: { maxChunksPerSecond: null } } },
      });
      for (let seq = bodies.length; seq < 20; seq += 1) {
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
});
