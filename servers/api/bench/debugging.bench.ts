/**
 * `pnpm bench`, debugging: symbolication and OpenTelemetry intake, on the embedded store (PGlite)
 * and on PostgreSQL. The whole app runs in this process; requests go through `app.inject`, one at
 * a time (no sockets: what is measured is the server's work, not a client's).
 *
 * 1. Symbolication of a 30-frame stack thrown by a real minified esbuild bundle (30 functions
 *    calling each other, plus ~BENCH_BUNDLE_LINES lines of other code so the map is the size of
 *    an app's: about 1 MB): **cold**, a new symbolicator each time (the map is found in the
 *    database, read from the blob store and parsed), and **warm**, the same symbolicator (the
 *    parsed map in its cache); then `POST /v1/symbolicate` with the cache warm, next to
 *    `GET /v1/projects/current` (one authenticated one-row read) as the baseline of a request.
 *    BENCH_SYMBOLICATE_COLD and BENCH_SYMBOLICATE_WARM stacks.
 * 2. OTLP intake: `POST /v1/otlp/traces` in protobuf, BENCH_OTLP_REQUESTS requests of
 *    BENCH_OTLP_SPANS spans (5 attributes each, the size an OpenTelemetry SDK's batch processor
 *    sends), spans per second and bytes per second, next to BENCH_INGEST_REQUESTS
 *    `POST /v1/ingest` of recording chunks (json+deflate) in the same run, both with
 *    BENCH_CONCURRENCY requests in flight (as many clients would): the ratio of their bytes per
 *    second says what a span costs against what a replay costs.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: the counts above, BENCH_ONLY (comma list of embedded, postgres),
 * SVC_BENCH_DATABASE_URL (use that PostgreSQL instead of starting one).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import vm from 'node:vm';
import { build } from 'esbuild';
import type { FastifyInstance } from 'fastify';
import protobuf from 'protobufjs';
import { buildApp } from '../src/app.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import { createApiTokenRecord } from '../src/modules/projects/api-tokens.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { createSymbolicator } from '../src/modules/sourcemaps/index.ts';
import { stackFrames } from '../src/modules/sourcemaps/symbolicate.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { createChunkBodies } from './chunks.ts';
import { percentile } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';

const count = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback));
const COLD = count('BENCH_SYMBOLICATE_COLD', 50);
const WARM = count('BENCH_SYMBOLICATE_WARM', 2000);
const BUNDLE_LINES = count('BENCH_BUNDLE_LINES', 20_000);
const OTLP_REQUESTS = count('BENCH_OTLP_REQUESTS', 400);
const OTLP_SPANS = count('BENCH_OTLP_SPANS', 512);
const INGEST_REQUESTS = count('BENCH_INGEST_REQUESTS', 2000);
const CONCURRENCY = count('BENCH_CONCURRENCY', 16);
const STORES = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
const FRAMES = 30;
const BUNDLE_URL = 'https://shop.example.com/static/js/main.js';

type Store = 'embedded' | 'postgres';
const STORE_LABEL: Record<Store, string> = { embedded: 'embedded store (PGlite)', postgres: 'PostgreSQL' };
const table = new Map<string, Partial<Record<Store, string>>>();
const record = (row: string, store: Store, value: string) => {
  table.set(row, { ...table.get(row), [store]: value });
  console.log(`  ${row}: ${value}`);
};
const ms = (value: number) => (value >= 10 ? value.toFixed(1) : value.toFixed(2));
const times = (value: number, baseline: number) => `${(value / baseline).toFixed(1)}x`;
const median = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
const p95 = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.95,
  );

const work = await mkdtemp(join(tmpdir(), 'svc-debugging-bench-'));
let postgres: BenchPostgres | undefined;

/** The bundle: f0 … f29 calling each other, the last throwing, among BUNDLE_LINES other lines. */
async function buildBundle() {
  const chain = Array.from(
    { length: FRAMES },
    (_, index) =>
      `export function step${index}(order: { id: number; lines?: number[] }): number {\n  const total = ${index} + (order.lines?.length ?? 0);\n  ${index === FRAMES - 1 ? "if (order.lines === undefined) throw new TypeError('order has no lines');\n  return total;" : `return step${index + 1}(order) + total;`}\n}`,
  ).join('\n\n');
  const filler = Array.from(
    { length: BUNDLE_LINES / 4 },
    (_, index) =>
      `export function helper${index}(value: number): string {\n  const scaled = value * ${index + 1} + ${index % 7};\n  return scaled.toString(${(index % 30) + 2}).padStart(${index % 9}, '0');\n}`,
  ).join('\n');
  const result = await build({
    stdin: { contents: `${filler}\n${chain}\n`, loader: 'ts', sourcefile: 'src/orders.ts' },
    bundle: true,
    minify: true,
    format: 'iife',
    globalName: 'app',
    sourcemap: 'external',
    sourcesContent: true,
    outfile: 'main.js',
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles.find((file) => file.path.endsWith('.js'))?.text as string;
  const map = result.outputFiles.find((file) => file.path.endsWith('.map'))?.text as string;
  const debugId = crypto.randomUUID();
  const context = vm.createContext({});
  // V8 keeps 10 frames by default (as Chrome does); an app may raise it, as Sentry's SDK does.
  vm.runInContext('Error.stackTraceLimit = 50', context);
  new vm.Script(`${code}//# debugId=${debugId}\n`, { filename: BUNDLE_URL }).runInContext(context);
  let stack = '';
  try {
    (context as { app: { step0(order: object): number } }).app.step0({ id: 1 });
  } catch (error) {
    stack = (error as Error).stack as string;
  }
  const frames = stackFrames(stack).filter((frame) => frame.file === BUNDLE_URL);
  if (frames.length !== FRAMES)
    throw new Error(`expected ${FRAMES} frames in the bundle, got ${frames.length}`);
  return {
    code: `${code}//# debugId=${debugId}\n`,
    map: JSON.stringify({ ...JSON.parse(map), debugId }),
    stack,
    frames,
  };
}

interface Bench {
  store: Store;
  services: OpenedServices;
  app: FastifyInstance;
  projectId: string;
  headers: Record<string, string>;
  projectKey: string;
}

async function open(store: Store): Promise<Bench> {
  const environment: Record<string, string> = {
    SVC_DATA_DIR: join(work, store),
    SVC_LOG_LEVEL: 'silent',
    SVC_CALL_WORKER: 'false',
    SVC_DELIVERY_WORKER: 'false',
    SVC_REGRESSION_WORKER: 'false',
    SVC_RETENTION_WORKER: 'false',
  };
  if (store === 'postgres') {
    postgres ??= await startBenchPostgres();
    environment.DATABASE_URL = postgres.url;
    environment.SVC_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const services = await openServices(loadConfiguration(environment));
  const app = await buildApp(services, { logger: false });
  await app.ready();
  const database = services.database.database;
  const organization = await createOrganization(database, 'bench');
  const project = await createProject(database, {
    organizationId: organization.id,
    name: 'debugging bench',
    masterKey: services.masterKey,
  });
  const { token } = await createApiTokenRecord(database, { projectId: project.id, name: 'bench' });
  return {
    store,
    services,
    app,
    projectId: project.id,
    headers: { authorization: `Bearer ${token}` },
    projectKey: project.project_key,
  };
}

async function benchSymbolication(bench: Bench, bundle: Awaited<ReturnType<typeof buildBundle>>) {
  const form = new FormData();
  form.append('urlPrefix', '~/static/js/');
  form.append('file', new Blob([bundle.code]), 'main.js');
  form.append('file', new Blob([bundle.map]), 'main.js.map');
  const request = new Request('http://bench/v1/sourcemaps', { method: 'POST', body: form });
  const uploaded = await bench.app.inject({
    method: 'POST',
    url: '/v1/sourcemaps',
    headers: { ...bench.headers, 'content-type': request.headers.get('content-type') as string },
    payload: Buffer.from(await request.arrayBuffer()),
  });
  if (uploaded.statusCode !== 201) throw new Error(`upload: ${uploaded.statusCode} ${uploaded.body}`);

  const dependencies = { database: bench.services.database.database, blobStore: bench.services.blobStore };
  const check = (frames: Awaited<ReturnType<ReturnType<typeof createSymbolicator>['symbolicate']>>) => {
    if (!frames.every((frame) => frame.mapped)) throw new Error('a frame was not mapped');
  };
  const cold: number[] = [];
  for (let index = 0; index < COLD; index += 1) {
    const symbolicator = createSymbolicator(dependencies);
    const started = performance.now();
    check(await symbolicator.symbolicate(bench.projectId, undefined, bundle.frames));
    cold.push(performance.now() - started);
  }
  const symbolicator = createSymbolicator(dependencies);
  check(await symbolicator.symbolicate(bench.projectId, undefined, bundle.frames));
  const warm: number[] = [];
  for (let index = 0; index < WARM; index += 1) {
    const started = performance.now();
    check(await symbolicator.symbolicate(bench.projectId, undefined, bundle.frames));
    warm.push(performance.now() - started);
  }

  // Over HTTP, warm, in turns with the one-row read.
  const http: number[] = [];
  const baseline: number[] = [];
  const payload = { stack: bundle.stack };
  for (let index = 0; index < 50; index += 1) {
    await bench.app.inject({ method: 'POST', url: '/v1/symbolicate', headers: bench.headers, payload });
  }
  for (let index = 0; index < WARM; index += 1) {
    let started = performance.now();
    const answer = await bench.app.inject({
      method: 'POST',
      url: '/v1/symbolicate',
      headers: bench.headers,
      payload,
    });
    http.push(performance.now() - started);
    if (answer.statusCode !== 200) throw new Error(`symbolicate: ${answer.statusCode}`);
    started = performance.now();
    await bench.app.inject({ url: '/v1/projects/current', headers: bench.headers });
    baseline.push(performance.now() - started);
  }
  const mapBytes = Buffer.byteLength(bundle.map);
  record(
    `symbolicate ${FRAMES} frames, cold (find, read and parse a ${(mapBytes / 1e6).toFixed(1)} MB map) p50 / p95`,
    bench.store,
    `${ms(median(cold))} / ${ms(p95(cold))} ms`,
  );
  record(
    `symbolicate ${FRAMES} frames, warm p50 / p95`,
    bench.store,
    `${ms(median(warm))} / ${ms(p95(warm))} ms`,
  );
  record('cold / warm (p50)', bench.store, times(median(cold), median(warm)));
  record(
    'POST /v1/symbolicate warm p50, and vs GET /v1/projects/current',
    bench.store,
    `${ms(median(http))} ms, ${times(median(http), median(baseline))}`,
  );
}

/** An ExportTraceServiceRequest of `spans` spans in protobuf, encoded with the vendored definitions. */
function otlpBodies() {
  const root = new protobuf.Root();
  const directory = new URL('../src/modules/traces/proto/', import.meta.url).pathname;
  root.resolvePath = (_origin, target) => join(directory, target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  const type = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const start = BigInt(Date.now()) * 1_000_000n;
  return () => {
    const traceId = randomBytes(16);
    const spans = Array.from({ length: OTLP_SPANS }, (_, index) => ({
      traceId,
      spanId: randomBytes(8),
      ...(index === 0 ? {} : { parentSpanId: randomBytes(8) }),
      name: index === 0 ? 'GET /checkout' : `SELECT orders ${index % 12}`,
      kind: index === 0 ? 2 : 3,
      startTimeUnixNano: (start + BigInt(index) * 1_000_000n).toString(),
      endTimeUnixNano: (start + BigInt(index) * 1_000_000n + 750_000n).toString(),
      attributes: [
        { key: 'http.route', value: { stringValue: '/checkout' } },
        { key: 'db.system', value: { stringValue: 'postgresql' } },
        { key: 'db.statement', value: { stringValue: 'select * from orders where id = $1' } },
        { key: 'net.peer.port', value: { intValue: 5432 } },
        { key: 'retry', value: { boolValue: false } },
      ],
      status: { code: index % 50 === 0 ? 2 : 0 },
    }));
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'orders' } }] },
          scopeSpans: [{ scope: { name: 'bench' }, spans }],
        },
      ],
    };
    return Buffer.from(type.encode(type.fromObject(request)).finish());
  };
}

/** Runs `total` requests, `CONCURRENCY` in flight; resolves with the wall time in ms. */
async function drive(total: number, send: () => Promise<void>): Promise<number> {
  let started = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < total) {
        started += 1;
        await send();
      }
    }),
  );
  return performance.now() - began;
}

async function benchOtlp(bench: Bench) {
  const nextOtlp = otlpBodies();
  const chunks = createChunkBodies({ concurrentSessions: CONCURRENCY });
  const otlpHeaders = { ...bench.headers, 'content-type': 'application/x-protobuf' };
  const ingestHeaders = { 'x-service-project-key': bench.projectKey, 'x-service-encoding': 'json+deflate' };
  let otlpBytes = 0;
  let ingestBytes = 0;
  const sendOtlp = async () => {
    const body = nextOtlp();
    const answer = await bench.app.inject({
      method: 'POST',
      url: '/v1/otlp/traces',
      headers: otlpHeaders,
      payload: body,
    });
    if (answer.statusCode !== 200) throw new Error(`otlp: ${answer.statusCode} ${answer.body}`);
    otlpBytes += body.byteLength;
  };
  const sendChunk = async () => {
    const chunk = chunks.next();
    const answer = await bench.app.inject({
      method: 'POST',
      url: '/v1/ingest',
      headers: ingestHeaders,
      payload: chunk,
    });
    if (answer.statusCode !== 200) throw new Error(`ingest: ${answer.statusCode} ${answer.body}`);
    ingestBytes += chunk.byteLength;
  };
  await drive(CONCURRENCY * 2, sendOtlp);
  await drive(CONCURRENCY * 2, sendChunk);
  otlpBytes = 0;
  ingestBytes = 0;
  // Halves in turn, so a slow minute of the machine lands on both.
  let otlpMs = 0;
  let ingestMs = 0;
  for (let half = 0; half < 2; half += 1) {
    otlpMs += await drive(OTLP_REQUESTS / 2, sendOtlp);
    ingestMs += await drive(INGEST_REQUESTS / 2, sendChunk);
  }
  const spansPerSecond = (OTLP_REQUESTS * OTLP_SPANS) / (otlpMs / 1000);
  const otlpRate = otlpBytes / (otlpMs / 1000);
  const ingestRate = ingestBytes / (ingestMs / 1000);
  record(
    `OTLP protobuf, ${OTLP_SPANS} spans a request, ${CONCURRENCY} in flight: spans/s (MB/s)`,
    bench.store,
    `${Math.round(spansPerSecond).toLocaleString('en')} (${(otlpRate / 1e6).toFixed(2)} MB/s)`,
  );
  record(
    `ingest, ${CONCURRENCY} in flight: chunks/s (MB/s)`,
    bench.store,
    `${Math.round(INGEST_REQUESTS / (ingestMs / 1000)).toLocaleString('en')} (${(ingestRate / 1e6).toFixed(2)} MB/s)`,
  );
  record('OTLP bytes/s vs ingest bytes/s', bench.store, times(otlpRate, ingestRate));
}

console.log(
  `@svc/api debugging benchmark: node ${process.version}, ${availableParallelism()} cores; ${COLD} cold and ${WARM} warm symbolications of ${FRAMES} frames; ${OTLP_REQUESTS} OTLP requests of ${OTLP_SPANS} spans; stores: ${[...STORES].join(', ')}`,
);
const benchStarted = performance.now();
try {
  const bundle = await buildBundle();
  const stores = (['embedded', 'postgres'] as const).filter((store) => STORES.has(store));
  for (const store of stores) {
    console.log(`\n${STORE_LABEL[store]}`);
    const bench = await open(store);
    try {
      await benchSymbolication(bench, bundle);
      await benchOtlp(bench);
    } finally {
      await bench.app.close();
      await bench.services.close();
    }
  }
  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  console.log(`| debugging | ${stores.map((store) => STORE_LABEL[store]).join(' | ')} |`);
  console.log(`|---|${stores.map(() => '---').join('|')}|`);
  for (const [row, cells] of table)
    console.log(`| ${row} | ${stores.map((store) => cells[store] ?? '').join(' | ')} |`);
} finally {
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
