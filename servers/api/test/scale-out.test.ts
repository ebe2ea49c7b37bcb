// Scaling out: several server processes on one PostgreSQL and one S3 bucket, configured only
// through environment variables as an operator would (DATABASE_URL, S3_*, SVC_MASTER_KEY).
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectWithToken, type ProjectCredentials } from '../src/modules/projects/bootstrap.ts';
import { startS3rver } from '../src/platform/blob-store/s3rver-fixture.ts';
import { loadMasterKey } from '../src/platform/crypto/index.ts';
import { type RunningServer, startServer } from '../src/server.ts';
import { deflate, newSessionId, rewriteChunk, validChunkFixture } from './ingest-helpers.ts';
import { openTestDatabase, type TestDatabase } from './test-database.ts';

describe('several servers on one PostgreSQL and one S3 bucket (instances sharing nothing but the stores)', () => {
  const masterKey = randomBytes(32).toString('base64');
  let database: TestDatabase;
  let s3: Awaited<ReturnType<typeof startS3rver>>;
  let servers: RunningServer[] = [];
  let credentials: ProjectCredentials;
  const directories: string[] = [];

  beforeAll(async () => {
    [database, s3] = await Promise.all([openTestDatabase('postgres'), startS3rver('svc-scale-out')]);
    const environment = async () => {
      const directory = await mkdtemp(join(tmpdir(), 'svc-scale-out-'));
      directories.push(directory);
      return {
        SVC_DATA_DIR: directory,
        PORT: '0',
        SVC_LOG_LEVEL: 'silent',
        SVC_MASTER_KEY: masterKey,
        DATABASE_URL: database.location,
        DATABASE_POOL_SIZE: '4',
        S3_BUCKET: s3.options.bucket,
        S3_ENDPOINT: s3.options.endpoint as string,
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
      };
    };
    // Three servers starting together (each migrates under the same lock).
    const environments = await Promise.all([environment(), environment(), environment()]);
    servers = await Promise.all(environments.map((each) => startServer(each, { output: () => {} })));
    credentials = await createProjectWithToken(
      database.database,
      await loadMasterKey({ masterKey, dataDirectory: '/nonexistent' }),
      {
        name: 'Scaled',
      },
    );
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await database?.dispose();
    await s3?.stop();
    for (const directory of directories) await rm(directory, { recursive: true, force: true });
  });

  function post(server: RunningServer, body: Uint8Array) {
    return fetch(`${server.url}/v1/ingest`, {
      method: 'POST',
      headers: { 'x-service-project-key': credentials.projectKey, 'x-service-encoding': 'json+deflate' },
      body: deflate(body),
    });
  }

  it('start without a first-project bootstrap and keep nothing on local disk', async () => {
    for (const server of servers) expect(server.credentials).toBeNull();
    // Stateless processes: the database, the blobs and the master key all live elsewhere.
    for (const directory of directories) expect(await readdir(directory)).toEqual([]);
  });

  it('serve what another process ingested, byte-identical, from the shared bucket', async () => {
    const [first, second, third] = servers as [RunningServer, RunningServer, RunningServer];
    const sessionId = newSessionId();
    const chunks = [
      rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId, seq: 0 }),
      rewriteChunk(await validChunkFixture('recording-seq-1'), { sessionId, seq: 1 }),
      rewriteChunk(await validChunkFixture('call'), { sessionId, seq: 2 }),
    ];
    const answers = await Promise.all(
      chunks.map((chunk, index) => post(servers[index % 3] as RunningServer, chunk)),
    );
    for (const [index, answer] of answers.entries()) {
      expect(answer.status, await answer.clone().text()).toBe(200);
      expect(await answer.json()).toEqual({ seq: index, duplicate: false });
    }
    for (const [seq, chunk] of chunks.entries()) {
      const reader = [third, first, second][seq] as RunningServer;
      const response = await fetch(`${reader.url}/v1/sessions/${sessionId}/chunks/${seq}`, {
        headers: { authorization: `Bearer ${credentials.apiToken}` },
      });
      expect(response.status).toBe(200);
      expect(Buffer.compare(Buffer.from(await response.arrayBuffer()), chunk)).toBe(0);
    }
    const detail = (await (
      await fetch(`${second.url}/v1/sessions/${sessionId}`, {
        headers: { authorization: `Bearer ${credentials.apiToken}` },
      })
    ).json()) as { chunks: Array<{ seq: number }>; gaps: Array<{ kind: string }> };
    expect(detail.chunks.map((chunk: { seq: number }) => chunk.seq)).toEqual([0, 1, 2]);
    expect(detail.gaps.filter((gap: { kind: string }) => gap.kind === 'missing')).toEqual([]);
  });

  it('store one copy when every process receives the same (session, seq) at once', async () => {
    const sessionId = newSessionId();
    const original = rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId, seq: 0 });
    const different = rewriteChunk(await validChunkFixture('recording-seq-0'), {
      sessionId,
      seq: 0,
      sentAt: 1763700009999,
    });
    const bodies = Array.from({ length: 12 }, (_, index) => (index % 4 === 3 ? different : original));
    const answers = await Promise.all(
      bodies.map((body, index) => post(servers[index % 3] as RunningServer, body)),
    );
    const statuses = await Promise.all(
      answers.map(async (answer) => ({
        status: answer.status,
        body: (await answer.json()) as { duplicate?: boolean },
      })),
    );
    const accepted = statuses.filter((each) => each.status === 200);
    const conflicts = statuses.filter((each) => each.status === 409);
    expect(accepted.length + conflicts.length).toBe(12);
    expect(accepted.filter((each) => each.body.duplicate === false)).toHaveLength(1);

    const stored = await database.database
      .selectFrom('chunks')
      .select(['content_sha256'])
      .where('session_id', '=', sessionId)
      .execute();
    expect(stored).toHaveLength(1);
    const response = await fetch(`${servers[0]?.url}/v1/sessions/${sessionId}/chunks/0`, {
      headers: { authorization: `Bearer ${credentials.apiToken}` },
    });
    const winner = Buffer.from(await response.arrayBuffer());
    // Whichever body won, every request that carried it was answered 200, every other one 409.
    const winningBodies = bodies.filter((body) => Buffer.compare(body, winner) === 0).length;
    expect(winningBodies).toBeGreaterThan(0);
    expect(accepted).toHaveLength(winningBodies);
    expect(conflicts).toHaveLength(12 - winningBodies);
  });
});
