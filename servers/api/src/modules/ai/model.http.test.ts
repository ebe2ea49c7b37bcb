import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkBytes, ingest, sessionMeta, type WireItem } from '../../../test/call-timelines.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { type OpenAiStandIn, startOpenAiStandIn } from '../../../test/openai-stand-in.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import { draftPatch, extractDiff } from './draft.ts';
import { createExplainJobHandlers } from './explain-jobs.ts';
import { createAiJobWorker } from './job-worker.ts';
import { modelAccess } from './model.ts';

// The optional model through the API, on both engines, with a stand-in for the hosted model (a
// real HTTP server speaking OpenAI's Chat Completions format, recording the exact bytes it
// receives): prose grounded on the transcript with evidence ids, nothing masked and nothing
// secret in what was sent, tokens counted per organization, the cap enforced, a failing model
// leaving the deterministic answer, feedback stored.

const T0 = Date.UTC(2026, 10, 21, 9, 0, 0);
/** What the session holds in the clear that must never reach the model. */
const SECRETS = [
  'ada@lovelace.example',
  '4242 4242 4242 4242',
  'sk_live_51HqLyjWDarjtT1zdp7dc',
  'tok_abcdef123456',
  'AKIAIOSFODNN7EXAMPLE',
];

const element = (
  id: number,
  tagName: string,
  attributes: Record<string, string>,
  childNodes: unknown[] = [],
) => ({
  type: 2,
  id,
  tagName,
  attributes,
  childNodes,
});

/** A checkout whose text is masked by the SDK, with secrets an app put in the clear elsewhere. */
function events(): WireItem[] {
  const snapshot = {
    type: 0,
    id: 1,
    childNodes: [
      element(2, 'html', {}, [
        element(3, 'body', {}, [
          element(4, 'p', { id: 'owner' }, [{ type: 3, id: 5, textContent: '*** ********' }]),
          element(6, 'input', { id: 'card', type: 'text', 'aria-label': 'Card number' }),
          element(7, 'button', { id: 'pay', class: 'svc-unmask' }, [{ type: 3, id: 8, textContent: 'Pay' }]),
        ]),
      ]),
    ],
  };
  const rrweb = (t: number, data: unknown) => ({ t, type: 'rrweb', data }) as WireItem;
  return [
    {
      t: T0,
      type: 'nav',
      url: 'https://shop.test/checkout?token=tok_abcdef123456&step=2',
      load: true,
    } as WireItem,
    rrweb(T0 + 1, { type: 2, data: { node: snapshot, initialOffset: { top: 0, left: 0 } } }),
    rrweb(T0 + 1_000, { type: 3, data: { source: 5, id: 6, text: '**** **** **** ****' } }),
    rrweb(T0 + 2_000, { type: 3, data: { source: 2, type: 2, id: 8, x: 10, y: 10 } }),
    {
      t: T0 + 2_100,
      type: 'request',
      initiator: 'fetch',
      method: 'POST',
      url: 'https://api.shop.test/v1/charge?api_key=AKIAIOSFODNN7EXAMPLE',
      status: 402,
      durationMs: 90,
    } as WireItem,
    {
      t: T0 + 2_200,
      type: 'error',
      name: 'Error',
      message: 'Payment failed for ada@lovelace.example with card 4242 4242 4242 4242',
      source: 'onerror',
    } as WireItem,
    {
      t: T0 + 2_300,
      type: 'custom',
      name: 'coupon_applied',
      props: { coupon: 'sk_live_51HqLyjWDarjtT1zdp7dc', plan: 'pro' },
    } as WireItem,
  ];
}

/** The server-sent events of an answer, in order. */
function serverSentEvents(body: string): Array<{ event: string; data: Json }> {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? 'null';
      return { event, data: JSON.parse(data) };
    });
}

async function ingestSession(test: TestApp, project: TestProject): Promise<string> {
  const sessionId = newSessionId();
  await ingest(
    test.app,
    project.projectKey,
    chunkBytes({
      sessionId,
      seq: 0,
      sentAt: T0 + 3_000,
      meta: { ...sessionMeta(T0, { userId: 'ada@lovelace.example' }), url: 'https://shop.test/checkout' },
      events: events(),
    }),
  );
  await test.processingWorker.runUntilIdle();
  return sessionId;
}

describe.each(ENGINES)('the model on %s', (engine) => {
  let model: OpenAiStandIn;
  let test: TestApp;
  let strict: TestProject;
  let sessionId: string;
  let strictSessionId: string;
  beforeAll(async () => {
    model = await startOpenAiStandIn();
    test = await createTestApp(
      engine,
      { logger: false },
      {
        SVC_AI_BASE_URL: model.baseUrl,
        SVC_AI_MODEL: 'stand-in-model',
        SVC_AI_API_KEY: 'sk-operator-key-0123456789',
      },
    );
    strict = await test.createProject('strict');
    await test.database.database
      .updateTable('projects')
      .set({ settings: sql`jsonb_set(settings, '{privacy,mode}', '"strict"')` })
      .where('id', '=', strict.project.id)
      .execute();
    sessionId = await ingestSession(test, test.first);
    strictSessionId = await ingestSession(test, strict);
  });
  afterAll(async () => {
    await test?.close();
    await model?.close();
  });
  const { request, get, ok } = apiClient(() => test);

  async function setAi(
    organizationId: string,
    settings: { enabled: boolean; cap?: number | null; features?: string[] },
  ) {
    const values = {
      enabled: settings.enabled,
      monthly_token_cap: settings.cap ?? null,
      features: JSON.stringify(settings.features ?? ['summary', 'explain', 'search', 'chat', 'draft_pr']),
    };
    await test.database.database
      .insertInto('ai_settings')
      .values({ organization_id: organizationId, ...values })
      .onConflict((conflict) => conflict.column('organization_id').doUpdateSet(values))
      .execute();
  }

  it('answers the deterministic result while the organization has AI off, and sends nothing', async () => {
    const summary = await get(`/v1/sessions/${sessionId}/summary`);
    expect(summary.ai).toEqual({
      used: false,
      reason: expect.stringMatching(/^AI is off for this organization/),
    });
    expect(summary.summary).toMatch(/session/);
    expect(model.received).toEqual([]);
  });

  it('adds prose grounded on the transcript, quoting its evidence ids; what was sent holds nothing masked or secret', async () => {
    await setAi(test.first.project.organization_id, { enabled: true });
    const transcript = await get(`/v1/sessions/${sessionId}/transcript`);
    const errorEntry = (transcript.entries as Json[]).find((entry) => entry.kind === 'error');
    model.answer(() => ({
      text: `The payment failed with HTTP 402 [0.4] and the page threw [${errorEntry.id}]; see also [9.99].`,
      usage: { prompt: 1_200, completion: 80 },
    }));
    const summary = await get(`/v1/sessions/${sessionId}/summary`);
    expect(summary.ai).toEqual({
      used: true,
      model: 'stand-in-model',
      text: `The payment failed with HTTP 402 [0.4] and the page threw [${errorEntry.id}]; see also [9.99].`,
      // [9.99] is no entry of the transcript: not evidence.
      evidenceIds: ['0.4', errorEntry.id],
    });
    expect(model.received).toHaveLength(1);
    const sent = model.received[0] as Json;
    expect(sent.headers.authorization).toBe('Bearer sk-operator-key-0123456789');
    expect(sent.body.model).toBe('stand-in-model');
    for (const secret of SECRETS) expect(sent.raw).not.toContain(secret);
    expect(sent.raw).not.toContain('4242424242424242');
    expect(sent.raw).not.toMatch(/\*{3}/);
    const prompt = (sent.body.messages as Json[]).map((message) => message.content).join('\n');
    expect(prompt).toContain('Error Error: Payment failed for [email] with card [card] (onerror)');
    expect(prompt).toContain('Opened /checkout?token=[token]&step=2');
    // Ingest already kept no query parameter of the request (the project allows none).
    expect(prompt).toContain('Request POST https://api.shop.test/v1/charge failed: HTTP 402');
    expect(prompt).toContain('Event "coupon_applied" {"coupon":"[token]","plan":"pro"}');
    expect(prompt).toContain('[token]');
    expect(prompt).toContain('User [email]');
    expect(prompt).toContain('Typed into textbox "Card number" (#card) (value not recorded)');
  });

  it('sends no query strings and no event properties in strict privacy mode', async () => {
    await setAi(strict.project.organization_id, { enabled: true });
    model.answer(() => ({ text: 'Strict.' }));
    const before = model.received.length;
    await ok('POST', `/v1/sessions/${strictSessionId}/explain`, undefined, strict);
    const sent = model.received[before] as Json;
    const prompt = (sent.body.messages as Json[]).map((message) => message.content).join('\n');
    expect(prompt).toContain('Opened /checkout (route /checkout)');
    expect(prompt).not.toContain('step=2');
    expect(prompt).toMatch(/Event "coupon_applied"\n/);
    expect(prompt).not.toContain('plan');
    for (const secret of SECRETS) expect(sent.raw).not.toContain(secret);
  });

  it('counts tokens per organization, project and feature, and enforces the monthly cap with a clear reason', async () => {
    const usage = await get('/v1/ai/usage');
    expect(usage).toMatchObject({
      organizationId: test.first.project.organization_id,
      organization: { requests: 1, inputTokens: 1_200, outputTokens: 80, totalTokens: 1_280 },
      project: { requests: 1, inputTokens: 1_200, outputTokens: 80 },
      byFeature: [{ feature: 'summary', requests: 1, inputTokens: 1_200, outputTokens: 80 }],
      cap: null,
      remaining: null,
    });
    // The strict project's explanation counted in its own organization only.
    expect((await get('/v1/ai/usage', strict)).byFeature).toEqual([
      { feature: 'explain', requests: 1, inputTokens: 100, outputTokens: 20 },
    ]);

    await setAi(test.first.project.organization_id, { enabled: true, cap: 1_280 });
    const before = model.received.length;
    const capped = await ok('POST', `/v1/sessions/${sessionId}/explain`);
    expect(capped.ai).toEqual({
      used: false,
      reason: expect.stringMatching(
        /^The organization used its monthly AI token cap \(1280 of 1280 tokens in \d{4}-\d{2}\)/,
      ),
    });
    expect(capped.explanation.problems.length).toBeGreaterThan(0);
    expect(model.received.length).toBe(before);
    expect((await get('/v1/ai/usage')).remaining).toBe(0);
    await setAi(test.first.project.organization_id, { enabled: true, cap: null });
  });

  it('keeps to the features the organization allows', async () => {
    await setAi(test.first.project.organization_id, { enabled: true, features: ['explain'] });
    const summary = await get(`/v1/sessions/${sessionId}/summary`);
    expect(summary.ai.reason).toMatch(/do not let the model answer "summary"/);
    await setAi(test.first.project.organization_id, { enabled: true });
  });

  it('answers the deterministic result, saying why, when the model fails', async () => {
    model.answer(() => ({ status: 500 }));
    const answer = await request('POST', `/v1/sessions/${sessionId}/explain`);
    expect(answer.statusCode).toBe(200);
    expect(answer.json().ai).toEqual({
      used: false,
      reason: expect.stringMatching(/^The model did not answer/),
    });
    expect(answer.json().explanation.problems.map((problem: Json) => problem.kind)).toContain('error');
  });

  it('stores ratings of answers', async () => {
    const created = await request('POST', '/v1/ai/feedback', {
      feature: 'summary',
      subjectId: sessionId,
      rating: 'up',
      comment: 'Spot on',
      model: 'stand-in-model',
    });
    expect(created.statusCode).toBe(201);
    const row = await test.database.database
      .selectFrom('ai_feedback')
      .selectAll()
      .where('id', '=', created.json().id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      project_id: test.first.project.id,
      feature: 'summary',
      subject_id: sessionId,
      rating: 'up',
      comment: 'Spot on',
    });
    const invalid = await request('POST', '/v1/ai/feedback', {
      feature: 'summary',
      subjectId: sessionId,
      rating: 5,
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('invalid');
  });

  it('explains asynchronously as an AI job, keeps the answer as its result and announces it with ai.deep_analysis_ready', async () => {
    const channel = await ok('POST', '/v1/notifications/channels', {
      type: 'webhook',
      name: 'analysis',
      url: 'http://127.0.0.1:9/hooks',
    });
    await ok('POST', '/v1/notifications/rules', {
      name: 'analyses',
      channelIds: [channel.channel.id],
      source: { type: 'ai', events: ['ai.deep_analysis_ready'] },
    });
    model.answer(() => ({ text: 'The charge was refused [0.4].', usage: { prompt: 500, completion: 40 } }));
    // The server's AI job worker, as services.ts makes it (its scheduler left out).
    const worker = createAiJobWorker({
      database: test.database.database,
      handlers: createExplainJobHandlers({
        ...test.processingDependencies,
        configuration: test.configuration,
      }),
      log: test.app.log,
      schedule: false,
    });
    const queued = await request('POST', `/v1/sessions/${sessionId}/explain`, { async: true });
    expect(queued.statusCode).toBe(202);
    const job = queued.json().job;
    expect(job).toMatchObject({ kind: 'explain_session', status: 'queued' });
    expect((await get(`/v1/ai/jobs/${job.id}`)).status).toBe('queued');
    await worker.runUntilIdle();
    const done = await get(`/v1/ai/jobs/${job.id}`);
    expect(done.status).toBe('succeeded');
    expect(done.result.explanation.subject).toEqual({ type: 'session', id: sessionId, sessionId });
    expect(done.result.ai).toEqual({
      used: true,
      model: 'stand-in-model',
      text: 'The charge was refused [0.4].',
      evidenceIds: ['0.4'],
    });
    const event = await test.database.database
      .selectFrom('notification_events')
      .selectAll()
      .where('project_id', '=', test.first.project.id)
      .where('id', '=', done.result.eventId)
      .executeTakeFirstOrThrow();
    expect(event.type).toBe('ai.deep_analysis_ready');
    const payload = JSON.parse(event.payload);
    expect(payload.data).toMatchObject({
      title: `Explanation ready: session ${sessionId}`,
      severity: 'info',
      analysis: { jobId: job.id, subject: { type: 'session', id: sessionId }, modelUsed: true },
      links: { session: `${test.configuration.appUrl}/sessions/${sessionId}` },
    });
    expect(event.payload).not.toContain('ada@lovelace.example');
    const deliveries = await get('/v1/notifications/deliveries?eventType=ai.deep_analysis_ready');
    expect(deliveries.items).toHaveLength(1);

    const clusters = (await get('/v1/issues?limit=10')).items as Json[];
    const issueJob = await request('POST', `/v1/issues/${clusters[0].id}/explain`, { async: true });
    expect(issueJob.statusCode).toBe(202);
    await worker.runUntilIdle();
    const issueDone = await get(`/v1/ai/jobs/${issueJob.json().job.id}`);
    expect(issueDone).toMatchObject({ kind: 'explain_issue', status: 'succeeded' });
    expect(issueDone.result.explanation.subject).toEqual({ type: 'issue', id: clusters[0].id });
  });

  it('streams chat answers as server-sent events, calling read-only tools over the project; all of it scrubbed', async () => {
    const clusters = (await get('/v1/issues?limit=10')).items as Json[];
    model.answer((sent) =>
      (sent.body.messages as Json[]).some((message) => message.role === 'tool')
        ? {
            text: `There are ${clusters.length} issues, the worst [${clusters[0].id}].`,
            usage: { prompt: 300, completion: 30 },
          }
        : {
            toolCalls: [{ name: 'list_issues', arguments: { limit: 5 } }],
            usage: { prompt: 200, completion: 10 },
          },
    );
    const before = model.received.length;
    const usageBefore = (await get('/v1/ai/usage')).byFeature.find((row: Json) => row.feature === 'chat');
    expect(usageBefore).toBeUndefined();
    const answer = await request('POST', '/v1/ai/chat', {
      messages: [{ role: 'user', content: 'Which issues do we have? Reply to ada@lovelace.example' }],
      sessionId,
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = serverSentEvents(answer.body);
    expect(events.map((event) => event.event).filter((name) => name !== 'text')).toEqual([
      'tool_call',
      'tool_result',
      'done',
    ]);
    expect(events[0]?.data).toMatchObject({ name: 'list_issues', input: { limit: 5 } });
    const listed = events[1]?.data.output.issues as Json[];
    expect(listed.map((issue) => issue.id).sort()).toEqual(clusters.map((cluster) => cluster.id).sort());
    expect(JSON.stringify(listed)).not.toContain('ada@lovelace.example');
    const text = events
      .filter((event) => event.event === 'text')
      .map((event) => event.data.delta)
      .join('');
    expect(text).toBe(`There are ${clusters.length} issues, the worst [${clusters[0].id}].`);
    expect(events.at(-1)?.data).toEqual({
      model: 'stand-in-model',
      usage: { inputTokens: 500, outputTokens: 40 },
    });

    // Two model calls: the question with the tools offered, then the tool's result.
    const sent = model.received.slice(before) as Json[];
    expect(sent).toHaveLength(2);
    expect(sent[0].body.stream).toBe(true);
    expect((sent[0].body.tools as Json[]).map((offered) => offered.function.name).sort()).toEqual([
      'calls_overview',
      'explain_call',
      'explain_issue',
      'explain_session',
      'get_call',
      'get_issue',
      'get_session_transcript',
      'list_calls',
      'list_issues',
    ]);
    for (const request of sent) for (const secret of SECRETS) expect(request.raw).not.toContain(secret);
    expect(sent[0].raw).toContain('Reply to [email]');
    expect(sent[0].raw).toContain(`The person is looking at session ${sessionId}`);
    const toolMessage = (sent[1].body.messages as Json[]).find((message) => message.role === 'tool');
    expect(toolMessage.content).toContain(clusters[0].id);
    expect((await get('/v1/ai/usage')).byFeature.find((row: Json) => row.feature === 'chat')).toEqual({
      feature: 'chat',
      requests: 1,
      inputTokens: 500,
      outputTokens: 40,
    });
  });

  it("offers the chat only the tools the token's scopes allow", async () => {
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'chat only',
      scopes: ['ai:write', 'calls:read'],
    });
    model.answer(() => ({ text: 'Calls only.' }));
    const before = model.received.length;
    const answer = await request(
      'POST',
      '/v1/ai/chat',
      { messages: [{ role: 'user', content: 'Hello' }] },
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(answer.statusCode).toBe(200);
    const offered = ((model.received[before] as Json).body.tools as Json[])
      .map((entry) => entry.function.name)
      .sort();
    expect(offered).toEqual(['calls_overview', 'get_call', 'list_calls']);
  });

  it('says in the stream when no model may answer, and refuses a capped organization with 429', async () => {
    const quiet = await test.createProject('quiet');
    const off = await request(
      'POST',
      '/v1/ai/chat',
      { messages: [{ role: 'user', content: 'Hello' }] },
      quiet,
    );
    expect(off.statusCode).toBe(200);
    expect(serverSentEvents(off.body)).toEqual([
      { event: 'notice', data: { reason: expect.stringMatching(/^AI is off for this organization/) } },
      { event: 'done', data: { model: null } },
    ]);
    await setAi(quiet.project.organization_id, { enabled: true, cap: 0 });
    const capped = await request(
      'POST',
      '/v1/ai/chat',
      { messages: [{ role: 'user', content: 'Hello' }] },
      quiet,
    );
    expect(capped.statusCode).toBe(429);
    expect(capped.json()).toEqual({ error: expect.stringMatching(/monthly AI token cap/), code: 'invalid' });
    expect(Number(capped.headers['retry-after'])).toBeGreaterThan(0);
    const invalid = await request('POST', '/v1/ai/chat', {
      messages: [{ role: 'assistant', content: 'Hi' }],
    });
    expect(invalid.statusCode).toBe(400);
  });

  it('turns a question into the structured search by tool calling, and searches its words without a model', async () => {
    model.answer(() => ({
      toolCalls: [
        { name: 'search', arguments: { q: 'payment', types: ['session'], filters: { browser: 'Chrome' } } },
      ],
      usage: { prompt: 150, completion: 25 },
    }));
    const before = model.received.length;
    const answer = await ok('POST', '/v1/search', {
      question: 'Chrome sessions where the payment failed for ada@lovelace.example',
      limit: 5,
    });
    expect(answer.interpreted).toEqual({
      query: { q: 'payment', types: ['session'], filters: { browser: 'Chrome' }, limit: 5 },
      ai: { used: true, model: 'stand-in-model' },
    });
    expect(answer.items.map((item: Json) => item.id)).toContain(sessionId);
    expect(answer.items.every((item: Json) => item.type === 'session')).toBe(true);
    const sent = model.received[before] as Json;
    expect(sent.body.tool_choice).toEqual({ type: 'function', function: { name: 'search' } });
    expect((sent.body.tools as Json[]).map((offered) => offered.function.name)).toEqual(['search']);
    expect(sent.raw).toContain('payment failed for [email]');
    expect(sent.raw).not.toContain('ada@lovelace.example');

    // A query the schema refuses: the question's words are searched instead.
    model.answer(() => ({ toolCalls: [{ name: 'search', arguments: { types: ['everything'] } }] }));
    const refused = await ok('POST', '/v1/search', { question: 'payment' });
    expect(refused.interpreted).toEqual({
      query: { q: 'payment' },
      ai: { used: true, model: 'stand-in-model', reason: expect.stringMatching(/not valid/) },
    });

    const quiet = await test.createProject('quiet search');
    const words = await ok('POST', '/v1/search', { question: 'payment' }, quiet);
    expect(words.interpreted).toEqual({
      query: { q: 'payment' },
      ai: { used: false, reason: expect.stringMatching(/^AI is off for this organization/) },
    });
    expect(words.items).toEqual([]);
  });

  it('drafts a patch as a unified diff from mapped frames and their source', async () => {
    const diff = [
      '--- src/checkout.ts',
      '+++ src/checkout.ts',
      '@@ -6,3 +6,3 @@',
      ' export function pay(cart: Cart) {',
      "-  if (cart.items.length === 0) throw new TypeError('cart has no items');",
      "+  if (cart.items.length === 0) return { ok: false, reason: 'empty' };",
      ' }',
    ].join('\n');
    model.answer(() => ({
      text: `\`\`\`diff\n${diff}\n\`\`\`\nReturn instead of throwing.`,
      usage: { prompt: 300, completion: 60 },
    }));
    const access = await modelAccess(test.database.database, test.configuration, {
      organizationId: test.first.project.organization_id,
      projectId: test.first.project.id,
      feature: 'draft_pr',
    });
    if (!access.allowed) throw new Error(access.reason);
    const before = model.received.length;
    const draft = await draftPatch(test.database.database, access, {
      error: {
        name: 'TypeError',
        message: 'cart has no items for ada@lovelace.example',
        frames: [
          {
            mapped: true,
            function: 'pay',
            file: 'src/checkout.ts',
            line: 7,
            column: 15,
            context: {
              before: ['export function pay(cart: Cart) {'],
              line: "  if (cart.items.length === 0) throw new TypeError('cart has no items');",
              after: ['}'],
            },
          },
        ],
      },
      log: { warn: () => {} },
    });
    expect(draft.diff).toBe(`${diff}\n`);
    const sent = (model.received[before] as Json).body.messages
      .map((message: Json) => message.content)
      .join('\n');
    expect(sent).toContain('at pay (src/checkout.ts:7:15)');
    expect(sent).toContain(
      "    7 >   if (cart.items.length === 0) throw new TypeError('cart has no items');",
    );
    expect(sent).toContain('TypeError: cart has no items for [email]');
    expect(extractDiff('No idea.')).toBeNull();
    expect(extractDiff('```diff\n--- a\n+++ a\nnot a hunk\n```')).toBeNull();
  });
});

describe('configuration of the model', () => {
  it('needs the base URL and the model together', async () => {
    const { loadConfiguration } = await import('../../platform/config.ts');
    expect(() => loadConfiguration({ SVC_AI_BASE_URL: 'http://127.0.0.1:1/v1' })).toThrow(
      /SVC_AI_BASE_URL and SVC_AI_MODEL/,
    );
    expect(() => loadConfiguration({ SVC_AI_BASE_URL: 'ftp://x', SVC_AI_MODEL: 'm' })).toThrow(
      /SVC_AI_BASE_URL/,
    );
    expect(
      loadConfiguration({ SVC_AI_BASE_URL: 'http://127.0.0.1:11434/v1/', SVC_AI_MODEL: 'llama3' }).ai,
    ).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama3',
    });
    expect(loadConfiguration({}).ai).toBeUndefined();
  });
});
