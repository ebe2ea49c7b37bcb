import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, ingest } from '../../../test/call-timelines.ts';
import { newSessionId, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { personOf, send } from '../../../test/people.ts';
import { testStorage } from '../../../test/seed.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { type BlobStore, createS3BlobStore } from '../../platform/blob-store/index.ts';
import { startS3rver } from '../../platform/blob-store/s3rver-fixture.ts';
import { createId } from '../../platform/ids.ts';
import { createDsarWorker } from './dsar-worker.ts';
import { runErasureStep } from './index.ts';

// Erasure end to end (issue 25): an end user's sessions go in through ingest and processing, the
// erasure runs, and then every table and the blob store are scanned for anything of theirs — on
// both engines and both blob stores.

type Store = 'file' | 's3';

const ADA = { id: 'usr-ada-erasable-7731', email: 'Ada.Erasable@example.com', name: 'Ada Erasable' };
const BOB = { id: 'usr-bob-stays-4410', email: 'bob.stays@example.com', name: 'Bob Stays' };
const ADA_ERROR = 'Ada-only failure xq';
const SHARED_ERROR = 'Shared failure qz';

/** A recording chunk of the fixture, rewritten for one session, user and errors. */
async function recording(options: {
  sessionId: string;
  visitId: string;
  user: Record<string, string> | null;
  error: string;
  startedAt: number;
}): Promise<Buffer> {
  const chunk = JSON.parse((await validChunkFixture('recording-seq-0')).toString('utf8')) as {
    meta: Record<string, unknown>;
    events: Array<Record<string, unknown> & { t: number; type: string }>;
  } & Record<string, unknown>;
  const shift = options.startedAt - (chunk.meta.startedAt as number);
  chunk.sessionId = options.sessionId;
  chunk.visitId = options.visitId;
  chunk.sentAt = (chunk.sentAt as number) + shift;
  chunk.meta = { ...chunk.meta, startedAt: options.startedAt };
  if (options.user === null) delete chunk.meta.user;
  else chunk.meta.user = options.user;
  chunk.events = chunk.events
    .filter((event) => options.user?.id !== undefined || event.type !== 'identify')
    .map((event) => {
      const moved: Record<string, unknown> & { t: number; type: string } = { ...event, t: event.t + shift };
      if (moved.type === 'rrweb') {
        const data = moved.data as Record<string, unknown>;
        moved.data = { ...data, timestamp: (data.timestamp as number) + shift };
      }
      if (moved.type === 'gap') {
        moved.fromT = (moved.fromT as number) + shift;
        moved.toT = (moved.toT as number) + shift;
      }
      if (moved.type === 'identify') moved.user = options.user;
      if (moved.type === 'error' && moved.source === 'unhandledrejection') moved.message = SHARED_ERROR;
      else if (moved.type === 'error') {
        moved.message = options.error;
        delete moved.stack;
      }
      // The address in the URL is what the leak radar reports (naming the session).
      if (moved.type === 'nav' && options.user?.email !== undefined && options.user.email !== BOB.email)
        moved.url = `https://app.example.com/account?email=${options.user.email}`;
      return moved;
    });
  return Buffer.from(JSON.stringify(chunk));
}

/** Every blob key in the store: the files under the data directory's blobs, or s3rver's objects. */
async function blobKeys(directory: string, store: Store): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(directory.length + 1))
    .filter((name) => store === 'file' || name.endsWith('._S3rver_object'));
}

describe.each(ENGINES.flatMap((engine) => (['file', 's3'] as const).map((store) => ({ engine, store }))))(
  'erasure on $engine with the $store blob store',
  ({ engine, store }) => {
    let test: TestApp;
    let s3: Awaited<ReturnType<typeof startS3rver>> | undefined;
    let blobStore: BlobStore | undefined;
    let other: TestProject;
    let blobDirectory: string;

    beforeAll(async () => {
      if (store === 's3') {
        s3 = await startS3rver();
        blobStore = createS3BlobStore(s3.options);
      }
      test = await createTestApp(engine, { logger: false }, {}, blobStore === undefined ? {} : { blobStore });
      other = await test.createProject('Other project', {
        organizationId: test.first.project.organization_id,
      });
      blobDirectory = s3 === undefined ? join(test.dataDirectory, 'blobs') : s3.directory;
    }, 120_000);

    afterAll(async () => {
      await test?.close();
      await blobStore?.close();
      await s3?.stop();
    });

    it('deletes everything of the user, keeps everyone else, corrects clusters and writes a receipt', async () => {
      const database = test.database.database;
      const organizationId = test.first.project.organization_id;
      const start = Date.now() - 60 * 60 * 1000;
      const visit = `vis_${newSessionId().slice(4)}`;
      // Ada: identified by id and e-mail in project one, an anonymous session of the same visit,
      // a call, and a session identified by the same e-mail under another id in the other project. Bob: one session.
      const adaSession = newSessionId();
      const adaAnonymous = newSessionId();
      const adaElsewhere = newSessionId();
      const bobSession = newSessionId();
      await ingest(
        test.app,
        test.first.projectKey,
        await recording({
          sessionId: adaSession,
          visitId: visit,
          user: ADA,
          error: ADA_ERROR,
          startedAt: start,
        }),
      );
      const call = callTimeline({ start: start + 60_000 });
      await ingest(
        test.app,
        test.first.projectKey,
        chunkBytes({ sessionId: adaSession, seq: 1, sentAt: call.end + 100, events: call.items }),
      );
      await ingest(
        test.app,
        test.first.projectKey,
        await recording({
          sessionId: adaAnonymous,
          visitId: visit,
          user: null,
          error: ADA_ERROR,
          startedAt: start + 1,
        }),
      );
      await ingest(
        test.app,
        other.projectKey,
        await recording({
          sessionId: adaElsewhere,
          visitId: `vis_${newSessionId().slice(4)}`,
          user: { id: 'ada-in-the-other-app', email: ADA.email.toLowerCase() },
          error: ADA_ERROR,
          startedAt: start + 2,
        }),
      );
      await ingest(
        test.app,
        test.first.projectKey,
        await recording({
          sessionId: bobSession,
          visitId: `vis_${newSessionId().slice(4)}`,
          user: BOB,
          error: 'Bob-only failure',
          startedAt: start + 3,
        }),
      );
      // The backend's telemetry: a span with Ada's session id, one naming her only by `enduser.id`,
      // a log line with her address, and a span of Bob's.
      const nanoseconds = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
      const span = (spanId: string, attributes: Record<string, string>) => ({
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId,
        name: 'GET /api/account',
        startTimeUnixNano: nanoseconds(start),
        endTimeUnixNano: nanoseconds(start + 20),
        attributes: Object.entries(attributes).map(([key, value]) => ({
          key,
          value: { stringValue: value },
        })),
      });
      const otlp = (signal: string, body: unknown) =>
        test.app.inject({
          method: 'POST',
          url: `/v1/otlp/${signal}`,
          headers: { ...test.first.headers, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
      const spans = [
        span('eee19b7ec3c1b171', { 'session.id': adaSession }),
        span('eee19b7ec3c1b172', { 'enduser.id': ADA.id }),
        span('eee19b7ec3c1b173', { 'enduser.id': BOB.id }),
      ];
      expect((await otlp('traces', { resourceSpans: [{ scopeSpans: [{ spans }] }] })).statusCode).toBe(200);
      const logRecords = [
        { timeUnixNano: nanoseconds(start), body: { stringValue: `password reset sent to ${ADA.email}` } },
        { timeUnixNano: nanoseconds(start), body: { stringValue: `password reset sent to ${BOB.email}` } },
      ];
      expect((await otlp('logs', { resourceLogs: [{ scopeLogs: [{ logRecords }] }] })).statusCode).toBe(200);
      await test.processingWorker.runUntilIdle();
      await test.factsWorker.runUntilIdle();
      const share = await test.app.inject({
        method: 'POST',
        url: `/v1/sessions/${adaSession}/share`,
        headers: { ...test.first.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ expiresInHours: 24 }),
      });
      expect(share.statusCode, share.body).toBe(201);

      // What there is before: a call, the shared error's cluster in three sessions, leak reports.
      expect(
        await database.selectFrom('calls').select('id').where('session_id', '=', adaSession).execute(),
      ).toHaveLength(1);
      const sharedCluster = await database
        .selectFrom('issue_clusters')
        .select(['id', 'project_id'])
        .where('title', 'like', `%${SHARED_ERROR}%`)
        .where('project_id', '=', test.first.project.id)
        .executeTakeFirstOrThrow();
      const occurrencesOf = (clusterId: string) =>
        database
          .selectFrom('cluster_occurrences')
          .select('session_id')
          .where('cluster_id', '=', clusterId)
          .execute();
      expect((await occurrencesOf(sharedCluster.id)).map((row) => row.session_id).sort()).toEqual(
        [adaSession, adaAnonymous, bobSession].sort(),
      );
      const leakEvents = await database
        .selectFrom('notification_events')
        .select('payload')
        .where('type', '=', 'privacy.leak_radar')
        .execute();
      expect(
        leakEvents.some(
          (event) => event.payload.includes(adaSession) || event.payload.includes(adaElsewhere),
        ),
      ).toBe(true);
      const adaBytes = await database
        .selectFrom('sessions')
        .select(sql<number>`sum(stored_bytes)`.as('bytes'))
        .where('id', 'in', [adaSession, adaAnonymous, adaElsewhere])
        .executeTakeFirstOrThrow();
      const storedBefore = await storedBytesMetered(test);
      const bobBlobs = (
        await database.selectFrom('chunks').select('blob_key').where('session_id', '=', bobSession).execute()
      ).map((row) => row.blob_key);
      const adaBlobs = (
        await database
          .selectFrom('chunks')
          .select('blob_key')
          .where('session_id', 'in', [adaSession, adaAnonymous, adaElsewhere])
          .execute()
      ).map((row) => row.blob_key);
      expect(adaBlobs).toHaveLength(4);

      // The erasure: refused to a member, accepted from an admin, carried out by the worker.
      const member = await personOf(database, organizationId, 'member');
      const admin = await personOf(database, organizationId, 'admin');
      // A rating of the AI's answer about Ada's session.
      await database
        .insertInto('ai_feedback')
        .values({
          project_id: test.first.project.id,
          id: createId('fb'),
          feature: 'summary',
          subject_id: adaSession,
          rating: 'down',
          comment: 'the summary missed the failed call',
          created_by: `user:${admin.userId}`,
        })
        .execute();
      // An access request for the same person lists the same sessions the erasure will delete.
      const access = await send(test, 'POST', `/v1/orgs/${organizationId}/dsar`, admin.headers, {
        userId: ADA.id,
        email: ADA.email,
      });
      expect(access.statusCode, access.body).toBe(202);
      await createDsarWorker({ database, log: test.app.log }).runUntilIdle();
      const gathered = await database
        .selectFrom('dsar_requests')
        .select('manifest')
        .where('id', '=', (access.json() as { id: string }).id)
        .executeTakeFirstOrThrow();
      expect(gathered.manifest?.sessions.map((session) => session.id).sort()).toEqual(
        [adaSession, adaAnonymous, adaElsewhere].sort(),
      );

      const refused = await send(test, 'POST', `/v1/orgs/${organizationId}/erasure`, member.headers, {
        userId: ADA.id,
      });
      expect(refused.statusCode).toBe(403);
      const invalid = await send(test, 'POST', `/v1/orgs/${organizationId}/erasure`, admin.headers, {});
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json()).toMatchObject({ code: 'invalid' });
      const created = await send(test, 'POST', `/v1/orgs/${organizationId}/erasure`, admin.headers, {
        userId: ADA.id,
        email: ADA.email,
      });
      expect(created.statusCode, created.body).toBe(202);
      const request = created.json() as { id: string; status: string };
      expect(request.status).toBe('queued');
      const steps = await runAll(test, blobStore);
      expect(steps).toBeGreaterThan(0);

      const done = await send(test, 'GET', `/v1/orgs/${organizationId}/erasure/${request.id}`, admin.headers);
      expect(done.statusCode).toBe(200);
      const receipt = done.json() as {
        status: string;
        sessionsErased: number;
        receipt: Record<string, number>;
      };
      expect(receipt).toMatchObject({
        status: 'completed',
        sessionsErased: 3,
        subject: { userId: true, email: true },
      });
      expect(receipt.receipt).toMatchObject({
        sessions: 3,
        chunks: 4,
        calls: 1,
        share_links: 1,
        blobs: 4,
        blobs_removed: 4,
      });
      expect(receipt.receipt).toMatchObject({ spans: 2, log_records: 1, dsar_requests: 1, ai_feedback: 1 });
      expect(receipt.receipt.call_tracks).toBeGreaterThan(0);
      expect(receipt.receipt.cluster_occurrences).toBeGreaterThan(0);
      expect(receipt.receipt.notification_events).toBeGreaterThan(0);
      // Found again by who it was for, though the identifiers are no longer kept.
      const found = await send(
        test,
        'GET',
        `/v1/orgs/${organizationId}/erasure?userId=${ADA.id}&email=${encodeURIComponent(ADA.email)}`,
        admin.headers,
      );
      expect((found.json() as { items: Array<{ id: string }> }).items.map((item) => item.id)).toEqual([
        request.id,
      ]);
      const notFound = await send(
        test,
        'GET',
        `/v1/orgs/${organizationId}/erasure?userId=${BOB.id}`,
        admin.headers,
      );
      expect((notFound.json() as { items: unknown[] }).items).toEqual([]);

      // The scan: no row of any table and no blob holds anything of Ada's.
      const needles = [
        ADA.id,
        ADA.email.toLowerCase(),
        ADA.name,
        adaSession,
        adaAnonymous,
        adaElsewhere,
        call.pc,
        ADA_ERROR,
      ];
      const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'
      order by table_name`.execute(database);
      expect(tables.rows.length).toBeGreaterThan(50);
      const hits: string[] = [];
      for (const { table_name: table } of tables.rows) {
        const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(table)} as t`.execute(
          database,
        );
        for (const { row } of rows.rows)
          for (const needle of needles)
            if (row.toLowerCase().includes(needle.toLowerCase())) hits.push(`${table}: ${needle}`);
      }
      expect(hits).toEqual([]);
      const keys = await blobKeys(blobDirectory, store);
      for (const id of [adaSession, adaAnonymous, adaElsewhere])
        expect(keys.filter((key) => key.includes(id))).toEqual([]);
      expect(await database.selectFrom('blob_deletions').selectAll().execute()).toEqual([]);
      const remaining = blobStore ?? (await testStorage(test)).blobStore;
      for (const key of adaBlobs) expect(await remaining.get(key)).toBeNull();
      for (const key of bobBlobs) expect(await remaining.get(key)).not.toBeNull();

      expect(await database.selectFrom('spans').select('span_id').execute()).toEqual([
        { span_id: 'eee19b7ec3c1b173' },
      ]);
      expect(await database.selectFrom('log_records').select('body').execute()).toHaveLength(1);
      // Bob's session is whole: readable, its chunk decrypts, its cluster occurrences stay.
      const bob = await test.app.inject({ url: `/v1/sessions/${bobSession}`, headers: test.first.headers });
      expect(bob.statusCode).toBe(200);
      const bobChunk = await test.app.inject({
        url: `/v1/sessions/${bobSession}/chunks/0`,
        headers: test.first.headers,
      });
      expect(bobChunk.statusCode).toBe(200);
      expect(bobChunk.body).toContain(BOB.email);
      expect((await occurrencesOf(sharedCluster.id)).map((row) => row.session_id)).toEqual([bobSession]);
      const clusterView = await test.app.inject({
        url: `/v1/issues/${sharedCluster.id}`,
        headers: test.first.headers,
      });
      expect(clusterView.statusCode).toBe(200);
      expect(clusterView.json()).toMatchObject({ count24h: 1 });
      // Ada's own error cluster had no one else: it is gone.
      expect(
        await database
          .selectFrom('issue_clusters')
          .select('id')
          .where('title', 'like', `%${ADA_ERROR}%`)
          .execute(),
      ).toEqual([]);
      // Usage stays as counts; the stored bytes went down by what was removed.
      expect(await storedBytesMetered(test)).toBe(storedBefore - Number(adaBytes.bytes));
      const sessionsMetered = await database
        .selectFrom('usage_daily')
        .select(sql<number>`sum(sessions)`.as('sessions'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow();
      expect(Number(sessionsMetered.sessions)).toBe(4);
      // Audited, without the identifiers.
      const audit = await database
        .selectFrom('audit_log')
        .select(['action', 'details'])
        .where('organization_id', '=', organizationId)
        .where('action', '=', 'privacy.erasure_requested')
        .execute();
      expect(audit).toHaveLength(1);
    }, 120_000);
  },
);

async function storedBytesMetered(test: TestApp): Promise<number> {
  const row = await test.database.database
    .selectFrom('usage_daily')
    .select(sql<number>`coalesce(sum(stored_bytes), 0)`.as('bytes'))
    .where('organization_id', '=', test.first.project.organization_id)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

/** Runs erasure steps until none is due; returns how many ran. */
async function runAll(test: TestApp, blobStore: BlobStore | undefined): Promise<number> {
  const store = blobStore ?? (await testStorage(test)).blobStore;
  let steps = 0;
  while (await runErasureStep({ database: test.database.database, blobStore: store }, new Date())) steps += 1;
  return steps;
}
