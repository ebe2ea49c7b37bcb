import { expect } from 'vitest';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import type { TestApp } from '../../api/test/test-app.ts';

// Issues made the way production makes them: the protocol's recorded session fixture, whose page
// throws two errors (`TypeError: … (reading 'srcObject')` in attachRemote, and an unhandled
// `Error: Reconnect failed`), through POST /v1/ingest and clustered by the processing job.

/** Ingests a new session of the fixture (with `release`, when given) and processes it. */
export async function ingestErrorSession(test: TestApp, options: { release?: string } = {}): Promise<string> {
  const sessionId = newSessionId();
  const bytes = await validChunkFixture('recording-seq-0');
  const { meta } = JSON.parse(bytes.toString('utf8')) as { meta: Record<string, unknown> };
  const chunk = rewriteChunk(bytes, {
    sessionId,
    ...(options.release === undefined ? {} : { meta: { ...meta, release: options.release } }),
  });
  const answer = await postChunk(test.app, test.first.projectKey, chunk);
  expect(answer.statusCode, answer.body).toBe(200);
  await test.processingWorker.runUntilIdle();
  return sessionId;
}

/** `GET`s an API path with the first project's token. */
export async function apiGet<T = Record<string, unknown>>(test: TestApp, path: string): Promise<T> {
  const answer = await test.app.inject({ method: 'GET', url: path, headers: test.first.headers });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json() as T;
}
