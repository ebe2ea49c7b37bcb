import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseChunk } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import { loadMasterKey } from '../../platform/crypto/index.ts';
import { createOrganization } from '../orgs/organizations.ts';
import { createProject } from '../projects/projects.ts';
import { createChunkIndexWriter, type IndexOutcome } from './chunk-index-writer.ts';
import { summarizeChunk } from './chunk-summary.ts';
import { type ChunkRecord, indexChunks, recordChunks } from './ingest-repository.ts';

const T0 = 1_763_700_000_000;
const require = createRequire(import.meta.url);
const FIXTURE_META = (
  JSON.parse(
    readFileSync(require.resolve('@svc/protocol/fixtures/valid/Chunk/recording-seq-0.json'), 'utf8'),
  ) as { meta: { url: string } }
).meta;

/** An outcome with its hash as hex (pg returns a Buffer, PGlite a Uint8Array). */
function plain(outcome: IndexOutcome) {
  return outcome.status === 'stored'
    ? outcome
    : {
        status: outcome.status,
        blobKey: outcome.indexed.blobKey,
        sha256: Buffer.from(outcome.indexed.contentSha256).toString('hex'),
      };
}

function existsAs(winner: ChunkRecord) {
  return {
    status: 'exists',
    blobKey: winner.blobKey,
    sha256: Buffer.from(winner.contentSha256).toString('hex'),
  };
}

/** A valid chunk record; `events` and `meta` vary per test. */
function record(
  projectId: string,
  sessionId: string,
  seq: number,
  options: { events?: unknown[]; meta?: boolean; url?: string; hash?: number } = {},
): ChunkRecord {
  const input = {
    v: 1,
    sessionId,
    seq,
    sentAt: T0 + seq * 1000 + 900,
    ...((options.meta ?? seq === 0)
      ? { meta: { ...FIXTURE_META, url: options.url ?? FIXTURE_META.url } }
      : {}),
    events: options.events ?? [{ t: T0 + seq * 1000, type: 'custom', name: `step_${seq}` }],
  };
  const parsed = parseChunk(input);
  if (!parsed.success) throw new Error(parsed.error.message);
  const hash = new Uint8Array(32);
  hash[0] = options.hash ?? seq;
  return {
    projectId,
    chunk: parsed.chunk,
    summary: summarizeChunk(parsed.chunk, parsed.skipped),
    blobKey: `projects/${projectId}/sessions/${sessionId}/${seq}.${randomBytes(8).toString('hex')}.chunk`,
    contentSha256: hash,
    encoding: 'json+deflate',
    receivedBytes: 100 + seq,
    inflatedBytes: 300 + seq,
    storedBytes: 150 + seq,
  };
}

/** A session's chunks: seq 0 carries meta, some carry errors or an identify. */
function sessionRecords(projectId: string, sessionIndex: number): ChunkRecord[] {
  const sessionId = `ses_01KAJBCH80XTQ0YDPAV81S${String(sessionIndex).padStart(4, '0')}`;
  return Array.from({ length: 5 }, (_, seq) => {
    const events: unknown[] = [{ t: T0 + seq * 1000, type: 'custom', name: `step_${seq}` }];
    if (seq === 2) events.push({ t: T0 + seq * 1000 + 1, type: 'error', message: 'boom', source: 'manual' });
    // Even sessions identify twice: the later seq's user is the session's, whatever arrives last.
    if (seq === 1 && sessionIndex % 2 === 0)
      events.push({ t: T0 + seq * 1000 + 2, type: 'identify', user: { id: `early_${sessionIndex}` } });
    if (seq === 3 && sessionIndex % 2 === 0)
      events.push({ t: T0 + seq * 1000 + 2, type: 'identify', user: { id: `identified_${sessionIndex}` } });
    // Every third session has a call, in its last chunk: it queues call processing.
    if (seq === 4 && sessionIndex % 3 === 0)
      events.push({
        t: T0 + seq * 1000 + 3,
        type: 'call.event',
        pc: 'pc_01KAJBCH80XTQ0YDPAV81S0000',
        name: 'pc_created',
        state: 'new',
        iceServers: 0,
        tracked: true,
      });
    return record(projectId, sessionId, seq, { events, meta: seq === 0 });
  });
}

async function sessionRows(database: TestDatabase, projectId: string) {
  const rows = await database.database
    .selectFrom('sessions')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  return rows.map(({ created_at: _created, updated_at: _updated, project_id: _project, ...row }) => row);
}

describe.each(ENGINES)('chunk index writer on %s', (engine) => {
  let database: TestDatabase;
  let keyDirectory: string;
  const projectIds: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(engine);
    keyDirectory = await mkdtemp(join(tmpdir(), 'svc-writer-'));
    const masterKey = await loadMasterKey({ dataDirectory: keyDirectory });
    const organization = await createOrganization(database.database, 'org');
    for (let index = 0; index < 8; index += 1) {
      const project = await createProject(database.database, {
        organizationId: organization.id,
        name: `p${index}`,
        masterKey,
      });
      projectIds.push(project.id);
    }
  });

  afterAll(async () => {
    await database?.dispose();
    await rm(keyDirectory, { recursive: true, force: true });
  });

  it('groups concurrent chunks into shared transactions, with the same sessions as one by one', async () => {
    const [sequentialProject, batchedProject] = projectIds as [string, string];
    const sessions = Array.from({ length: 8 }, (_, index) => index);

    const oneByOne = createChunkIndexWriter({ database: database.database });
    for (const index of sessions) {
      for (const chunk of sessionRecords(sequentialProject, index)) {
        expect(await oneByOne.index(chunk)).toEqual({ status: 'stored' });
      }
    }
    expect(oneByOne.stats()).toEqual({ batches: 40, chunks: 40 });

    // Interleaved like concurrent SDKs, and with seqs of one session arriving out of order.
    const batched = createChunkIndexWriter({ database: database.database });
    const perSession = sessions.map((index) => sessionRecords(batchedProject, index).reverse());
    const interleaved = perSession[0]?.flatMap((_, position) => perSession.map((chunks) => chunks[position]));
    const outcomes = await Promise.all(
      (interleaved ?? []).map((chunk) => batched.index(chunk as ChunkRecord)),
    );
    expect(outcomes.every((outcome) => outcome.status === 'stored')).toBe(true);
    expect(outcomes).toHaveLength(40);
    // The first chunk starts a transaction at once; the 39 that arrive meanwhile share the next.
    expect(batched.stats()).toEqual({ batches: 2, chunks: 40 });

    const expected = await sessionRows(database, sequentialProject);
    const actual = await sessionRows(database, batchedProject);
    expect(actual).toHaveLength(8);
    expect(actual).toEqual(expected);
    // The identify of seq 3 replaced meta.user in the even sessions, though seq 1's arrived later.
    expect(actual.filter((row) => row.user_id?.startsWith('identified_'))).toHaveLength(4);
    expect(actual.filter((row) => row.user_id?.startsWith('early_'))).toHaveLength(0);
    expect(actual.every((row) => row.chunk_count === 5 && row.error_count === 1 && row.max_seq === 4)).toBe(
      true,
    );
    expect(actual.every((row) => row.url === FIXTURE_META.url)).toBe(true);
  });

  it('indexes a batch of distinct sessions in one statement, exactly like the transaction path', async () => {
    const [viaTransaction, viaStatement] = projectIds.slice(6) as [string, string];
    const rounds = (projectId: string) => {
      const perSession = Array.from({ length: 8 }, (_, index) => sessionRecords(projectId, index));
      // Seqs out of order, and a retry of seq 2 (another blob): it must change nothing.
      const order = [4, 0, 2, 1, 3];
      const batches = order.map((seq) => perSession.map((chunks) => chunks[seq] as ChunkRecord));
      const retried = perSession.map((chunks) => ({
        ...(chunks[2] as ChunkRecord),
        blobKey: `${chunks[2]?.blobKey}.retry`,
      }));
      return [...batches, retried];
    };
    const expectedStored: number[] = [];
    for (const batch of rounds(viaTransaction)) {
      const stored = await database.database
        .transaction()
        .execute((transaction) => recordChunks(transaction, batch));
      expectedStored.push(stored.size);
    }
    const actualStored: number[] = [];
    for (const batch of rounds(viaStatement)) {
      const stored = await indexChunks(database.database, batch);
      expect([...stored].every((blobKey) => batch.some((record) => record.blobKey === blobKey))).toBe(true);
      actualStored.push(stored.size);
    }
    expect(actualStored).toEqual([8, 8, 8, 8, 8, 0]);
    expect(actualStored).toEqual(expectedStored);

    expect(await sessionRows(database, viaStatement)).toEqual(await sessionRows(database, viaTransaction));
    const chunks = (projectId: string) =>
      database.database
        .selectFrom('chunks')
        .select(['session_id', 'seq', 'content_sha256', 'encoding', 'received_bytes', 'inflated_bytes'])
        .select([
          'stored_bytes',
          'event_count',
          'call_item_count',
          'first_event_at',
          'last_event_at',
          'sent_at',
        ])
        .where('project_id', '=', projectId)
        .orderBy('session_id')
        .orderBy('seq')
        .execute()
        .then((rows) =>
          rows.map((row) => ({ ...row, content_sha256: Buffer.from(row.content_sha256).toString('hex') })),
        );
    const signals = (projectId: string) =>
      database.database
        .selectFrom('session_signals')
        .select(['session_id', 'seq', 'event_index', 't', 'kind', 'severity', 'name', 'message', 'details'])
        .where('project_id', '=', projectId)
        .orderBy('session_id')
        .orderBy('seq')
        .orderBy('event_index')
        .execute();
    expect(await chunks(viaStatement)).toHaveLength(40);
    expect(await chunks(viaStatement)).toEqual(await chunks(viaTransaction));
    // One error and five custom events (one per chunk, `step_<seq>`) per session.
    expect(await signals(viaStatement)).toHaveLength(48);
    expect(await signals(viaStatement)).toEqual(await signals(viaTransaction));
    const identified = (await sessionRows(database, viaStatement)).filter((row) =>
      row.user_id?.startsWith('identified_'),
    );
    expect(identified).toHaveLength(4);

    // Processing jobs: queued by the chunk with call items (seq 4, first to arrive, in every
    // third session) or by the chunk with an error (seq 2, every session), then bumped by each
    // later chunk with session facts the calls copy (seq 0's meta; seq 1 and 3 identify in even
    // sessions) once a job exists; the retried seq 2 is not new and bumps nothing.
    const jobs = (projectId: string) =>
      database.database
        .selectFrom('processing_jobs')
        .select(['session_id', 'generation'])
        .where('project_id', '=', projectId)
        .orderBy('session_id')
        .execute();
    expect(await jobs(viaStatement)).toEqual(await jobs(viaTransaction));
    expect((await jobs(viaStatement)).map((job) => [job.session_id.slice(-4), job.generation])).toEqual([
      ['0000', 5], // call (4), meta (0), error (2), identify (1), identify (3)
      ['0001', 1], // error (2)
      ['0002', 3], // error (2), identify (1), identify (3)
      ['0003', 3], // call (4), meta (0), error (2)
      ['0004', 3],
      ['0005', 1],
      ['0006', 5],
      ['0007', 1],
    ]);
  });

  it('keeps the first of two chunks with one (session, seq) in a batch, and reports the winner', async () => {
    const projectId = projectIds[2] as string;
    const writer = createChunkIndexWriter({ database: database.database });
    const sessionId = 'ses_01KAJBCH80XTQ0YDPAV81S9001';
    const first = record(projectId, sessionId, 0, { meta: true, hash: 7 });
    const retry = record(projectId, sessionId, 0, { meta: true, hash: 7 });
    const other = record(projectId, sessionId, 0, { meta: true, hash: 8 });
    const blocker = writer.index(record(projectId, 'ses_01KAJBCH80XTQ0YDPAV81S9000', 0));
    const outcomes = await Promise.all([writer.index(first), writer.index(retry), writer.index(other)]);
    await blocker;
    expect(outcomes[0]).toEqual({ status: 'stored' });
    expect(outcomes.slice(1).map(plain)).toEqual([existsAs(first), existsAs(first)]);
    const [session] = await sessionRows(database, projectId).then((rows) =>
      rows.filter((row) => row.id === sessionId),
    );
    expect(session?.chunk_count).toBe(1);
    expect(session?.stored_bytes).toBe(first.storedBytes);
  });

  it('answers a chunk indexed before from its row, and its own row as its own', async () => {
    const projectId = projectIds[3] as string;
    const writer = createChunkIndexWriter({ database: database.database });
    const original = record(projectId, 'ses_01KAJBCH80XTQ0YDPAV81S9101', 1);
    expect(await writer.index(original)).toEqual({ status: 'stored' });
    const later = record(projectId, 'ses_01KAJBCH80XTQ0YDPAV81S9101', 1, { hash: 99 });
    expect(plain(await writer.index(later))).toEqual(existsAs(original));
    // The same record again, as after a COMMIT that failed on the wire but went through.
    expect(plain(await writer.index(original))).toEqual(existsAs(original));
  });

  it('fails only the bad chunk of a batch: the others are stored one by one', async () => {
    const projectId = projectIds[4] as string;
    const writer = createChunkIndexWriter({ database: database.database });
    const blocker = writer.index(record(projectId, 'ses_01KAJBCH80XTQ0YDPAV81S9200', 0));
    const good = [1, 2, 3].map((index) => record(projectId, `ses_01KAJBCH80XTQ0YDPAV81S920${index}`, 0));
    // A project that does not exist: its session row violates a foreign key.
    const bad = record('proj_01KAJBCH80XTQ0YDPAV81SNONE', 'ses_01KAJBCH80XTQ0YDPAV81S9209', 0);
    const settled = await Promise.allSettled([
      writer.index(good[0] as ChunkRecord),
      writer.index(bad),
      writer.index(good[1] as ChunkRecord),
      writer.index(good[2] as ChunkRecord),
    ]);
    await blocker;
    expect(settled.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    const stored = await database.database
      .selectFrom('chunks')
      .select('session_id')
      .where('project_id', '=', projectId)
      .execute();
    expect(stored).toHaveLength(4);
    expect(
      await database.database
        .selectFrom('sessions')
        .select('id')
        .where('id', '=', bad.chunk.sessionId)
        .execute(),
    ).toEqual([]);
  });

  it('answers only once the batch is flushed to disk', async () => {
    const projectId = projectIds[5] as string;
    let release: () => void = () => {};
    let flushes = 0;
    const writer = createChunkIndexWriter({
      database: database.database,
      flush: () => {
        flushes += 1;
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    });
    let answered = false;
    const outcome = writer.index(record(projectId, 'ses_01KAJBCH80XTQ0YDPAV81S9400', 0)).then((value) => {
      answered = true;
      return value;
    });
    await expect.poll(() => flushes).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    release();
    expect(await outcome).toEqual({ status: 'stored' });
  });

  it('lingers to gather chunks that arrive shortly after each other into one transaction', async () => {
    const projectId = projectIds[5] as string;
    const writer = createChunkIndexWriter({ database: database.database, lingerMs: 200 });
    const pending = [];
    for (let index = 0; index < 5; index += 1) {
      pending.push(
        writer.index(record(projectId, `ses_01KAJBCH80XTQ0YDPAV81S95${String(index).padStart(2, '0')}`, 0)),
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(pending);
    expect(writer.stats()).toEqual({ batches: 1, chunks: 5 });
  });

  it('drains: resolves once every chunk handed to it is settled', async () => {
    const projectId = projectIds[5] as string;
    const writer = createChunkIndexWriter({ database: database.database });
    await writer.drain();
    const settled: string[] = [];
    for (let index = 0; index < 10; index += 1) {
      void writer
        .index(record(projectId, `ses_01KAJBCH80XTQ0YDPAV81S93${String(index).padStart(2, '0')}`, 0))
        .then(() => settled.push(String(index)));
    }
    await writer.drain();
    // Settled callbacks run in the same microtask checkpoint as drain's, before this line.
    await Promise.resolve();
    expect(settled).toHaveLength(10);
  });

  // Runs last: after every test above (batches, retries, a failed batch, duplicates), no chunk
  // row lacks its session. No foreign key checks this (migration 2026-11-24-chunk-session-in-code).
  it('leaves no chunk without its session', async () => {
    const chunks = await database.database.selectFrom('chunks').select('session_id').execute();
    expect(chunks.length).toBeGreaterThan(60);
    const orphans = await database.database
      .selectFrom('chunks')
      .leftJoin('sessions', (join) =>
        join
          .onRef('sessions.project_id', '=', 'chunks.project_id')
          .onRef('sessions.id', '=', 'chunks.session_id'),
      )
      .select(['chunks.session_id', 'chunks.seq'])
      .where('sessions.id', 'is', null)
      .execute();
    expect(orphans).toEqual([]);
  });
});
