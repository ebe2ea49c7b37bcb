import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { context, type Span, SpanKind, trace } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { SimpleSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, type Json } from '../../../test/http.ts';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import { sweepExpiredTelemetry } from './index.ts';
import { encodeExportResponse } from './otlp.ts';

// OTLP/HTTP intake with the real OpenTelemetry SDK and its exporters (protobuf and JSON) against
// the server listening on 127.0.0.1, and a session's trace trees read back.

describe.each(ENGINES)('OpenTelemetry traces on %s', (engine) => {
  let test: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    test = await createTestApp(engine);
    baseUrl = await test.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await test?.close();
  });

  /** A recorded session of the project (one chunk through ingest). */
  async function recordSession(project: TestProject): Promise<string> {
    const sessionId = newSessionId();
    const chunk = rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId, seq: 0 });
    expectJson(await postChunk(test.app, project.projectKey, chunk), 200);
    return sessionId;
  }

  /**
   * A request of the browser's session served by two services: `web` (root, with the session's
   * id) calls `api`, which queries a database and fails; spans exported by `exporter`.
   */
  async function traceRequest(exporter: SpanExporter, sessionId: string | null, route: string) {
    const providers = ['web', 'api'].map(
      (service) =>
        new TracerProvider({
          resource: resourceFromAttributes({ 'service.name': service }),
          spanProcessors: [new SimpleSpanProcessor({ exporter })],
        }),
    );
    const [web, api] = providers.map((provider) => provider.getTracer('test')) as [
      ReturnType<TracerProvider['getTracer']>,
      ReturnType<TracerProvider['getTracer']>,
    ];
    const root = web.startSpan(`GET ${route}`, {
      kind: SpanKind.SERVER,
      attributes: {
        ...(sessionId === null ? {} : { 'session.id': sessionId }),
        'http.route': route,
        'http.response.status_code': 500,
      },
    });
    const inside = (span: Span) => trace.setSpan(context.active(), span);
    const call = api.startSpan('POST /v1/orders', { kind: SpanKind.SERVER }, inside(root));
    const query = api.startSpan(
      'SELECT orders',
      { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql' } },
      inside(call),
    );
    query.end();
    call.setStatus({ code: 2, message: 'order service failed' });
    call.end();
    root.end();
    for (const provider of providers) await provider.forceFlush();
    await exporter.forceFlush?.();
    return root.spanContext().traceId;
  }

  async function readTraces(project: TestProject, sessionId: string) {
    return expectJson(
      await test.app.inject({ url: `/v1/sessions/${sessionId}/traces`, headers: project.headers }),
      200,
    ).items as Json[];
  }

  async function countRows(projectId: string) {
    const spans = await test.database.database
      .selectFrom('spans')
      .select((expression) => expression.fn.countAll<number>().as('count'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    const logs = await test.database.database
      .selectFrom('log_records')
      .select((expression) => expression.fn.countAll<number>().as('count'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return { spans: Number(spans.count), logs: Number(logs.count) };
  }

  it('takes protobuf (gzipped) and JSON from the SDK exporters and answers the session trace trees', async () => {
    const project = test.first;
    const sessionId = await recordSession(project);
    const headers = { authorization: project.headers.authorization };
    const protobufTrace = await traceRequest(
      new ProtobufTraceExporter({ url: `${baseUrl}/v1/otlp/traces`, headers, compression: 'gzip' as never }),
      sessionId,
      '/checkout',
    );
    const jsonTrace = await traceRequest(
      new JsonTraceExporter({ url: `${baseUrl}/v1/otlp/traces`, headers }),
      sessionId,
      '/cart',
    );

    // Logs of the second request, through the JSON logs exporter, joined by trace id.
    const logExporter = new OTLPLogExporter({ url: `${baseUrl}/v1/otlp/logs`, headers });
    const loggerProvider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'api' }),
      processors: [new SimpleLogRecordProcessor({ exporter: logExporter })],
    });
    const logger = loggerProvider.getLogger('test');
    const spanContext = { traceId: jsonTrace, spanId: '00f067aa0ba902b7', traceFlags: 1 };
    logger.emit({
      body: 'order 42 rejected',
      severityNumber: 17,
      severityText: 'ERROR',
      attributes: { 'order.id': 42 },
      context: trace.setSpanContext(context.active(), spanContext),
    });
    // The simple processor's flush does not wait for an export already started: the exporter's does.
    await loggerProvider.forceFlush();
    await logExporter.forceFlush();

    const traces = await readTraces(project, sessionId);
    expect(traces.map((tree) => tree.traceId).sort()).toEqual([protobufTrace, jsonTrace].sort());
    for (const tree of traces) {
      expect(tree.spanCount).toBe(3);
      expect(tree.errorCount).toBe(1);
      expect(tree.roots).toHaveLength(1);
      const [root] = tree.roots;
      expect(root).toMatchObject({ service: 'web', kind: 'server', status: { code: 'unset' } });
      expect(root.attributes).toMatchObject({ 'session.id': sessionId, 'http.response.status_code': 500 });
      expect(root.children).toHaveLength(1);
      const [call] = root.children;
      expect(call).toMatchObject({
        name: 'POST /v1/orders',
        service: 'api',
        status: { code: 'error', message: 'order service failed' },
      });
      expect(call.children).toMatchObject([
        { name: 'SELECT orders', kind: 'client', attributes: { 'db.system': 'postgresql' }, children: [] },
      ]);
      expect(root.durationMs).toBeGreaterThanOrEqual(call.durationMs);
    }
    const cart = traces.find((tree) => tree.traceId === jsonTrace);
    expect(cart.roots[0].name).toBe('GET /cart');
    expect(cart.logs).toMatchObject([
      {
        body: 'order 42 rejected',
        severityNumber: 17,
        severityText: 'ERROR',
        service: 'api',
        spanId: '00f067aa0ba902b7',
        attributes: { 'order.id': 42 },
      },
    ]);
    expect(traces.find((tree) => tree.traceId === protobufTrace).logs).toEqual([]);
  });

  it("links the traces of the session's requests by their trace ids, without session.id on any span", async () => {
    const project = await test.createProject('Linked');
    const other = await test.createProject('Linked elsewhere');
    const headers = { authorization: project.headers.authorization };
    const exporter = () => new ProtobufTraceExporter({ url: `${baseUrl}/v1/otlp/traces`, headers });
    const checkout = await traceRequest(exporter(), null, '/checkout');
    const cart = await traceRequest(exporter(), null, '/cart');
    await traceRequest(exporter(), null, '/unrelated');

    // The browser recorded both requests with the trace ids it sent in `traceparent`.
    const sessionId = newSessionId();
    const fixture = JSON.parse(Buffer.from(await validChunkFixture('recording-seq-0')).toString('utf8'));
    const t = fixture.events[0].t as number;
    const request = (traceId: string, offset: number, status: number) => ({
      t: t + offset,
      type: 'request',
      initiator: 'fetch',
      method: 'POST',
      url: 'https://api.example.com/orders',
      status,
      durationMs: 40,
      traceId,
    });
    const events = [...fixture.events, request(cart, 20, 500), request(checkout, 10, 200)];
    const chunk = rewriteChunk(await validChunkFixture('recording-seq-0'), { sessionId, seq: 0, events });
    expectJson(await postChunk(test.app, project.projectKey, chunk), 200);
    // Another project's session sent the same trace id: its spans are not ours to read.
    const foreign = newSessionId();
    const foreignChunk = rewriteChunk(await validChunkFixture('recording-seq-0'), {
      sessionId: foreign,
      seq: 0,
      events: [...fixture.events, request(checkout, 10, 200)],
    });
    expectJson(await postChunk(test.app, other.projectKey, foreignChunk), 200);

    const traces = await readTraces(project, sessionId);
    // In the order the session's requests were made.
    expect(traces.map((tree) => tree.traceId)).toEqual([checkout, cart]);
    expect(traces.map((tree) => tree.roots[0].name)).toEqual(['GET /checkout', 'GET /cart']);
    expect(traces[0].spanCount).toBe(3);
    expect(await readTraces(other, foreign)).toEqual([]);
  });

  it('refuses garbage with 400 and stores nothing', async () => {
    const project = await test.createProject('Garbage');
    const send = (body: Buffer | string, type: string, extra: Record<string, string> = {}) =>
      test.app.inject({
        method: 'POST',
        url: '/v1/otlp/traces',
        headers: { ...project.headers, 'content-type': type, ...extra },
        payload: body,
      });
    const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    for (const response of [
      await send(garbage, 'application/x-protobuf'),
      await send('{"resourceSpans": [', 'application/json'),
      await send('{"resourceSpans": 3}', 'application/json'),
      await send('[1, 2]', 'application/json'),
      await send(Buffer.from('not gzip'), 'application/json', { 'content-encoding': 'gzip' }),
    ]) {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({ code: 'invalid', error: expect.any(String) });
    }
    expect((await send('{}', 'text/plain')).statusCode).toBe(415);
    expect((await send('{}', 'application/json', { 'content-encoding': 'br' })).statusCode).toBe(415);
    expect(await countRows(project.project.id)).toEqual({ spans: 0, logs: 0 });
  });

  it('refuses bodies over the limits: declared, streamed without a length, and gunzipped', async () => {
    const project = await test.createProject('Limits');
    const headers = { ...project.headers, 'content-type': 'application/x-protobuf' };
    const declared = await test.app.inject({
      method: 'POST',
      url: '/v1/otlp/traces',
      headers,
      payload: Buffer.alloc(4 * 1024 * 1024 + 1),
    });
    expect(declared.statusCode).toBe(413);

    // Chunked, no Content-Length: counted while it streams, refused once past 4 MiB.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = httpRequest(`${baseUrl}/v1/otlp/traces`, { method: 'POST', headers }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      outgoing.on('error', reject);
      const piece = Buffer.alloc(256 * 1024);
      let sent = 0;
      const write = () => {
        while (sent < 8 * 1024 * 1024) {
          sent += piece.length;
          if (!outgoing.write(piece)) return void outgoing.once('drain', write);
        }
        outgoing.end();
      };
      write();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ code: 'invalid' });

    const bomb = await test.app.inject({
      method: 'POST',
      url: '/v1/otlp/traces',
      headers: { ...headers, 'content-encoding': 'gzip' },
      payload: gzipSync(Buffer.alloc(17 * 1024 * 1024)),
    });
    expect(bomb.statusCode, bomb.body).toBe(413);
    expect(await countRows(project.project.id)).toEqual({ spans: 0, logs: 0 });
  });

  it('answers partial success with the rejected count, in JSON and in protobuf', async () => {
    const project = await test.createProject('Partial');
    const sessionId = await recordSession(project);
    const span = (spanId: string) => ({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId,
      name: 'GET /',
      kind: 2,
      startTimeUnixNano: '1764064800000000000',
      endTimeUnixNano: '1764064800250000000',
      attributes: [{ key: 'session.id', value: { stringValue: sessionId } }],
    });
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'web' } }] },
          scopeSpans: [{ spans: [span('eee19b7ec3c1b174'), span('not-hex'), span('0000000000000000')] }],
        },
      ],
    };
    const json = await test.app.inject({
      method: 'POST',
      url: '/v1/otlp/traces',
      headers: { ...project.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(JSON.stringify(request)),
    });
    expect(json.statusCode, json.body).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.json()).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: expect.stringContaining('invalid spanId') },
    });
    const [tree] = await readTraces(project, sessionId);
    expect(tree).toMatchObject({
      spanCount: 1,
      durationMs: 250,
      roots: [{ durationMs: 250, service: 'web' }],
    });

    // The same refusal in protobuf: a span id of 7 bytes.
    const protobuf = await test.app.inject({
      method: 'POST',
      url: '/v1/otlp/logs',
      headers: { ...project.headers, 'content-type': 'application/x-protobuf' },
      payload: encodeLogsRequest(),
    });
    expect(protobuf.statusCode, protobuf.body).toBe(200);
    expect(protobuf.headers['content-type']).toBe('application/x-protobuf');
    expect(protobuf.rawPayload).toEqual(
      encodeExportResponse('logs', 'protobuf', 1, 'invalid spanId "00112233445566"'),
    );
    expect(await countRows(project.project.id)).toEqual({ spans: 1, logs: 1 });
  });

  it('needs an API token with otlp:write, and reads traces only of the caller project sessions', async () => {
    const project = await test.createProject('Scopes');
    const sessionId = await recordSession(project);
    const reader = await createApiTokenRecord(test.database.database, {
      projectId: project.project.id,
      name: 'reader',
      scopes: ['sessions:read'],
    });
    const post = (headers: Record<string, string>) =>
      test.app.inject({
        method: 'POST',
        url: '/v1/otlp/traces',
        headers: { 'content-type': 'application/json', ...headers },
        payload: '{}',
      });
    expect((await post({})).statusCode).toBe(401);
    const refused = await post({ authorization: `Bearer ${reader.token}` });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toContain('otlp:write');
    const writer = await createApiTokenRecord(test.database.database, {
      projectId: project.project.id,
      name: 'collector',
      scopes: ['otlp:write'],
    });
    const accepted = await post({ authorization: `Bearer ${writer.token}` });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toEqual({});
    // The writer cannot read; another project's token gets 404 for this session.
    expect(
      (
        await test.app.inject({
          url: `/v1/sessions/${sessionId}/traces`,
          headers: { authorization: `Bearer ${writer.token}` },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await test.app.inject({ url: `/v1/sessions/${sessionId}/traces`, headers: test.first.headers }))
        .statusCode,
    ).toBe(404);
    expect(await readTraces(project, sessionId)).toEqual([]);
  });

  it("deletes spans and logs of days past the project's retention setting", async () => {
    const project = await test.createProject('Retention');
    const nanoseconds = (iso: string) => (BigInt(Date.parse(iso)) * 1_000_000n).toString();
    const traceId = '5b8efff798038103d269b633813fc60c';
    const spans = [
      ['2026-11-12T12:00:00Z', 'eee19b7ec3c1b174'],
      ['2026-11-20T12:00:00Z', 'eee19b7ec3c1b175'],
    ].map(([iso, spanId]) => ({
      traceId,
      spanId,
      name: 'job',
      startTimeUnixNano: nanoseconds(iso as string),
      endTimeUnixNano: nanoseconds(iso as string),
    }));
    const logRecords = spans.map((span) => ({ timeUnixNano: span.startTimeUnixNano, traceId }));
    const post = (signal: string, body: unknown) =>
      test.app.inject({
        method: 'POST',
        url: `/v1/otlp/${signal}`,
        headers: { ...project.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    expectJson(await post('traces', { resourceSpans: [{ scopeSpans: [{ spans }] }] }), 200);
    expectJson(await post('logs', { resourceLogs: [{ scopeLogs: [{ logRecords }] }] }), 200);
    const now = new Date('2026-11-25T10:00:00Z');

    // The default, 14 days, keeps both days (everything before 2026-11-11 goes).
    await sweepExpiredTelemetry(test.database.database, now);
    expect(await countRows(project.project.id)).toEqual({ spans: 2, logs: 2 });

    const patched = await test.app.inject({
      method: 'PATCH',
      url: `/v1/projects/${project.project.id}`,
      headers: project.headers,
      payload: { settings: { traces: { retentionDays: 7 } } },
    });
    expect(expectJson(patched, 200).settings.traces).toEqual({ retentionDays: 7 });
    const deleted = await sweepExpiredTelemetry(test.database.database, now);
    expect(deleted.spans).toBeGreaterThanOrEqual(1);
    expect(await countRows(project.project.id)).toEqual({ spans: 1, logs: 1 });
    const [kept] = await test.database.database
      .selectFrom('spans')
      .select('span_id')
      .where('project_id', '=', project.project.id)
      .execute();
    expect(kept?.span_id).toBe('eee19b7ec3c1b175');
  });
  it('sweeps a large backlog in bounded batches, from the worker a server process runs', async () => {
    const project = await test.createProject('Retention backlog');
    const old = (index: number) => ({
      traceId: 'aa'.repeat(16),
      spanId: (index + 1).toString(16).padStart(16, '0'),
      name: 'old',
      startTimeUnixNano: '1761998400000000000', // 2025-11-01
      endTimeUnixNano: '1761998400000000000',
    });
    const spans = [
      ...Array.from({ length: 25 }, (_, index) => old(index)),
      {
        ...old(99),
        spanId: 'ffffffffffffff01',
        startTimeUnixNano: '1795600800000000000',
        endTimeUnixNano: '1795600800000000000',
      },
    ];
    const logRecords = spans.map((span) => ({ timeUnixNano: span.startTimeUnixNano, traceId: span.traceId }));
    for (const [signal, body] of [
      ['traces', { resourceSpans: [{ scopeSpans: [{ spans }] }] }],
      ['logs', { resourceLogs: [{ scopeLogs: [{ logRecords }] }] }],
    ] as const) {
      const response = await test.app.inject({
        method: 'POST',
        url: `/v1/otlp/${signal}`,
        headers: { ...project.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      expectJson(response, 200);
    }
    const now = new Date('2026-11-25T12:00:00Z');

    // One sweep deletes one batch of each table, and says more are due.
    const first = await sweepExpiredTelemetry(test.database.database, now, 10);
    expect(first).toMatchObject({ more: true });
    expect(await countRows(project.project.id)).toEqual({ spans: 16, logs: 16 });

    // Sweeping again while more are due (as the privacy module's retention worker does) ends it.
    let sweeps = 1;
    while ((await sweepExpiredTelemetry(test.database.database, now, 10)).more) sweeps += 1;
    expect(sweeps).toBeGreaterThanOrEqual(2);
    expect(await countRows(project.project.id)).toEqual({ spans: 1, logs: 1 });
  });
});

/**
 * An ExportLogsServiceRequest by hand (protobuf wire format): one valid record and one whose
 * span id has 7 bytes.
 */
function encodeLogsRequest(): Buffer {
  const field = (number: number, bytes: Buffer) =>
    Buffer.concat([Buffer.from([(number << 3) | 2]), varint(bytes.length), bytes]);
  const fixed64 = (number: number, value: bigint) => {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(value);
    return Buffer.concat([Buffer.from([(number << 3) | 1]), bytes]);
  };
  const time = BigInt(Date.parse('2026-11-25T09:00:00Z')) * 1_000_000n;
  const record = (spanId: string) =>
    Buffer.concat([
      fixed64(1, time),
      field(9, Buffer.from('5b8efff798038103d269b633813fc60c', 'hex')),
      field(10, Buffer.from(spanId, 'hex')),
    ]);
  const scopeLogs = Buffer.concat([field(2, record('eee19b7ec3c1b174')), field(2, record('00112233445566'))]);
  const resourceLogs = field(2, scopeLogs);
  return field(1, resourceLogs);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
