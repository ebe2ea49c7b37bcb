import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectDataKey } from '../src/modules/projects/data-key.ts';
import { findProjectById } from '../src/modules/projects/projects.ts';
import { openChunk } from '../src/modules/sessions/chunk-storage.ts';
import { openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { deflate, newSessionId, rewriteChunk, validChunkFixture } from './ingest-helpers.ts';
import { kill, spawnServer } from './process-helpers.ts';
import { withMigratedStore } from './test-database.ts';

const KILLS = 3;
const SENDERS = 4;

/** Starts `src/server.ts` as its own process on the embedded store in `dataDirectory`. */
const startServer = (dataDirectory: string) => spawnServer({ SVC_DATA_DIR: dataDirectory });

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

describe('durability under SIGKILL (embedded store)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('reads back every acknowledged chunk byte-identical, and indexes no chunk without its blob', async () => {
    // An empty store at the latest schema (a copy of the run's template): the kills below are what
    // is tested, not creating the store.
    const dataDirectory = await withMigratedStore(await mkdtemp(join(tmpdir(), 'svc-durability-')));
    cleanups.push(() => rm(dataDirectory, { recursive: true, force: true }));
    const [seq0, seq1] = await Promise.all([
      validChunkFixture('recording-seq-0'),
      validChunkFixture('recording-seq-1'),
    ]);

    let server = await startServer(dataDirectory);
    cleanups.push(() => kill(server));
    const credentials = JSON.parse(await readFile(join(dataDirectory, 'first-project.json'), 'utf8')) as {
      projectId: string;
      projectKey: string;
    };

    /** Every chunk ever sent, by `${sessionId}/${seq}`: its bytes, and whether it was acknowledged. */
    const sent = new Map<string, { sessionId: string; seq: number; bytes: Buffer; acknowledged: boolean }>();
    let acknowledgedCount = 0;
    let failedAttempts = 0;
    let running = true;

    /** One SDK: sends seq 0, 1, 2, ... of its session; retries the same bytes until acknowledged. */
    const sender = async () => {
      const sessionId = newSessionId();
      for (let seq = 0; running; seq += 1) {
        const bytes =
          seq === 0
            ? rewriteChunk(seq0, { sessionId })
            : rewriteChunk(seq1, { sessionId, seq, sentAt: 1763700020200 + seq });
        const entry = { sessionId, seq, bytes, acknowledged: false };
        sent.set(`${sessionId}/${seq}`, entry);
        const body = deflate(bytes);
        while (running && !entry.acknowledged) {
          try {
            const response = await fetch(`${server.url}/v1/ingest`, {
              method: 'POST',
              headers: {
                'x-service-project-key': credentials.projectKey,
                'x-service-encoding': 'json+deflate',
              },
              body,
            });
            const answer = (await response.json()) as { seq?: number };
            if (response.status === 200) {
              expect(answer.seq).toBe(seq);
              entry.acknowledged = true;
              acknowledgedCount += 1;
            } else {
              expect(response.status, JSON.stringify(answer)).toBeGreaterThanOrEqual(500);
              failedAttempts += 1;
            }
          } catch {
            // The server is down (killed): retry once it is back.
            failedAttempts += 1;
            await sleep(20);
          }
        }
      }
    };
    const senders = Array.from({ length: SENDERS }, () =>
      sender().catch((error: unknown) => {
        running = false;
        throw error;
      }),
    );

    for (let kills = 0; kills < KILLS; kills += 1) {
      const target = acknowledgedCount + 20;
      while (running && acknowledgedCount < target) await sleep(10);
      await sleep(200 + Math.random() * 2_000);
      await kill(server);
      server = await startServer(dataDirectory);
    }
    const target = acknowledgedCount + 20;
    while (running && acknowledgedCount < target) await sleep(10);
    running = false;
    await Promise.all(senders);
    await kill(server);

    // Open the same data directory directly, as the next server start would.
    const services = await openServices(
      loadConfiguration({ SVC_DATA_DIR: dataDirectory, SVC_LOG_LEVEL: 'silent' }),
    );
    cleanups.push(() => services.close());
    const { database } = services.database;
    const project = await findProjectById(database, credentials.projectId);
    if (project === undefined) throw new Error('the bootstrap project is gone');
    const dataKey = projectDataKey(services.masterKey, project);
    const rows = await database
      .selectFrom('chunks')
      .selectAll()
      .where('project_id', '=', credentials.projectId)
      .execute();

    // No chunk row lacks its blob, and every one opens to exactly the bytes sent.
    for (const row of rows) {
      const entry = sent.get(`${row.session_id}/${row.seq}`);
      if (entry === undefined) throw new Error(`${row.session_id}/${row.seq} was never sent`);
      const sealed = await services.blobStore.get(row.blob_key);
      if (sealed === null) throw new Error(`the blob of ${row.session_id}/${row.seq} is missing`);
      const bytes = await openChunk(dataKey, sealed, {
        projectId: credentials.projectId,
        sessionId: row.session_id,
        seq: row.seq,
      });
      expect(Buffer.from(bytes).equals(entry.bytes)).toBe(true);
    }
    // Every acknowledged chunk is indexed.
    const indexed = new Set(rows.map((row) => `${row.session_id}/${row.seq}`));
    const acknowledged = [...sent.entries()].filter(([, entry]) => entry.acknowledged).map(([key]) => key);
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILLS * 20);
    expect(acknowledged.filter((key) => !indexed.has(key))).toEqual([]);
    // Sessions agree with their chunk rows: nothing half-indexed.
    const sessions = await database
      .selectFrom('sessions')
      .selectAll()
      .where('project_id', '=', credentials.projectId)
      .execute();
    // Every chunk row has its session (ingest keeps this; no foreign key does).
    const sessionIds = new Set(sessions.map((session) => session.id));
    expect(rows.filter((row) => !sessionIds.has(row.session_id))).toEqual([]);
    for (const session of sessions) {
      const own = rows.filter((row) => row.session_id === session.id);
      expect(session.chunk_count).toBe(own.length);
      expect(session.max_seq).toBe(Math.max(...own.map((row) => row.seq)));
      expect(session.stored_bytes).toBe(own.reduce((sum, row) => sum + row.stored_bytes, 0));
    }
    expect(failedAttempts).toBeGreaterThan(0);
  }, 180_000);
});
