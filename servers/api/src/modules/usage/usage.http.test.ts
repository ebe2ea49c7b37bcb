import { generateKeyPairSync } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, type Json } from '../../../test/http.ts';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { accountsClient, PASSWORD } from '../accounts/accounts.fixture.ts';
import { modelAccess, recordUsage } from '../ai/model.ts';
import { planLimits } from '../billing/index.ts';
import { signLicense } from '../billing/license.ts';
import { storeLicense } from '../billing/license-store.ts';
import { addPerson } from '../orgs/index.ts';
import { createUsageGate, NO_CAPS } from './index.ts';

// Usage and caps through the API, on both engines: ingest meters sessions, chunks and bytes in
// the statement that indexes them (the totals equal what was acknowledged, duplicates and
// conflicts not counted); an organization's caps send `usage.threshold` at 80 % and 100 % once,
// then pause recording (`/v1/config`) and refuse new sessions (429) while sessions already
// started finish, for an hour.

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

describe.each(ENGINES)('usage and caps on %s', (engine) => {
  let test: TestApp;
  const { send, signedIn, login } = accountsClient(
    () => test,
    () => smtp,
    engine === 'pglite' ? '10.71' : '10.72',
  );
  beforeAll(async () => {
    test = await createTestApp(engine, { logger: { level: 'error' } }, { SVC_SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await test?.close();
  });

  type Person = Awaited<ReturnType<typeof signedIn>>;
  const as = (person: Person) => ({ cookie: person.cookie, csrf: person.csrf });

  /** An organization of a new owner, with two projects. */
  async function organization(name: string) {
    const owner = await signedIn(`${name}-owner-${engine}@example.com`);
    const orgId = expectJson(await send('POST', '/v1/orgs', { name }, as(owner)), 201).id as string;
    const web = await test.createProject('Web', { organizationId: orgId });
    const mobile = await test.createProject('Mobile', { organizationId: orgId });
    return { owner, orgId, web, mobile };
  }

  /** A fixture chunk of the session; `conflicting`: other bytes at the same seq. */
  async function chunkOf(sessionId: string, seq: number, conflicting = false) {
    const bytes = await validChunkFixture(seq === 0 ? 'recording-seq-0' : 'recording-seq-1');
    const sentAt = (JSON.parse(bytes.toString('utf8')) as { sentAt: number }).sentAt;
    return rewriteChunk(bytes, { sessionId, seq, ...(conflicting ? { sentAt: sentAt + 1 } : {}) });
  }

  async function ingest(project: TestProject, sessionId: string, seq: number, conflicting = false) {
    return postChunk(test.app, project.projectKey, await chunkOf(sessionId, seq, conflicting));
  }

  const usage = async (person: Person, orgId: string, query = '') =>
    expectJson(await send('GET', `/v1/orgs/${orgId}/usage${query}`, undefined, as(person)), 200);

  /** What the chunks and sessions tables hold for the organization: what ingest acknowledged. */
  async function acknowledged(orgId: string) {
    const database = test.database.database;
    const chunks = await database
      .selectFrom('chunks')
      .innerJoin('projects', 'projects.id', 'chunks.project_id')
      .where('projects.organization_id', '=', orgId)
      .select([
        sql<number>`count(*)::int`.as('chunks'),
        sql<number>`coalesce(sum(received_bytes), 0)::bigint`.as('ingested'),
        sql<number>`coalesce(sum(chunks.stored_bytes), 0)::bigint`.as('stored'),
      ])
      .executeTakeFirstOrThrow();
    const sessions = await database
      .selectFrom('sessions')
      .innerJoin('projects', 'projects.id', 'sessions.project_id')
      .where('projects.organization_id', '=', orgId)
      .select(sql<number>`count(*)::int`.as('count'))
      .executeTakeFirstOrThrow();
    return {
      sessions: Number(sessions.count),
      chunks: Number(chunks.chunks),
      ingestedBytes: Number(chunks.ingested),
      storedBytes: Number(chunks.stored),
    };
  }

  it('meters exactly what ingest acknowledged, per project and day, duplicates and conflicts left out', async () => {
    const { owner, orgId, web, mobile } = await organization('Metered');
    const [one, two, three] = [newSessionId(), newSessionId(), newSessionId()];
    expect((await ingest(web, one, 0)).statusCode).toBe(200);
    expect((await ingest(web, one, 1)).statusCode).toBe(200);
    expect((await ingest(web, two, 0)).statusCode).toBe(200);
    expect((await ingest(mobile, three, 0)).statusCode).toBe(200);
    // A resend of the same bytes, and other bytes at a stored seq: nothing more is counted.
    expect(expectJson(await ingest(web, one, 0), 200).duplicate).toBe(true);
    expect((await ingest(web, one, 1, true)).statusCode).toBe(409);
    // Many at once: batches of distinct sessions (one statement) and of one session's seqs.
    const many = Array.from({ length: 12 }, () => newSessionId());
    const answers = await Promise.all([
      ...many.map((sessionId) => ingest(mobile, sessionId, 0)),
      ...many.slice(0, 6).map((sessionId) => ingest(mobile, sessionId, 1)),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 200));

    const report = await usage(owner, orgId);
    const truth = await acknowledged(orgId);
    expect(truth).toMatchObject({ sessions: 15, chunks: 22 });
    expect(report.totals).toMatchObject(truth);
    expect(report.totals).toMatchObject({ calls: 0, spans: 0, aiTokens: 0 });
    const today = new Date().toISOString().slice(0, 10);
    expect(report.to).toBe(today);
    expect(report.days.at(-1)).toMatchObject({ day: today, ...truth });
    expect(report.days.slice(0, -1).every((day: Json) => day.sessions === 0)).toBe(true);
    expect(report.byProject.map((project: Json) => [project.name, project.sessions, project.chunks])).toEqual(
      [
        ['Mobile', 13, 19],
        ['Web', 2, 3],
      ],
    );
    // One project only.
    const webOnly = await usage(owner, orgId, `?projectId=${web.project.id}&from=${today}&to=${today}`);
    expect(webOnly.totals).toMatchObject({ sessions: 2, chunks: 3 });
    expect(webOnly.days).toHaveLength(1);
    expect(report.month).toMatchObject({
      caps: NO_CAPS,
      ownCaps: NO_CAPS,
      recordingPaused: false,
      usage: { sessions: { used: 15, cap: null, percent: null } },
    });
  });

  it('meters calls and call seconds once however often they are processed, OTLP spans and logs, AI tokens', async () => {
    const { owner, orgId, web } = await organization('Calls');
    const database = test.database.database;
    expect((await postChunk(test.app, web.projectKey, await validChunkFixture('call'))).statusCode).toBe(200);
    await test.processingWorker.runUntilIdle();
    const calls = await database
      .selectFrom('calls')
      .select(['duration_ms'])
      .where('project_id', '=', web.project.id)
      .execute();
    expect(calls.length).toBeGreaterThan(0);
    const callSeconds = Math.round(
      calls.reduce((sum, call) => sum + Number(call.duration_ms ?? 0), 0) / 1000,
    );
    expect((await usage(owner, orgId)).totals).toMatchObject({ calls: calls.length, callSeconds });
    // Processed again (a reprocessing): the same calls, counted once.
    await database
      .insertInto('processing_jobs')
      .values({
        project_id: web.project.id,
        session_id: (
          await database
            .selectFrom('calls')
            .select('session_id')
            .where('project_id', '=', web.project.id)
            .executeTakeFirstOrThrow()
        ).session_id,
        due_at: new Date(),
      })
      .onConflict((conflict) =>
        conflict.columns(['project_id', 'session_id']).doUpdateSet({ due_at: new Date() }),
      )
      .execute();
    await test.processingWorker.runUntilIdle();
    expect((await usage(owner, orgId)).totals).toMatchObject({ calls: calls.length, callSeconds });

    // OTLP: the spans stored, once (a resend of the same span ids is not counted), and log records.
    const now = BigInt(Date.now()) * 1_000_000n;
    const spans = (count: number) => ({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
          scopeSpans: [
            {
              spans: Array.from({ length: count }, (_, index) => ({
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: `eee19b7ec3c1b1${String(index).padStart(2, '0')}`,
                name: `GET /items/${index}`,
                kind: 2,
                startTimeUnixNano: String(now),
                endTimeUnixNano: String(now + 5_000_000n),
              })),
            },
          ],
        },
      ],
    });
    const otlp = (url: string, payload: unknown) =>
      test.app.inject({
        method: 'POST',
        url,
        headers: { ...web.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    expect((await otlp('/v1/otlp/traces', spans(3))).statusCode).toBe(200);
    expect((await otlp('/v1/otlp/traces', spans(5))).statusCode).toBe(200);
    const logs = {
      resourceLogs: [
        {
          resource: { attributes: [] },
          scopeLogs: [{ logRecords: [{ timeUnixNano: String(now), body: { stringValue: 'hello' } }] }],
        },
      ],
    };
    expect((await otlp('/v1/otlp/logs', logs)).statusCode).toBe(200);
    expect((await usage(owner, orgId)).totals).toMatchObject({ spans: 5, logRecords: 1 });

    // AI tokens: each call of the model adds its input and output tokens; at the cap the model is not called.
    const access = {
      allowed: true,
      organizationId: orgId,
      projectId: web.project.id,
      feature: 'summary',
    } as const;
    await recordUsage(database, access as Parameters<typeof recordUsage>[1], {
      inputTokens: 120,
      outputTokens: 30,
    });
    expect((await usage(owner, orgId)).totals.aiTokens).toBe(150);
    await database
      .insertInto('ai_settings')
      .values({
        organization_id: orgId,
        enabled: true,
        monthly_token_cap: null,
        features: JSON.stringify(['summary']),
      })
      .execute();
    const configured = { ai: { baseUrl: 'http://127.0.0.1:9/v1', model: 'llama3' } } as Parameters<
      typeof modelAccess
    >[1];
    const request = { organizationId: orgId, projectId: web.project.id, feature: 'summary' } as const;
    expect((await modelAccess(database, configured, request)).allowed).toBe(true);
    expectJson(await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { aiTokens: 150 }, as(owner)), 200);
    const capped = await modelAccess(database, configured, request);
    expect(capped).toMatchObject({ allowed: false, capped: true });
    expect((capped as { reason: string }).reason).toMatch(/monthly cap of AI tokens \(150 of 150/);
    expect((await usage(owner, orgId)).month).toMatchObject({ aiPaused: true, recordingPaused: false });
  });

  it('refuses bad ranges, other organizations, members changing caps and tokens', async () => {
    const { owner, orgId, web } = await organization('Guarded');
    const bad = async (query: string) =>
      expectJson(await send('GET', `/v1/orgs/${orgId}/usage${query}`, undefined, as(owner)), 400);
    expect((await bad('?from=2026-11-10&to=2026-11-01')).error).toMatch(/after/);
    expect((await bad('?from=2020-01-01&to=2026-11-01')).error).toMatch(/366 days/);
    expect((await bad('?from=yesterday')).code).toBe('invalid');
    const stranger = await organization('Stranger');
    expect((await send('GET', `/v1/orgs/${orgId}/usage`, undefined, as(stranger.owner))).statusCode).toBe(
      404,
    );
    // A project's API token is not a person of the organization.
    const byToken = await test.app.inject({
      method: 'GET',
      url: `/v1/orgs/${orgId}/usage`,
      headers: web.headers,
    });
    expect([401, 403]).toContain(byToken.statusCode);

    await addPerson(test.database.database, test.configuration.appUrl, {
      email: `guarded-member-${engine}@example.com`,
      password: PASSWORD,
      organizationId: orgId,
      role: 'member',
      actor: 'test',
    });
    const member = await login(`guarded-member-${engine}@example.com`, PASSWORD);
    expect((await usage(member, orgId)).organizationId).toBe(orgId);
    const refused = await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { sessions: 10 }, as(member));
    expect(refused.statusCode).toBe(403);
    expect(expectJson(await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, {}, as(owner)), 400).code).toBe(
      'invalid',
    );
    expect(
      (await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { sessions: -1 }, as(owner))).statusCode,
    ).toBe(400);
    const untouched = await test.database.database
      .selectFrom('usage_caps')
      .selectAll()
      .where('organization_id', '=', orgId)
      .execute();
    expect(untouched).toEqual([]);
  });

  it('at a cap: usage.threshold at 80 % and 100 % once, recording paused, new sessions refused, started ones finish', async () => {
    const { owner, orgId, web, mobile } = await organization('Capped');
    const started = [newSessionId(), newSessionId(), newSessionId(), newSessionId()];
    for (const sessionId of started) expect((await ingest(web, sessionId, 0)).statusCode).toBe(200);

    const month = expectJson(
      await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { sessions: 5, aiTokens: 1000 }, as(owner)),
      200,
    );
    expect(month).toMatchObject({
      caps: { sessions: 5, storedBytes: null, aiTokens: 1000 },
      ownCaps: { sessions: 5, storedBytes: null, aiTokens: 1000 },
      usage: { sessions: { used: 4, cap: 5, percent: 80 } },
      recordingPaused: false,
    });
    const audit = await test.database.database
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('organization_id', '=', orgId)
      .where('action', '=', 'usage.caps_changed')
      .execute();
    expect(audit).toHaveLength(1);

    const fifth = newSessionId();
    expect((await ingest(mobile, fifth, 0)).statusCode).toBe(200);
    // The usage page reads the caps afresh, as the minute's sweep does: each threshold is sent once.
    await usage(owner, orgId);
    await usage(owner, orgId);
    const inbox = async (project: TestProject) =>
      (
        expectJson(await test.app.inject({ method: 'GET', url: '/v1/inbox', headers: project.headers }), 200)
          .items as Json[]
      ).filter((item) => item.type === 'usage.threshold');
    for (const project of [web, mobile]) {
      const events = await inbox(project);
      expect(events.map((event) => [event.severity, event.data.counts])).toEqual([
        ['high', { used: 5, cap: 5, percent: 100 }],
        ['medium', { used: 4, cap: 5, percent: 80 }],
      ]);
      expect(events[0].data.summary).toMatch(/New sessions are not recorded/);
      expect(events[0].data.links.usage).toBe(`${test.configuration.appUrl}/orgs/${orgId}/usage`);
    }

    // The SDK is told not to start; a new session is refused and nothing of it is stored.
    const config = expectJson(
      await test.app.inject({ method: 'GET', url: `/v1/config?key=${web.projectKey}` }),
      200,
    );
    expect(config.recording.paused).toBe(true);
    const before = await acknowledged(orgId);
    const refused = await ingest(web, newSessionId(), 0);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-service-quota']).toBe('sessions');
    expect(expectJson(refused, 429)).toEqual({
      error: expect.stringMatching(/monthly cap of sessions/),
      code: 'invalid',
    });
    expect(await acknowledged(orgId)).toEqual(before);
    // A session started before the cap goes on; a resend of an acknowledged chunk is still a duplicate.
    expect((await ingest(web, started[0] as string, 1)).statusCode).toBe(200);
    expect(expectJson(await ingest(mobile, fifth, 0), 200).duplicate).toBe(true);

    // A raised cap: recording resumes, and the thresholds of the new cap are armed again.
    const raised = expectJson(
      await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { sessions: 100 }, as(owner)),
      200,
    );
    expect(raised).toMatchObject({
      recordingPaused: false,
      usage: { sessions: { used: 5, cap: 100, percent: 5 } },
    });
    const resumed = expectJson(
      await test.app.inject({ method: 'GET', url: `/v1/config?key=${mobile.projectKey}` }),
      200,
    );
    expect(resumed.recording.paused).toBe(false);
    expect((await ingest(web, newSessionId(), 0)).statusCode).toBe(200);
    const thresholds = await test.database.database
      .selectFrom('usage_thresholds')
      .select(['metric', 'percent'])
      .where('organization_id', '=', orgId)
      .execute();
    expect(thresholds).toEqual([]);
  });

  it('the sweep evaluates every organization with usage or caps this month, each threshold once', async () => {
    const { owner, orgId, web } = await organization('Swept');
    for (let index = 0; index < 8; index += 1)
      expect((await ingest(web, newSessionId(), 0)).statusCode).toBe(200);
    // The caps' row exists before the caps bite: no threshold until the plan's caps come in.
    expectJson(await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { aiTokens: 10 }, as(owner)), 200);
    const reached: Json[] = [];
    const gate = createUsageGate({
      database: test.database.database,
      planCaps: async (organizationId) =>
        organizationId === orgId ? { sessions: 10, storedBytes: null, aiTokens: null } : NO_CAPS,
      onThreshold: async (_transaction, organizationId, threshold) => {
        if (organizationId === orgId) reached.push(threshold);
      },
      log: test.app.log,
    });
    expect(await gate.sweep()).toBeGreaterThanOrEqual(1);
    expect(reached).toEqual([{ metric: 'sessions', percent: 80, used: 8, cap: 10 }]);
    await gate.sweep();
    expect(reached).toHaveLength(1);
    for (let index = 0; index < 2; index += 1)
      expect((await ingest(web, newSessionId(), 0)).statusCode).toBe(200);
    await gate.sweep();
    expect(reached.map((threshold) => threshold.percent)).toEqual([80, 100]);
    expect((await gate.state(orgId)).refusedSince).toBeInstanceOf(Date);
  });

  it('lets sessions started before the cap finish for an hour, not longer', async () => {
    const { owner, orgId, web } = await organization('Grace');
    const early = newSessionId();
    expect((await ingest(web, early, 0)).statusCode).toBe(200);
    expectJson(await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { sessions: 1 }, as(owner)), 200);
    let now = new Date(Date.now() + 1000);
    const gate = createUsageGate({
      database: test.database.database,
      planCaps: async () => NO_CAPS,
      onThreshold: async () => {},
      log: test.app.log,
      now: () => now,
      ttlMs: 0,
    });
    const project = web.project;
    expect(await gate.admitChunk(project, early)).toEqual({ admitted: true });
    expect(await gate.admitChunk(project, newSessionId())).toMatchObject({
      admitted: false,
      metric: 'sessions',
    });
    now = new Date(now.getTime() + 59 * 60_000);
    expect(await gate.admitChunk(project, early)).toEqual({ admitted: true });
    now = new Date(now.getTime() + 2 * 60_000);
    expect(await gate.admitChunk(project, early)).toMatchObject({ admitted: false, metric: 'sessions' });
    // The plan's caps apply too: the lower of the two.
    const planned = createUsageGate({
      database: test.database.database,
      planCaps: async () => ({ sessions: null, storedBytes: 10, aiTokens: null }),
      onThreshold: async () => {},
      log: test.app.log,
    });
    expect((await planned.state(orgId)).metrics.storedBytes).toMatchObject({
      cap: 10,
      percent: expect.any(Number),
    });
    expect(await planned.admitChunk(project, newSessionId())).toMatchObject({ admitted: false });
  });
});

describe.each(ENGINES)("the plan's caps on %s", (engine) => {
  // The server's wiring of the plan into the caps: none on a deployment with neither a license nor
  // a billing provider; the license's plan once one is installed; the free plan's when it is forged.
  const issuer = generateKeyPairSync('ed25519');
  const stranger = generateKeyPairSync('ed25519');
  let test: TestApp;
  const { send, signedIn } = accountsClient(
    () => test,
    () => smtp,
    engine === 'pglite' ? '10.73' : '10.74',
  );
  beforeAll(async () => {
    test = await createTestApp(
      engine,
      { logger: false },
      { SVC_SMTP_URL: smtp.url },
      { licensePublicKey: issuer.publicKey },
    );
  });
  afterAll(async () => {
    await test?.close();
  });

  it('none without a license; the license plan; the free plan for a forged one', async () => {
    const owner = await signedIn(`plan-owner-${engine}@example.com`);
    const as = { cookie: owner.cookie, csrf: owner.csrf };
    const orgId = expectJson(await send('POST', '/v1/orgs', { name: 'Planned' }, as), 201).id as string;
    const caps = async () =>
      expectJson(await send('GET', `/v1/orgs/${orgId}/usage`, undefined, as), 200).month.caps;
    expect(await caps()).toEqual(NO_CAPS);

    const payload = {
      id: 'lic_01USAGE',
      organization: 'Planned Ltd',
      plan: 'team' as const,
      issuedAt: new Date(Date.now() - 86_400_000).toISOString(),
      expiresAt: new Date(Date.now() + 300 * 86_400_000).toISOString(),
    };
    await storeLicense(
      test.database.database,
      { text: signLicense(payload, issuer.privateKey), license: payload },
      'test',
    );
    const team = planLimits('team');
    expect(await caps()).toEqual({
      sessions: team.sessionsPerMonth,
      storedBytes: team.storedBytes,
      aiTokens: team.aiTokensPerMonth,
    });
    // The organization's own cap below the plan's wins.
    expectJson(await send('PATCH', `/v1/orgs/${orgId}/billing/caps`, { sessions: 10 }, as), 200);
    expect((await caps()).sessions).toBe(10);

    const forged = { ...payload, id: 'lic_01FORGED', plan: 'enterprise' as const };
    await storeLicense(
      test.database.database,
      { text: signLicense(forged, stranger.privateKey), license: forged },
      'test',
    );
    const free = planLimits('free');
    expect(await caps()).toEqual({
      sessions: 10,
      storedBytes: free.storedBytes,
      aiTokens: free.aiTokensPerMonth,
    });
  });
});
