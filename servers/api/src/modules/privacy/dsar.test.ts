import { createHash } from 'node:crypto';
import { unzipSync } from 'fflate';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, type Json } from '../../../test/http.ts';
import { newSessionId, postChunk, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { personOf, type TestPerson } from '../../../test/people.ts';
import { testStorage } from '../../../test/seed.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import type { DsarIndex } from './dsar-archive.ts';
import { createDsarWorker } from './dsar-worker.ts';

// Access requests (DSAR) end to end, on both engines: sessions of end user A in two projects of
// one organization (identified by id, and by e-mail only in another case), a call of A, B's
// session, and A in another organization; the request for A is gathered by its job, its archive
// downloaded and unzipped: the index matches the parts, every chunk A sent is there as sent,
// nothing of B or of the other organization is; roles, expiry and the audit trail.

type Sent = { projectId: string; sessionId: string; seq: number; chunk: Json };

describe.each(ENGINES)('access requests (DSAR) on %s', (engine) => {
  let test: TestApp;
  let orgId: string;
  let web: TestProject;
  let mobile: TestProject;
  let elsewhere: TestProject;
  let owner: TestPerson;
  let admin: TestPerson;
  let member: TestPerson;
  let viewer: TestPerson;
  let outsider: TestPerson;
  const sentOfA: Sent[] = [];
  const sessionsOfB: string[] = [];
  const sessionsElsewhere: string[] = [];
  let callSessionOfA: string;

  /** A fixture chunk for `sessionId`, the end user replaced (meta and `identify` events). */
  async function chunkOf(
    name: 'recording-seq-0' | 'recording-seq-1' | 'call',
    sessionId: string,
    user: { id: string; email?: string; name?: string } | null,
  ): Promise<Json> {
    const chunk = JSON.parse((await validChunkFixture(name)).toString('utf8'));
    chunk.sessionId = sessionId;
    delete chunk.visitId;
    if (chunk.meta !== undefined) {
      if (user === null) delete chunk.meta.user;
      else chunk.meta.user = user;
    }
    chunk.events = chunk.events
      .filter((event: Json) => event.type !== 'identify' || user !== null)
      .map((event: Json) => (event.type === 'identify' ? { ...event, user } : event));
    return chunk;
  }

  async function ingest(project: TestProject, chunk: Json): Promise<void> {
    expectJson(await postChunk(test.app, project.projectKey, Buffer.from(JSON.stringify(chunk))), 200);
  }

  const as = (person: TestPerson) => person.headers;
  const send = (
    method: 'GET' | 'POST' | 'HEAD',
    url: string,
    person: TestPerson | Record<string, string>,
    body?: unknown,
  ) =>
    test.app.inject({
      method,
      url,
      headers: {
        ...('headers' in person ? as(person as TestPerson) : (person as Record<string, string>)),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const runJobs = (now?: () => Date) =>
    createDsarWorker({
      database: test.database.database,
      log: test.app.log,
      ...(now ? { now } : {}),
    }).runUntilIdle();

  beforeAll(async () => {
    test = await createTestApp(engine);
    web = test.first;
    orgId = web.project.organization_id;
    mobile = await test.createProject('Mobile', { organizationId: orgId });
    elsewhere = await test.createProject('Elsewhere');
    const database = test.database.database;
    owner = await personOf(database, orgId, 'owner');
    admin = await personOf(database, orgId, 'admin');
    member = await personOf(database, orgId, 'member');
    viewer = await personOf(database, orgId, 'viewer');
    outsider = await personOf(database, elsewhere.project.organization_id, 'owner');

    const userA = { id: 'user-a', email: 'ada@example.com', name: 'Ada' };
    // A, by id and e-mail, on the web project: two chunks (errors, custom events).
    const first = newSessionId();
    for (const [name, seq] of [
      ['recording-seq-0', 0],
      ['recording-seq-1', 1],
    ] as const) {
      const chunk = await chunkOf(name, first, userA);
      await ingest(web, chunk);
      sentOfA.push({ projectId: web.project.id, sessionId: first, seq, chunk });
    }
    // A, known by e-mail only (another id, the address in another case), on the web project.
    const byEmail = newSessionId();
    const emailChunk = await chunkOf('recording-seq-0', byEmail, {
      id: 'legacy-7781',
      email: 'Ada@Example.COM',
    });
    await ingest(web, emailChunk);
    sentOfA.push({ projectId: web.project.id, sessionId: byEmail, seq: 0, chunk: emailChunk });
    // A's call, on the mobile project.
    callSessionOfA = newSessionId();
    const call = await chunkOf('call', callSessionOfA, { id: 'user-a' });
    await ingest(mobile, call);
    sentOfA.push({ projectId: mobile.project.id, sessionId: callSessionOfA, seq: 0, chunk: call });
    // B, on both projects.
    for (const project of [web, mobile]) {
      const sessionId = newSessionId();
      await ingest(
        project,
        await chunkOf('recording-seq-0', sessionId, { id: 'user-b', email: 'bob@example.com' }),
      );
      sessionsOfB.push(sessionId);
    }
    // A in another organization: not this organization's to export.
    const other = newSessionId();
    await ingest(elsewhere, await chunkOf('recording-seq-0', other, userA));
    sessionsElsewhere.push(other);
    await test.processingWorker.runUntilIdle();
  }, 120_000);
  afterAll(async () => {
    await test?.close();
  });

  it('refuses a request naming nobody, and callers who may not ask', async () => {
    const url = `/v1/orgs/${orgId}/dsar`;
    const empty = expectJson(await send('POST', url, owner, {}), 400);
    expect(empty).toMatchObject({ code: 'invalid', error: expect.stringContaining('userId') });
    expect(expectJson(await send('POST', url, owner, { email: 'not an address' }), 400).code).toBe('invalid');
    expect(expectJson(await send('POST', url, owner, { userId: 'a', extra: 1 }), 400).code).toBe('invalid');
    expect(expectJson(await send('POST', url, member, { userId: 'user-a' }), 403).code).toBe('unauthorized');
    expect(expectJson(await send('POST', url, viewer, { userId: 'user-a' }), 403).code).toBe('unauthorized');
    expect(expectJson(await send('POST', url, outsider, { userId: 'user-a' }), 404).code).toBe('not_found');
    expect(expectJson(await send('POST', url, web.headers, { userId: 'user-a' }), 403).code).toBe(
      'unauthorized',
    );
    expect(expectJson(await send('GET', url, member), 403).code).toBe('unauthorized');
    const count = await test.database.database
      .selectFrom('dsar_requests')
      .select(sql<number>`count(*)::int`.as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(count.count)).toBe(0);
  });

  it('gathers every session and call of the end user, and the archive holds exactly what was sent', async () => {
    const created = expectJson(
      await send('POST', `/v1/orgs/${orgId}/dsar`, admin, { userId: 'user-a', email: 'ada@example.com' }),
      202,
    );
    expect(created).toMatchObject({
      id: expect.stringMatching(/^dsar_/),
      organizationId: orgId,
      status: 'queued',
      subject: { userId: 'user-a', email: 'ada@example.com' },
      requestedBy: admin.userId,
    });
    expect(created.downloadUrl).toBeUndefined();
    // Not ready yet: the archive is refused.
    const early = expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}/archive`, owner), 409);
    expect(early.code).toBe('invalid');

    expect(await runJobs()).toBeGreaterThan(0);
    const ready = expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}`, owner), 200);
    expect(ready.status).toBe('ready');
    expect(ready.manifest.totals).toMatchObject({ projects: 2, sessions: 3, chunks: 4 });
    expect(ready.manifest.totals.calls).toBeGreaterThan(0);
    expect(ready.manifest.totals.errors).toBe(4); // two in each seq-0 chunk of a recording
    expect(ready.manifest.totals.customEvents).toBe(3);
    expect(ready.downloadUrl).toBe(
      `${test.configuration.publicUrl}/v1/orgs/${orgId}/dsar/${created.id}/archive`,
    );
    expect(Date.parse(ready.expiresAt) - Date.parse(ready.readyAt)).toBe(7 * 24 * 3600 * 1000);

    const response = await send('GET', new URL(ready.downloadUrl).pathname, owner);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(response.headers['cache-control']).toBe('no-store');
    const files = unzipSync(new Uint8Array(response.rawPayload));
    const text = (path: string) => Buffer.from(files[path] as Uint8Array).toString('utf8');
    const index = JSON.parse(text('index.json')) as DsarIndex;

    // The index describes every part, and only those.
    expect(index.format).toBe('svc-dsar/1');
    expect(index.request).toMatchObject({
      id: created.id,
      subject: { userId: 'user-a', email: 'ada@example.com' },
    });
    expect(index.parts.map((part) => part.path).sort()).toEqual(
      Object.keys(files)
        .filter((path) => path !== 'index.json')
        .sort(),
    );
    for (const part of index.parts) {
      const bytes = files[part.path] as Uint8Array;
      expect(part.bytes, part.path).toBe(bytes.length);
      expect(part.sha256, part.path).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    expect(index.omitted).toEqual([]);

    // Every chunk A sent, decrypted and inflated, equal to what was sent.
    const chunkParts = index.parts.filter((part) => part.kind === 'chunk');
    expect(chunkParts).toHaveLength(sentOfA.length);
    for (const sent of sentOfA) {
      const path = `projects/${sent.projectId}/sessions/${sent.sessionId}/chunks/${sent.seq}.json`;
      expect(files[path], path).toBeDefined();
      expect(JSON.parse(text(path))).toEqual(sent.chunk);
    }
    // Each session's flattened events, errors and custom events.
    for (const sessionId of new Set(sentOfA.map((sent) => sent.sessionId))) {
      const sent = sentOfA.filter((one) => one.sessionId === sessionId);
      const base = `projects/${sent[0]?.projectId}/sessions/${sessionId}`;
      const session = JSON.parse(text(`${base}/session.json`));
      expect(session.id).toBe(sessionId);
      const lines = (path: string) =>
        text(path)
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line));
      const events = lines(`${base}/events.jsonl`);
      expect(events).toEqual(
        sent.flatMap((one) =>
          one.chunk.events.map((event: Json, index: number) => ({ seq: one.seq, index, event })),
        ),
      );
      const sentOfType = (type: string) =>
        sent.flatMap((one) => one.chunk.events.filter((event: Json) => event.type === type));
      expect(lines(`${base}/errors.jsonl`).map((error) => error.message)).toEqual(
        sentOfType('error').map((event) => event.message),
      );
      expect(lines(`${base}/custom-events.jsonl`).map((custom) => custom.name)).toEqual(
        sentOfType('custom').map((event) => event.name),
      );
    }
    // The call, as the API shows it.
    const callParts = index.parts.filter((part) => part.kind === 'call');
    expect(callParts.length).toBe(ready.manifest.totals.calls);
    for (const part of callParts) {
      expect(part.sessionId).toBe(callSessionOfA);
      const shown = expectJson(
        await test.app.inject({ url: `/v1/calls/${part.callId}`, headers: mobile.headers }),
        200,
      );
      expect(JSON.parse(text(part.path))).toEqual(shown);
    }
    // Nothing of B, nothing of the other organization.
    const everything = Object.keys(files)
      .map((path) => `${path}\n${text(path)}`)
      .join('\n');
    for (const sessionId of [...sessionsOfB, ...sessionsElsewhere])
      expect(everything).not.toContain(sessionId);
    expect(everything).not.toContain('user-b');
    expect(everything).not.toContain('bob@example.com');
    expect(everything).not.toContain(elsewhere.project.id);

    // HEAD answers the headers without a download.
    const head = await send('HEAD', new URL(ready.downloadUrl).pathname, owner);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');

    // Audited: the request (without whom it is about) and the one download.
    const audit = await test.database.database
      .selectFrom('audit_log')
      .select(['action', 'actor_id', 'target_id', 'details'])
      .where('organization_id', '=', orgId)
      .where('action', 'like', 'dsar.%')
      .orderBy('id')
      .execute();
    expect(audit.map((row) => [row.action, row.actor_id, row.target_id])).toEqual([
      ['dsar.requested', admin.userId, created.id],
      ['dsar.downloaded', owner.userId, created.id],
    ]);
    expect(JSON.stringify(audit)).not.toContain('ada@example.com');
    expect(JSON.stringify(audit)).not.toContain('user-a');

    // A member may not download it; another organization does not see it.
    expect(
      expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}/archive`, member), 403).code,
    ).toBe('unauthorized');
    const otherOrg = elsewhere.project.organization_id;
    expect(expectJson(await send('GET', `/v1/orgs/${otherOrg}/dsar/${created.id}`, outsider), 404).code).toBe(
      'not_found',
    );
    expect(expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/dsar_nothing`, owner), 404).code).toBe(
      'not_found',
    );
  });

  it('lists requests newest first in pages', async () => {
    for (const email of ['one@example.com', 'two@example.com'])
      expectJson(await send('POST', `/v1/orgs/${orgId}/dsar`, owner, { email }), 202);
    const first = expectJson(await send('GET', `/v1/orgs/${orgId}/dsar?limit=2`, owner), 200);
    expect(first.items.map((item: Json) => item.subject.email)).toEqual([
      'two@example.com',
      'one@example.com',
    ]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = expectJson(
      await send(
        'GET',
        `/v1/orgs/${orgId}/dsar?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
        owner,
      ),
      200,
    );
    expect(second.items.map((item: Json) => item.subject.userId)).toEqual(['user-a']);
    expect(second.nextCursor).toBeUndefined();
    expect(expectJson(await send('GET', `/v1/orgs/${orgId}/dsar?cursor=nonsense`, owner), 400).code).toBe(
      'invalid',
    );
    // Someone who sent nothing: ready, with nothing in it.
    await runJobs();
    const nobody = expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${first.items[0].id}`, owner), 200);
    expect(nobody).toMatchObject({
      status: 'ready',
      manifest: { totals: { sessions: 0, calls: 0 }, projects: [] },
    });
    const files = unzipSync(
      new Uint8Array((await send('GET', `/v1/orgs/${orgId}/dsar/${nobody.id}/archive`, owner)).rawPayload),
    );
    expect(Object.keys(files)).toEqual(['index.json']);
  });

  it('stops serving the archive once it expired, and forgets whom it was about', async () => {
    const created = expectJson(
      await send('POST', `/v1/orgs/${orgId}/dsar`, owner, { userId: 'user-a' }),
      202,
    );
    await runJobs();
    const archive = `/v1/orgs/${orgId}/dsar/${created.id}/archive`;
    expect((await send('GET', archive, owner)).statusCode).toBe(200);
    // Eight days later, before the sweep: refused already.
    const later = () => new Date(Date.now() + 8 * 24 * 3600 * 1000);
    await test.database.database
      .updateTable('dsar_requests')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', created.id)
      .execute();
    const gone = expectJson(await send('GET', archive, owner), 410);
    expect(gone).toMatchObject({ code: 'not_found', error: expect.stringContaining('expired') });
    expect(expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}`, owner), 200)).toMatchObject({
      status: 'expired',
      subject: null,
    });
    // The sweep: the subject and the lists are gone from the row, the counts stay.
    await runJobs(later);
    const row = await test.database.database
      .selectFrom('dsar_requests')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'expired', subject_user_id: null, subject_email: null });
    expect(row.manifest).toMatchObject({ sessions: [], calls: [], totals: { sessions: 2 } });
    const shown = expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}`, owner), 200);
    expect(shown).toMatchObject({ status: 'expired', subject: null, manifest: { totals: { sessions: 2 } } });
    expect(shown.downloadUrl).toBeUndefined();
    expect(expectJson(await send('GET', archive, owner), 410).code).toBe('not_found');
  });

  // Last: it loses a chunk of A.
  it('never answers an archive that looks complete when a chunk cannot be read', async () => {
    const created = expectJson(
      await send('POST', `/v1/orgs/${orgId}/dsar`, owner, { userId: 'user-a' }),
      202,
    );
    await runJobs();
    const [lost] = sentOfA;
    const row = await test.database.database
      .selectFrom('chunks')
      .select('blob_key')
      .where('project_id', '=', lost?.projectId as string)
      .where('session_id', '=', lost?.sessionId as string)
      .where('seq', '=', lost?.seq as number)
      .executeTakeFirstOrThrow();
    await (await testStorage(test)).blobStore.delete(row.blob_key);
    const response = await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}/archive`, owner).catch(
      (error: unknown) => error,
    );
    // The headers went before the chunk was read: the response is cut (inject rejects, as a real
    // client sees its connection reset); a body, if any, is a zip cut short, never a complete one.
    if (!(response instanceof Error))
      expect(() => unzipSync(new Uint8Array((response as { rawPayload: Buffer }).rawPayload))).toThrow();
    // The server goes on answering.
    expectJson(await send('GET', `/v1/orgs/${orgId}/dsar/${created.id}`, owner), 200);
  });
});
