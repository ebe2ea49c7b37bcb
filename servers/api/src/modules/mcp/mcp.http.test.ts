import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest, type WireItem } from '../../../test/call-timelines.ts';
import type { Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { chunksOf, sessionEvents, T0 } from '../insights/insights.fixture.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';

// The MCP endpoint over real HTTP with the MCP SDK's own client, on both engines: the tools a
// token's scopes allow, each tool on the recorded Chromium calls and a shop session, another
// project's token seeing nothing, no token refused.

const require = createRequire(import.meta.url);
const callChunk = readFileSync(require.resolve('@svc/protocol/fixtures/valid/Chunk/call.json'));
const callSessionId = (JSON.parse(callChunk.toString('utf8')) as { sessionId: string }).sessionId;

const ALL_TOOLS = [
  'calls_overview',
  'explain_call',
  'explain_issue',
  'explain_session',
  'get_call',
  'get_issue',
  'get_session_transcript',
  'list_calls',
  'list_issues',
  'search_sessions',
];

describe.each(ENGINES)('MCP on %s', (engine) => {
  let test: TestApp;
  let other: TestProject;
  let base: string;
  const shopSessionId = newSessionId();
  const clients: Client[] = [];

  beforeAll(async () => {
    test = await createTestApp(engine);
    other = await test.createProject('other');
    await ingest(test.app, test.first.projectKey, callChunk);
    const events: WireItem[] = [
      ...sessionEvents(),
      {
        t: T0 + 13_000,
        type: 'error',
        name: 'TypeError',
        message: 'cart is undefined for ada@example.com',
        source: 'onerror',
      },
    ];
    for (const chunk of chunksOf(shopSessionId, events, [6, 12]))
      await ingest(test.app, test.first.projectKey, chunk);
    await test.processingWorker.runUntilIdle();
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await test?.close();
  });

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'svc-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const tokenOf = (project: TestProject) => project.headers.authorization.replace('Bearer ', '');

  /** A tool's answer: its JSON, or (an error of the protocol, such as invalid arguments) its text. */
  async function call(
    client: Client,
    name: string,
    args: Record<string, unknown> = {},
  ): Promise<{ json: Json; isError: boolean }> {
    const result = (await client.callTool({ name, arguments: args })) as {
      content: Array<{ type: string; text: string }>;
      isError?: boolean;
    };
    const text = result.content[0]?.text ?? 'null';
    let json: Json;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { json, isError: result.isError === true };
  }

  it('lists the read-only tools, each with its input schema', async () => {
    const client = await connect(tokenOf(test.first));
    expect(client.getServerVersion()).toMatchObject({ name: 'svc' });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    const transcript = tools.find((tool) => tool.name === 'get_session_transcript');
    expect(transcript?.inputSchema.required).toEqual(['sessionId']);
  });

  it('answers each tool over the project, scrubbed', async () => {
    const client = await connect(tokenOf(test.first));
    const found = await call(client, 'search_sessions', { q: 'TypeError' });
    expect(found.json.items.map((item: Json) => item.id)).toEqual([shopSessionId]);

    const transcript = await call(client, 'get_session_transcript', { sessionId: shopSessionId });
    expect(transcript.json.transcript).toContain('Clicked button "Buy now" (#buy)');
    expect(transcript.json.transcript).toContain('Error TypeError: cart is undefined for [email] (onerror)');
    expect(JSON.stringify(transcript.json)).not.toContain('ada@example.com');

    const session = await call(client, 'explain_session', { sessionId: shopSessionId });
    expect(session.json.problems.map((problem: Json) => problem.kind)).toContain('error');

    const calls = await call(client, 'list_calls', { limit: 50 });
    expect(calls.json.calls).toHaveLength(8);
    const relayed = (calls.json.calls as Json[]).find((entry) => entry.relayed);
    const detail = await call(client, 'get_call', { callId: relayed.id });
    expect(detail.json.call.id).toBe(relayed.id);
    expect(detail.json.findings.map((finding: Json) => finding.kind)).toContain('webrtc_relay_fallback');
    const explained = await call(client, 'explain_call', { callId: relayed.id });
    expect(explained.json.subject).toEqual({ type: 'call', id: relayed.id, sessionId: callSessionId });

    const overview = await call(client, 'calls_overview', { from: '2020-01-01T00:00:00Z' });
    expect(overview.json.calls).toBe(8);

    const issues = await call(client, 'list_issues', {});
    const relay = (issues.json.issues as Json[]).find((issue) => issue.kind === 'webrtc_relay_fallback');
    const error = (issues.json.issues as Json[]).find((issue) => issue.kind === 'error');
    expect(relay.occurrences).toBeGreaterThan(0);
    const issue = await call(client, 'get_issue', { issueId: error.id });
    expect(issue.json).toMatchObject({
      id: error.id,
      kind: 'error',
      latestError: { sessionId: shopSessionId, name: 'TypeError' },
    });
    expect(issue.json.latestError.message).toBe('cart is undefined for [email]');
    const why = await call(client, 'explain_issue', { issueId: relay.id });
    expect(why.json.causes.length).toBeGreaterThan(0);

    const invalid = await call(client, 'get_call', { callId: 'nope' });
    expect(invalid.isError).toBe(true);
    expect(invalid.json).toMatch(/Invalid arguments|callId/);
  });

  it("shows another project's token nothing of this project", async () => {
    const client = await connect(tokenOf(other));
    expect((await call(client, 'list_calls')).json.calls).toEqual([]);
    expect((await call(client, 'list_issues')).json.issues).toEqual([]);
    expect((await call(client, 'search_sessions', { q: 'TypeError' })).json.items).toEqual([]);
    const transcript = await call(client, 'get_session_transcript', { sessionId: shopSessionId });
    expect(transcript).toEqual({
      json: { error: `No session ${shopSessionId} in this project` },
      isError: true,
    });
    const calls = await call(client, 'get_call', { callId: 'call_01JAAAAAAAAAAAAAAAAAAAAAAA' });
    expect(calls.isError).toBe(true);
  });

  it('offers a token the tools its scopes allow', async () => {
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'calls reader',
      scopes: ['calls:read'],
    });
    const client = await connect(token);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'calls_overview',
      'get_call',
      'list_calls',
    ]);
    const refused = await call(client, 'list_issues');
    expect(refused).toEqual({ json: expect.stringMatching(/Tool list_issues not found/), isError: true });
  });

  it('refuses a request without a token, or with a token of no read scope, saying how to authenticate', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify(initialize),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await anonymous.json()).toEqual({ error: expect.any(String), code: 'unauthorized' });
    const wrong = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: 'Bearer svc_notatoken' },
      body: JSON.stringify(initialize),
    });
    expect(wrong.status).toBe(401);
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: 'settings only',
      scopes: ['settings:read'],
    });
    const forbidden = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}` },
      body: JSON.stringify(initialize),
    });
    expect(forbidden.status).toBe(403);
    await expect(connect('svc_notatoken')).rejects.toThrow();
    expect(
      (await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${tokenOf(test.first)}` } })).status,
    ).toBe(405);
  });
});
