/**
 * `pnpm bench`, calls: the read side over many calls and the processing pipeline, on the embedded
 * store (PGlite) and on PostgreSQL. Every server runs as its own process on 127.0.0.1; autocannon
 * and the ingest client run here.
 *
 * 1. Lists: 100k calls with 1M track samples in all (`calls`, `call_tracks` with their series,
 *    and their `sessions`) are seeded with SQL (bench/seed-calls.ts), then GET /v1/calls/overview
 *    and GET /v1/calls with filters are loaded with one connection for a few seconds each: p50
 *    and p95 per query, next to an authenticated one-row call (GET /v1/projects/current) as the
 *    baseline; EXPLAIN (ANALYZE) of every query whose p95 is over 100 ms.
 * 2. Processing: a fresh server (background call worker on) is sent call timelines through
 *    POST /v1/ingest (test/call-timelines.ts, json+deflate, several chunks per session, one request
 *    in flight per session), and timed from the first POST until every call shows all its samples
 *    (and, on PostgreSQL, `processing_jobs` is empty): track-samples per second from ingest to findings,
 *    next to `@svc/detectors` `detect()` (and the whole `summarizeCalls`) over the same items in
 *    this process.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_CALLS (default 100000), BENCH_CALLS_TRACK_SAMPLES (default 1000000),
 * BENCH_CALLS_ONLY (comma list of list, processing), BENCH_ONLY (comma list of embedded, postgres),
 * BENCH_CALLS_SECONDS (per list query, default 3), BENCH_CALLS_SESSIONS (processing, default 200),
 * BENCH_CALLS_SAMPLES (samples per call, default 300), SVC_BENCH_DATABASE_URL (use that PostgreSQL).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { detect, resolveThresholds } from '@svc/detectors';
import { sql } from 'kysely';
import { ulid } from 'ulid';
import { type PlacedCallItem, summarizeCalls } from '../src/modules/calls/summarize-calls.ts';
import { createProcessingWorker } from '../src/modules/processing/index.ts';
import { openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { createDatabase, type DatabaseHandle } from '../src/platform/database/database.ts';
import { createLineLogger } from '../src/platform/line-logger.ts';
import { chunkIndexConcurrency } from '../src/services.ts';
import { callTimeline, chunkBytes, sessionMeta, splitItems, type WireItem } from '../test/call-timelines.ts';
import { type CallEndpoint, explainCallQueries } from './explain-calls.ts';
import { runLoad } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import { type BenchApi, createBenchProcesses, tailOf } from './processes.ts';
import { type SeededCalls, seedCalls } from './seed-calls.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 100_000);
const TRACK_SAMPLES = Number(process.env.BENCH_CALLS_TRACK_SAMPLES ?? 1_000_000);
const PARTS = new Set((process.env.BENCH_CALLS_ONLY ?? 'list,processing').split(','));
const STORES = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
const LIST_SECONDS = Number(process.env.BENCH_CALLS_SECONDS ?? 3);
const SESSIONS = Number(process.env.BENCH_CALLS_SESSIONS ?? 200);
const SAMPLES = Number(process.env.BENCH_CALLS_SAMPLES ?? 300);
/** Chunks per session in the processing run (seq 0 carries `meta`). */
const CHUNKS = 10;
/** Sessions uploading at once, each with one request in flight (like SDKs). */
const UPLOADERS = 16;
const TRACKS_PER_CALL = 4;
const SLOW_MS = 100;

type Store = 'embedded' | 'postgres';
const STORE_LABEL: Record<Store, string> = { embedded: 'embedded (PGlite)', postgres: 'PostgreSQL' };

const work = await mkdtemp(join(tmpdir(), 'svc-bench-calls-'));
let postgres: BenchPostgres | undefined;
const benchStarted = performance.now();
/** Results of in-process passes, kept so no pass can be optimised away. */
let sink = 0;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${value.toFixed(1)} ms`;
const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(1)}x`;
/** A small ratio with two significant digits: `0.00034x`. */
const smallRatio = (value: number, baseline: number) => `${(value / baseline).toPrecision(2)}x`;

/** The summary table: one row per measure, one column per store. */
const table = new Map<string, Partial<Record<Store, string>>>();
function record(row: string, store: Store, value: string): void {
  const cells = table.get(row) ?? {};
  cells[store] = value;
  table.set(row, cells);
}

const processes = createBenchProcesses(work, 180_000);
const { start, startApi, stop } = processes;

interface Credentials {
  projectId: string;
  projectKey: string;
  apiToken: string;
}

async function createProject(environment: Record<string, string>, name: string): Promise<Credentials> {
  const cli = start(`create-project ${name}`, 'src/cli.ts', {
    arguments: ['create-project', '--name', name, '--json'],
    environment,
    logFile: join(work, `create-project-${name}.log`),
  });
  const code = await cli.exited;
  if (code !== '0') throw new Error(`create-project failed (${code}):\n${tailOf(cli)}`);
  return JSON.parse(tailOf(cli, 1)) as Credentials;
}

async function firstProject(dataDirectory: string): Promise<Credentials> {
  return JSON.parse(await readFile(join(dataDirectory, 'first-project.json'), 'utf8')) as Credentials;
}

async function ensurePostgres(): Promise<BenchPostgres> {
  if (postgres !== undefined) return postgres;
  const started = performance.now();
  postgres = await startBenchPostgres();
  console.log(
    `  PostgreSQL ${postgres.started ? `started (fsync on) in ${((performance.now() - started) / 1000).toFixed(1)} s` : 'from SVC_BENCH_DATABASE_URL'}`,
  );
  return postgres;
}

/** What a PostgreSQL-backed server (and the CLI) runs with. */
async function postgresEnvironment(name: string): Promise<Record<string, string>> {
  const { url } = await ensurePostgres();
  return {
    DATABASE_URL: url,
    SVC_DATA_DIR: join(work, name),
    SVC_MASTER_KEY: postgresMasterKey,
  };
}
const postgresMasterKey = randomBytes(32).toString('base64');

/** Handles the bench has open: closed at the end whatever happens (an open pool keeps Node alive). */
const handles = new Set<DatabaseHandle>();

/** The bench's own handle on a store (PGlite only while no server has the directory open). */
async function openStore(store: Store, dataDirectory: string): Promise<DatabaseHandle> {
  if (store === 'postgres' && postgres === undefined) throw new Error('PostgreSQL is not running');
  const handle =
    store === 'embedded'
      ? await createDatabase({ engine: 'pglite', directory: join(dataDirectory, 'pglite') })
      : await createDatabase({ engine: 'postgres', url: (postgres as BenchPostgres).url, poolSize: 2 });
  handles.add(handle);
  return handle;
}

async function closeStore(handle: DatabaseHandle | undefined): Promise<void> {
  if (handle === undefined || !handles.delete(handle)) return;
  await handle.close();
}

// ---------------------------------------------------------------------------------------------
// 1. Lists and overview over seeded calls

interface ListQuery {
  name: string;
  endpoint: CallEndpoint;
  search: string;
}

function listQueries(seeded: SeededCalls): ListQuery[] {
  const day = 24 * 3600 * 1000;
  const week = `from=${new Date(seeded.newest - 14 * day).toISOString()}&to=${new Date(seeded.newest - 7 * day).toISOString()}`;
  const list = (search: string, name = `?${search}`): ListQuery => ({ name, endpoint: 'list', search });
  return [
    { name: 'GET /v1/calls/overview (all time)', endpoint: 'overview', search: '' },
    { name: 'GET /v1/calls/overview (7 days)', endpoint: 'overview', search: week },
    list('', 'GET /v1/calls (first page)'),
    list('failedToConnect=true'),
    list('relayed=true&networkType=cellular'),
    list('minQuality=0&maxQuality=40'),
    list(`browser=firefox&release=${seeded.release}`),
    list(`endUser=${seeded.endUser}`, `?endUser=${seeded.endUser} (${seeded.endUserCalls} calls)`),
    list('hasIssue=true&device=mobile'),
  ];
}

function path(query: ListQuery): string {
  const base = query.endpoint === 'overview' ? '/v1/calls/overview' : '/v1/calls';
  return query.search === '' ? base : `${base}?${query.search}`;
}

interface ListServer {
  api: BenchApi;
  project: Credentials;
  seeded: SeededCalls;
  dataDirectory: string;
  handle?: DatabaseHandle;
}

/** Embedded: a first start creates the store and its first project; then seeded while stopped. */
async function prepareEmbeddedList(): Promise<ListServer> {
  const dataDirectory = join(work, 'list-embedded');
  const first = await startApi('list-embedded-first', { SVC_DATA_DIR: dataDirectory });
  const project = await firstProject(dataDirectory);
  await stop(first.child);
  const handle = await openStore('embedded', dataDirectory);
  let seeded: SeededCalls;
  try {
    seeded = await seedCalls(handle.database, project.projectId, {
      calls: CALLS,
      trackSamples: TRACK_SAMPLES,
    });
  } finally {
    await closeStore(handle);
  }
  const api = await startApi('list-embedded', { SVC_DATA_DIR: dataDirectory });
  return { api, project, seeded, dataDirectory };
}

/** PostgreSQL: the server migrates, the CLI creates the project, the bench seeds next to it. */
async function preparePostgresList(): Promise<ListServer> {
  const environment = await postgresEnvironment('list-postgres');
  const api = await startApi('list-postgres', environment);
  const project = await createProject(environment, 'bench-calls-list');
  const handle = await openStore('postgres', environment.SVC_DATA_DIR as string);
  const seeded = await seedCalls(handle.database, project.projectId, {
    calls: CALLS,
    trackSamples: TRACK_SAMPLES,
  });
  return { api, project, seeded, dataDirectory: environment.SVC_DATA_DIR as string, handle };
}

async function listCalls(store: Store): Promise<void> {
  console.log(`\n${STORE_LABEL[store]}: GET /v1/calls and /v1/calls/overview`);
  const server = store === 'embedded' ? await prepareEmbeddedList() : await preparePostgresList();
  const { api, project, seeded } = server;
  const slow: ListQuery[] = [];
  try {
    console.log(
      `  seeded ${count(seeded.calls)} calls (${count(seeded.sessions)} sessions, ${count(seeded.tracks)} tracks, ${count(seeded.trackSamples)} track samples; ${((seeded.failedToConnect / seeded.calls) * 100).toFixed(1)}% failed to connect, ${((seeded.relayed / seeded.calls) * 100).toFixed(1)}% relayed, ${((seeded.hasIssue / seeded.calls) * 100).toFixed(1)}% with an issue) in ${seeded.seconds.toFixed(1)} s`,
    );
    record(
      `seed ${count(seeded.calls)} calls, ${count(seeded.trackSamples)} track samples (SQL)`,
      store,
      `${seeded.seconds.toFixed(1)} s`,
    );
    const headers = { authorization: `Bearer ${project.apiToken}` };
    const queries = listQueries(seeded);
    // Page 2 of the connect failures, from a real nextCursor.
    const firstPage = (await (
      await fetch(`${api.url}/v1/calls?failedToConnect=true`, { headers })
    ).json()) as {
      nextCursor?: string;
    };
    if (firstPage.nextCursor !== undefined) {
      queries.push({
        name: '?failedToConnect=true, page 2 (cursor)',
        endpoint: 'list',
        search: `failedToConnect=true&cursor=${firstPage.nextCursor}`,
      });
    }

    console.log(`  1 connection, ${LIST_SECONDS} s per query`);
    const floor = await runLoad({
      url: `${api.url}/v1/projects/current`,
      headers,
      connections: 1,
      duration: LIST_SECONDS,
    });
    if (floor.non2xx + floor.errors > 0) throw new Error(`baseline: ${floor.firstFailure}`);
    console.log(
      `  ${'GET /v1/projects/current (baseline)'.padEnd(42)} p50 ${ms(floor.p50).padStart(9)}  p95 ${ms(floor.p95).padStart(9)}`,
    );
    record('baseline: GET /v1/projects/current', store, `${floor.p50.toFixed(1)} / ${ms(floor.p95)}`);
    for (const query of queries) {
      const url = `${api.url}${path(query)}`;
      const answer = await fetch(url, { headers });
      const body = (await answer.json()) as { items?: unknown[]; calls?: number };
      if (!answer.ok) throw new Error(`${query.name}: ${answer.status} ${JSON.stringify(body)}`);
      const result = await runLoad({ url, headers, connections: 1, duration: LIST_SECONDS });
      if (result.non2xx + result.errors > 0) throw new Error(`${query.name}: ${result.firstFailure}`);
      const shape =
        query.endpoint === 'overview' ? `${count(body.calls ?? 0)} calls` : `${body.items?.length ?? 0} rows`;
      console.log(
        `  ${query.name.padEnd(42)} p50 ${ms(result.p50).padStart(9)}  p95 ${ms(result.p95).padStart(9)}  = ${ratio(result.p95, floor.p95).padStart(7)} the baseline  (${shape}, ${result.requests} requests)`,
      );
      record(
        query.name,
        store,
        `${result.p50.toFixed(1)} / ${ms(result.p95)} (${ratio(result.p95, floor.p95)})`,
      );
      if (result.p95 > SLOW_MS) slow.push(query);
    }
  } finally {
    await stop(api.child);
  }
  if (slow.length === 0) console.log(`  every query under ${SLOW_MS} ms at p95`);
  // PGlite is one process's database: explained once the server has stopped.
  const handle =
    slow.length === 0 ? undefined : (server.handle ?? (await openStore(store, server.dataDirectory)));
  for (const query of slow) {
    const plan = await explainCallQueries(
      (handle as DatabaseHandle).database,
      query.endpoint,
      project.projectId,
      new URLSearchParams(query.search),
    );
    console.log(
      `\n  EXPLAIN ANALYZE (${STORE_LABEL[store]}), ${query.name}:\n${plan.replace(/^/gm, '    ')}`,
    );
  }
  await closeStore(handle);
  await closeStore(server.handle);
  record(
    `queries over ${SLOW_MS} ms at p95`,
    store,
    slow.length === 0 ? 'none' : slow.map((q) => q.name).join('; '),
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Processing throughput

interface Timeline {
  items: WireItem[];
  meta: ReturnType<typeof sessionMeta>;
}

/** The sessions of the processing run: one call each, some lossy, some relayed, some low-res. */
function createTimelines(): Timeline[] {
  const base = Date.now() - 6 * 3600 * 1000;
  return Array.from({ length: SESSIONS }, (_, index) => {
    const start = base + index * 7_000;
    const { items } = callTimeline({
      start,
      samples: SAMPLES,
      windowMs: 1_000,
      setupMs: 120 + ((index * 37) % 600),
      relayed: index % 10 === 0,
      network: index % 4 === 0 ? 'cellular' : 'wifi',
      ...(index % 5 === 0 ? { lossPct: (sample: number) => (sample >= 100 && sample < 160 ? 8 : 0) } : {}),
      ...(index % 7 === 0 ? { height: (sample: number) => (sample >= 200 ? 180 : 720) } : {}),
    });
    const meta = sessionMeta(start - 1_000, {
      browser: index % 3 === 0 ? 'Firefox' : 'Chrome',
      device: index % 4 === 0 ? 'mobile' : 'desktop',
      release: `web@2.${index % 4}.0`,
      userId: `user-${index % 20}`,
    });
    return { items: [...items].sort((a, b) => a.t - b.t), meta };
  });
}

const trackSamplesOf = (timelines: readonly Timeline[]) =>
  timelines.reduce(
    (sum, timeline) =>
      sum +
      timeline.items.reduce(
        (items, item) => items + (item.type === 'call.sample' ? (item.tracks as unknown[]).length : 0),
        0,
      ),
    0,
  );

/** Median seconds per pass of `pass` (at least 3 passes, and at least `minSeconds` in all). */
function timePasses(pass: () => number, minSeconds = 2): { seconds: number; sink: number } {
  const times: number[] = [];
  let sink = 0;
  const started = performance.now();
  while (times.length < 3 || performance.now() - started < minSeconds * 1000) {
    const before = performance.now();
    sink += pass();
    times.push((performance.now() - before) / 1000);
  }
  times.sort((a, b) => a - b);
  return { seconds: times[Math.floor(times.length / 2)] as number, sink };
}

interface InProcess {
  detectPerSecond: number;
  summarizePerSecond: number;
  findings: number;
}

/** `detect()` and the whole `summarizeCalls` over the same items, in this process. */
function measureInProcess(timelines: readonly Timeline[]): InProcess {
  const trackSamples = trackSamplesOf(timelines);
  const thresholds = resolveThresholds({});
  const detectorItems = timelines.map(
    (timeline) => timeline.items as unknown as Parameters<typeof detect>[0],
  );
  const placed = timelines.map((timeline) =>
    timeline.items.map(
      (item, index): PlacedCallItem => ({ seq: 0, index, item: item as unknown as PlacedCallItem['item'] }),
    ),
  );
  const lastT = (items: readonly WireItem[]) => (items.at(-1) as WireItem).t;
  // Warm-up, and the findings the pipeline should store.
  let findings = 0;
  for (const items of detectorItems) findings += detect(items, { thresholds }).length;
  const detected = timePasses(() =>
    detectorItems.reduce(
      (sum, items, index) =>
        sum + detect(items, { thresholds, now: lastT(timelines[index]?.items ?? []) }).length,
      0,
    ),
  );
  const summarized = timePasses(() =>
    placed.reduce((sum, items, index) => {
      const aliveUntil = lastT(timelines[index]?.items ?? []);
      return sum + summarizeCalls([...items], { thresholds, aliveUntil, inactivityMs: 120_000 }).calls.length;
    }, 0),
  );
  sink += detected.sink + summarized.sink;
  return {
    detectPerSecond: trackSamples / detected.seconds,
    summarizePerSecond: trackSamples / summarized.seconds,
    findings,
  };
}

/** The chunk bodies of each session (new session ids: every store gets its own). */
function chunkBodies(timelines: readonly Timeline[]): Buffer[][] {
  return timelines.map((timeline) => {
    const sessionId = `ses_${ulid()}`;
    return splitItems(timeline.items, CHUNKS).map((events, seq) =>
      deflateSync(
        chunkBytes({
          sessionId,
          seq,
          sentAt: (events.at(-1) as WireItem).t + 500,
          events,
          ...(seq === 0 ? { meta: timeline.meta } : {}),
        }),
      ),
    );
  });
}

interface CallPage {
  items: Array<{ sampleCount: number; state: string; issues: unknown[] }>;
  nextCursor?: string;
}

async function allCalls(url: string, apiToken: string): Promise<CallPage['items']> {
  const items: CallPage['items'] = [];
  let cursor: string | undefined;
  do {
    const response = await fetch(
      `${url}/v1/calls?limit=200${cursor === undefined ? '' : `&cursor=${cursor}`}`,
      {
        headers: { authorization: `Bearer ${apiToken}` },
      },
    );
    if (!response.ok) throw new Error(`GET /v1/calls: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as CallPage;
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return items;
}

interface ProcessingServer {
  api: BenchApi;
  project: Credentials;
  environment: Record<string, string>;
}

/** A fresh server for a processing run: a new data directory, or a new project on PostgreSQL. */
async function startProcessingServer(
  store: Store,
  name: string,
  extra: Record<string, string> = {},
): Promise<ProcessingServer> {
  if (store === 'embedded') {
    const environment = { SVC_DATA_DIR: join(work, name), ...extra };
    const api = await startApi(name, environment);
    return { api, project: await firstProject(environment.SVC_DATA_DIR), environment };
  }
  const environment = { ...(await postgresEnvironment(name)), ...extra };
  const project = await createProject(environment, name);
  return { api: await startApi(name, environment), project, environment };
}

/**
 * Sends every session's chunks, UPLOADERS sessions at a time, each one chunk after the other (one
 * request in flight per session, like SDKs); resolves with the seconds it took.
 */
async function ingestAll(server: ProcessingServer, bodies: readonly Buffer[][]): Promise<number> {
  const started = performance.now();
  let next = 0;
  const upload = async () => {
    for (let session = next++; session < bodies.length; session = next++) {
      for (const body of bodies[session] ?? []) {
        const response = await fetch(`${server.api.url}/v1/ingest`, {
          method: 'POST',
          headers: {
            'content-type': 'application/octet-stream',
            'x-service-encoding': 'json+deflate',
            'x-service-project-key': server.project.projectKey,
          },
          body: new Uint8Array(body),
        });
        if (response.status !== 200) throw new Error(`ingest: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      }
    }
  };
  await Promise.all(Array.from({ length: UPLOADERS }, upload));
  return (performance.now() - started) / 1000;
}

async function countJobs(handle: DatabaseHandle, projectId: string): Promise<number> {
  const { rows } = await sql<{ jobs: number }>`
    select count(*)::int as jobs from processing_jobs where project_id = ${projectId}`.execute(
    handle.database,
  );
  return rows[0]?.jobs ?? 0;
}

/**
 * Live: the server's background worker processes while the chunks arrive (every chunk re-queues
 * its session). Timed from the first POST until every call shows all its samples, closed (and,
 * on PostgreSQL, no job is left).
 */
async function processLive(
  store: Store,
  timelines: readonly Timeline[],
  inProcess: InProcess,
): Promise<void> {
  const server = await startProcessingServer(store, `processing-${store}`);
  const handle = store === 'postgres' ? await openStore('postgres', '') : undefined;
  try {
    const trackSamples = trackSamplesOf(timelines);
    const started = performance.now();
    let ingested: number | undefined;
    let uploadFailure: unknown;
    const uploads = ingestAll(server, chunkBodies(timelines)).then(
      (seconds) => {
        ingested = seconds;
      },
      (error: unknown) => {
        uploadFailure = error ?? new Error('upload failed');
      },
    );
    let calls: CallPage['items'] = [];
    let done = false;
    const deadline = Date.now() + 600_000;
    while (!done) {
      await sleep(100);
      if (uploadFailure !== undefined) throw uploadFailure;
      if (Date.now() > deadline) throw new Error(`${store}: calls not processed within 10 minutes`);
      if (ingested === undefined) continue;
      calls = await allCalls(server.api.url, server.project.apiToken);
      const complete = calls.filter((call) => call.sampleCount === SAMPLES && call.state === 'closed').length;
      done =
        complete === timelines.length &&
        (handle === undefined || (await countJobs(handle, server.project.projectId)) === 0);
    }
    await uploads;
    const seconds = (performance.now() - started) / 1000;
    const findings = calls.reduce((sum, call) => sum + call.issues.length, 0);
    const perSecond = trackSamples / seconds;
    console.log(
      `  live (background worker on while ingesting): ingest done after ${(ingested ?? 0).toFixed(1)} s; every call processed after ${seconds.toFixed(1)} s (${findings} findings stored; detect() alone finds ${inProcess.findings}${findings === inProcess.findings ? '' : ': MISMATCH'})`,
    );
    console.log(
      `  ingest to findings: ${count(perSecond)} track-samples/s = ${smallRatio(perSecond, inProcess.detectPerSecond)} detect() in-process, ${smallRatio(perSecond, inProcess.summarizePerSecond)} summarizeCalls`,
    );
    record(
      `live: ${count(trackSamples)} track samples, ingest done / every call processed`,
      store,
      `${(ingested ?? 0).toFixed(1)} s / ${seconds.toFixed(1)} s`,
    );
    record(
      'live: track-samples/s ingest to findings (/ detect(); / summarizeCalls)',
      store,
      `${count(perSecond)} (${smallRatio(perSecond, inProcess.detectPerSecond)}; ${smallRatio(perSecond, inProcess.summarizePerSecond)})`,
    );
  } finally {
    await closeStore(handle);
    await stop(server.api.child);
  }
}

/**
 * Backlog: the same chunks ingested with the worker off, then the server stopped and a call worker
 * (src/modules/processing/worker.ts) run in this process over the queue until it is empty: processing
 * alone, each session once (read, decrypt and validate its chunks, summarize, write).
 */
async function processBacklog(
  store: Store,
  timelines: readonly Timeline[],
  inProcess: InProcess,
): Promise<void> {
  const server = await startProcessingServer(store, `backlog-${store}`, { SVC_CALL_WORKER: 'false' });
  const bodies = chunkBodies(timelines);
  let ingestSeconds: number;
  try {
    ingestSeconds = await ingestAll(server, bodies);
  } finally {
    await stop(server.api.child);
  }
  const services = await openServices(loadConfiguration({ ...process.env, ...server.environment }));
  try {
    // As the server runs it: several jobs at once on PostgreSQL, one on PGlite.
    const worker = createProcessingWorker(
      {
        ...services,
        database: services.database.database,
        log: createLineLogger((line) => console.log(`  ${line}`)),
        appUrl: services.configuration.appUrl,
      },
      { concurrency: chunkIndexConcurrency(services.configuration.database) },
    );
    const started = performance.now();
    const jobs = await worker.runUntilIdle();
    await services.database.flush();
    const seconds = (performance.now() - started) / 1000;
    const stats = worker.stats();
    const { rows } = await sql<{ complete: number }>`
      select count(*)::int as complete from calls
      where project_id = ${server.project.projectId} and sample_count = ${SAMPLES} and state = 'closed'`.execute(
      services.database.database,
    );
    const complete = rows[0]?.complete ?? 0;
    const left = await countJobs(services.database, server.project.projectId);
    if (complete !== timelines.length || left !== 0 || stats.failures !== 0)
      throw new Error(
        `${store} backlog: ${complete} of ${timelines.length} calls complete, ${left} jobs left, ${stats.failures} failures`,
      );
    const perSecond = stats.trackSamples / seconds;
    const chunks = bodies.reduce((sum, session) => sum + session.length, 0);
    console.log(
      `  backlog: ingest alone (worker off) ${ingestSeconds.toFixed(1)} s (${count(chunks / ingestSeconds)} chunks/s); then a worker alone ran ${jobs} jobs in ${seconds.toFixed(1)} s: ${count(perSecond)} track-samples/s = ${smallRatio(perSecond, inProcess.detectPerSecond)} detect() in-process, ${smallRatio(perSecond, inProcess.summarizePerSecond)} summarizeCalls`,
    );
    record(
      'backlog: ingest alone (worker off)',
      store,
      `${ingestSeconds.toFixed(1)} s (${count(chunks / ingestSeconds)} chunks/s)`,
    );
    record(
      'backlog: worker alone, track-samples/s (/ detect(); / summarizeCalls)',
      store,
      `${count(perSecond)} in ${seconds.toFixed(1)} s (${smallRatio(perSecond, inProcess.detectPerSecond)}; ${smallRatio(perSecond, inProcess.summarizePerSecond)})`,
    );
  } finally {
    await services.close();
  }
}

// ---------------------------------------------------------------------------------------------

function printSummary(): void {
  const stores = (['embedded', 'postgres'] as const).filter((store) => STORES.has(store));
  const rows = [...table.entries()];
  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  if (PARTS.has('list'))
    console.log('Lists: p50 / p95 per query, and in brackets p95 as a multiple of the baseline p95');
  console.log(`| | ${stores.map((store) => STORE_LABEL[store]).join(' | ')} |`);
  console.log(`|---|${stores.map(() => '---').join('|')}|`);
  for (const [row, cells] of rows)
    console.log(`| ${row} | ${stores.map((store) => cells[store] ?? '').join(' | ')} |`);
}

console.log(
  `@svc/api calls benchmark: node ${process.version}; ${count(CALLS)} calls / ${count(TRACK_SAMPLES)} track samples; parts: ${[...PARTS].join(', ')}; stores: ${[...STORES].join(', ')}`,
);
try {
  if (PARTS.has('list')) {
    for (const store of ['embedded', 'postgres'] as const) if (STORES.has(store)) await listCalls(store);
  }
  if (PARTS.has('processing')) {
    const timelines = createTimelines();
    const trackSamples = trackSamplesOf(timelines);
    console.log(
      `\nProcessing: ${timelines.length} sessions x 1 call x ${SAMPLES} samples x ${TRACKS_PER_CALL} tracks = ${count(trackSamples)} track samples in ${timelines.length * CHUNKS} chunks (${UPLOADERS} sessions uploading at once)`,
    );
    const inProcess = measureInProcess(timelines);
    console.log(
      `  in this process, over the same items: detect() ${count(inProcess.detectPerSecond)} track-samples/s; summarizeCalls (detect + scores + series) ${count(inProcess.summarizePerSecond)} track-samples/s`,
    );
    for (const store of ['embedded', 'postgres'] as const) {
      record('detect() in-process, track-samples/s', store, count(inProcess.detectPerSecond));
      record('summarizeCalls in-process, track-samples/s', store, count(inProcess.summarizePerSecond));
    }
    for (const store of ['embedded', 'postgres'] as const) {
      if (!STORES.has(store)) continue;
      console.log(`\n${STORE_LABEL[store]}: processing`);
      await processLive(store, timelines, inProcess);
      await processBacklog(store, timelines, inProcess);
    }
  }
  printSummary();
  if (sink === Number.MIN_VALUE) console.log(sink);
} finally {
  for (const handle of handles) await closeStore(handle);
  await processes.stopAll();
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
