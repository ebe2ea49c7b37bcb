import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest, type WireItem } from '../../../test/call-timelines.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { chunksOf, sessionEvents, T0 } from '../insights/insights.fixture.ts';

// Transcripts, explanations, summaries and reproductions through the API, on both engines: the
// recorded Chromium calls (the protocol's call fixture) and a shop session, through POST
// /v1/ingest and the processing job, read back as a client would.

const require = createRequire(import.meta.url);
const callChunk = readFileSync(require.resolve('@svc/protocol/fixtures/valid/Chunk/call.json'));
const callSessionId = (JSON.parse(callChunk.toString('utf8')) as { sessionId: string }).sessionId;

/** The shop session, with an error after a failed request and a gap. */
function shopEvents(): WireItem[] {
  return [
    ...sessionEvents(),
    {
      t: T0 + 12_500,
      type: 'request',
      initiator: 'fetch',
      method: 'POST',
      url: 'https://shop.test/api/orders',
      status: 502,
      durationMs: 80,
    },
    {
      t: T0 + 13_000,
      type: 'error',
      name: 'TypeError',
      message: "Cannot read properties of undefined (reading 'id')",
      source: 'onerror',
      stack:
        "TypeError: Cannot read properties of undefined (reading 'id')\n    at submit (https://shop.test/assets/app.js:1:99)",
    },
    { t: T0 + 14_000, type: 'gap', fromT: T0 + 14_000, toT: T0 + 20_000, reason: 'offline' },
  ];
}

describe.each(ENGINES)('analysis on %s', (engine) => {
  let test: TestApp;
  let other: TestProject;
  const shopSessionId = newSessionId();
  beforeAll(async () => {
    test = await createTestApp(engine);
    other = await test.createProject('other');
    await ingest(test.app, test.first.projectKey, callChunk);
    for (const chunk of chunksOf(shopSessionId, shopEvents(), [6, 12]))
      await ingest(test.app, test.first.projectKey, chunk);
    await test.processingWorker.runUntilIdle();
  });
  afterAll(async () => {
    await test?.close();
  });
  const { request, get, ok } = apiClient(() => test);

  it('tells the recorded calls: each call, its path and its findings, with evidence ids', async () => {
    const transcript = await get(`/v1/sessions/${callSessionId}/transcript`);
    const calls = (await get(`/v1/sessions/${callSessionId}/calls?limit=50`)).items as Json[];
    const issues = (await get(`/v1/sessions/${callSessionId}/issues`)).items as Json[];
    expect(calls.length).toBe(8);
    const ids = new Set((transcript.entries as Json[]).map((entry) => entry.id));
    for (const call of calls) {
      const entry = (transcript.entries as Json[]).find((candidate) => candidate.id === `call:${call.id}`);
      expect(entry?.text).toContain(`Call ${call.pc} (${call.id}): quality ${call.qualityScore}/100`);
      expect(entry?.text).toContain(call.relayed ? 'relayed through TURN' : 'direct path');
    }
    const findings = issues.filter((issue) => issue.kind === 'finding');
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings)
      expect(ids.has(`finding:${finding.pc ?? ''}:${finding.name}`), JSON.stringify(finding)).toBe(true);
    expect(transcript.text).toMatch(/media path relay ↔ relay over udp, relayed through TURN/);
    expect(transcript.text).toMatch(
      /\[finding:pc_[0-9A-Z]+:webrtc_relay_fallback\] Finding webrtc_relay_fallback \(info\) in call pc_/,
    );
    expect(transcript.header[0]).toBe(
      `Session ${callSessionId}, started ${transcript.startedAt}, lasted ${transcript.header[0].split('lasted ')[1]}`,
    );
  });

  it('tells the shop session: pages, named clicks, a rage click, the failed request, the error and the gap', async () => {
    const transcript = await get(`/v1/sessions/${shopSessionId}/transcript`);
    const lines = (transcript.text as string).split('\n');
    expect(lines).toContain('00:00 [0.0] Opened /products?ref=mail (route /products)');
    expect(lines).toContain('00:01 [0.2] Clicked button "Buy now" (#buy)');
    expect(transcript.text).toMatch(
      /^00:02 \[0\.\d+\] Rage-clicked button \[masked text\] \(main > button\.ghost\): 3 clicks in 400 ms$/m,
    );
    expect(lines.some((line) => line.includes('Went to /orders/123 (route /orders/:id)'))).toBe(true);
    expect(lines.some((line) => line.includes('Clicked button (#pay)'))).toBe(true);
    expect(lines.some((line) => line.includes('Request POST /api/orders failed: HTTP 502 after 80 ms'))).toBe(
      true,
    );
    expect(
      lines.some((line) =>
        line.includes("Error TypeError: Cannot read properties of undefined (reading 'id') (onerror)"),
      ),
    ).toBe(true);
    expect(lines).toContain('      at submit (https://shop.test/assets/app.js:1:99)');
    expect(lines.some((line) => line.includes('Nothing recorded for 6 s: the device was offline'))).toBe(
      true,
    );
    expect(transcript.text).not.toMatch(/\*\*\*/);

    const text = await request('GET', `/v1/sessions/${shopSessionId}/transcript?format=text`);
    expect(text.statusCode).toBe(200);
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.body).toBe(transcript.text);
  });

  it('explains the session: the error after the failed request first, then the request and the rage click', async () => {
    const { explanation, ai } = await ok('POST', `/v1/sessions/${shopSessionId}/explain`);
    expect(ai).toEqual({ used: false, reason: expect.stringMatching(/^No model is configured/) });
    const kinds = (explanation.problems as Json[]).map((problem) => problem.kind);
    // Most severe first; among equals, the surest cause, then the earliest.
    expect(kinds).toEqual(['error', 'rage_click', 'failed_request']);
    const [error, , failed] = explanation.problems as Json[];
    expect(error.causes.map((cause: Json) => cause.id)).toEqual(['after_failed_request', 'missing_data']);
    expect(error.evidenceIds).toEqual([error.id, failed.id]);
    expect(failed.causes[0].id).toBe('server_error');
    expect(explanation.summary).toMatch(
      /^3 problems in this session \(1 high, 2 medium\)\. The most severe: TypeError/,
    );
  });

  it('explains one call, and a call the session does not have is a 404', async () => {
    const calls = (await get(`/v1/sessions/${callSessionId}/calls?limit=50`)).items as Json[];
    const relayed = calls.find((call) => call.relayed) as Json;
    const { explanation } = await ok('POST', `/v1/sessions/${callSessionId}/explain`, { callId: relayed.id });
    expect(explanation.subject).toEqual({ type: 'call', id: relayed.id, sessionId: callSessionId });
    const fallback = (explanation.problems as Json[]).find(
      (problem) => problem.kind === 'webrtc_relay_fallback',
    );
    expect(fallback.evidenceIds).toContain(`call:${relayed.id}`);
    expect(fallback.causes.map((cause: Json) => cause.id)).toContain('nat_traversal');
    const missing = await request('POST', `/v1/sessions/${callSessionId}/explain`, {
      callId: 'call_01JAAAAAAAAAAAAAAAAAAAAAAA',
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: expect.stringContaining('No call'), code: 'not_found' });
    const invalid = await request('POST', `/v1/sessions/${callSessionId}/explain`, { callId: 'nope' });
    expect(invalid.statusCode).toBe(400);
  });

  it('summarizes a session without a model and says so', async () => {
    const summary = await get(`/v1/sessions/${shopSessionId}/summary`);
    expect(summary.counts).toEqual({
      pages: 2,
      clicks: 5,
      errors: 1,
      failedRequests: 1,
      calls: 0,
      findings: 0,
    });
    expect(summary.routes).toEqual(['/products', '/orders/:id']);
    expect(summary.summary).toMatch(
      /^A 14 s session in Chrome on Linux: 2 pages \(\/products, \/orders\/:id\), 5 clicks\. 3 problems/,
    );
    expect(summary.problems[0]).toMatchObject({ kind: 'error', severity: 'high' });
    expect(summary.ai.used).toBe(false);
  });

  it('explains issue clusters over their occurrences, and drafts no patch without a model', async () => {
    const clusters = (await get('/v1/issues?limit=50')).items as Json[];
    const relay = clusters.find((cluster) => cluster.kind === 'webrtc_relay_fallback') as Json;
    const { explanation, ai } = await ok('POST', `/v1/issues/${relay.id}/explain`);
    expect(ai.used).toBe(false);
    expect(explanation.occurrences).toBe(relay.occurrences);
    expect(explanation.sessions).toBe(1);
    expect(explanation.breakdown.browser[0]).toMatchObject({
      value: 'Chrome',
      occurrences: relay.occurrences,
      share: 1,
    });
    expect(explanation.causes.length).toBeGreaterThan(0);
    expect(explanation.latest.sessionId).toBe(callSessionId);
    expect(explanation.latest.evidenceId).toMatch(/^finding:pc_[0-9A-Z]+:webrtc_relay_fallback$/);
    expect(explanation.exampleSessions).toEqual([callSessionId]);

    const error = clusters.find((cluster) => cluster.kind === 'error') as Json;
    const errorExplanation = (await ok('POST', `/v1/issues/${error.id}/explain`)).explanation;
    expect(errorExplanation.causes[0].id).toBe('missing_data');
    expect(errorExplanation.latest).toMatchObject({
      sessionId: shopSessionId,
      evidence: { name: 'TypeError', class: 'null_access' },
    });
    const transcript = await get(`/v1/sessions/${shopSessionId}/transcript`);
    expect(
      (transcript.entries as Json[]).some(
        (entry) => entry.id === errorExplanation.latest.evidenceId && entry.kind === 'error',
      ),
    ).toBe(true);

    const draft = await ok('POST', `/v1/issues/${error.id}/draft-pr`);
    expect(draft).toMatchObject({
      issueId: error.id,
      diff: null,
      error: { sessionId: shopSessionId, name: 'TypeError' },
    });
    expect(draft.reason).toMatch(/upload the source maps/);
    const noSource = await ok('POST', `/v1/issues/${relay.id}/draft-pr`);
    expect(noSource).toMatchObject({
      diff: null,
      reason: 'A call-quality issue has no source code to patch.',
    });
  });

  it('reproduces the shop session as a Playwright script', async () => {
    const reproduction = await ok('POST', `/v1/sessions/${shopSessionId}/repro`);
    expect(reproduction.startUrl).toBe('https://shop.test/products');
    expect(reproduction.script).toContain('await page.goto(new URL("/products?ref=mail", BASE_URL).href);');
    expect(reproduction.script).toContain(
      'await page.getByRole("button", { name: "Buy now", exact: true }).click();',
    );
    expect(reproduction.script).toContain('await page.locator("#pay").click();');
    expect(reproduction.steps[0]).toBe('1. Open https://shop.test/products?ref=mail');
  });

  it("answers 404 for another project's session or issue, and for none", async () => {
    const clusters = (await get('/v1/issues?limit=1')).items as Json[];
    for (const [method, url] of [
      ['GET', `/v1/sessions/${shopSessionId}/transcript`],
      ['GET', `/v1/sessions/${shopSessionId}/summary`],
      ['POST', `/v1/sessions/${shopSessionId}/explain`],
      ['POST', `/v1/sessions/${shopSessionId}/repro`],
      ['POST', `/v1/issues/${clusters[0].id}/explain`],
      ['POST', `/v1/issues/${clusters[0].id}/draft-pr`],
    ] as const) {
      const answer = await request(method, url, undefined, other);
      expect(answer.statusCode, url).toBe(404);
      expect(answer.json().code).toBe('not_found');
    }
    expect((await request('GET', `/v1/sessions/${newSessionId()}/transcript`)).statusCode).toBe(404);
  });
});
