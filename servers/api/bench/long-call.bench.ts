/**
 * `pnpm bench`, the long call: what call processing costs per chunk as a call grows, on the
 * embedded store (PGlite) and on PostgreSQL.
 *
 * One session holds one two-hour call: four tracks (audio and video, in and out), sampled every
 * 5 s, and at 1 Hz during three impaired stretches (loss; freezes at 180 p; delay with audio
 * concealment), windows jittered by a few ms as a real collector's are. It is uploaded live at
 * real pace compressed in time: one chunk per 10 s of call time (720 chunks), sent one after
 * the other through the real ingest route (in this process, `app.inject`), and after each chunk
 * the call worker runs its job. The same chunks are then ingested as a backlog (worker off) and
 * processed in one job; and, as the baseline of what processing cost before it was incremental,
 * live again with the session's progress deleted before every job, so each job recomputes the
 * session from all its items. Last, live as the server runs it: its background worker on while
 * the chunks are uploaded back to back (a job takes the chunks that arrived while the previous
 * one ran).
 *
 * Processing cost is measured around each job: CPU of this process (`process.cpuUsage()`: the
 * worker, kysely and, on the embedded store, PGlite's own thread) plus, on PostgreSQL, the CPU of
 * the server's processes (`/proc/<pid>/schedstat` of the postmaster and its children, found without
 * a query: asking `pg_stat_activity` cost the server ~0.7 ms per reading, one inside each job), and
 * the job's wall time. Ingest is measured apart. Reported: total processing CPU live against the
 * backlog (target ≤ 2x), the cost of the last chunks' jobs against the first ones' (medians of 20,
 * target ≤ 2x), and ingest-to-findings track-samples/s next to `detect()` over the same items in
 * this process. The rows, series and findings of the three sessions are compared (and with
 * `detect()`): a mismatch is printed.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Last, paced runs: the chunks uploaded one every BENCH_LONG_CALL_PACE_MS (the call's pace
 * compressed in time) while a background worker coalesces with each of BENCH_LONG_CALL_WINDOWS,
 * reporting the jobs, their CPU against the backlog (the run's CPU minus that of the same uploads
 * at the same pace without a worker) and the time from a chunk's upload to its findings. What a window costs and saves depends on its ratio to the time between uploads.
 *
 * Settings: BENCH_ONLY (embedded, postgres), BENCH_LONG_CALL_MINUTES (default 120),
 * BENCH_LONG_CALL_RECOMPUTE=0 (skip the recompute-every-chunk baseline), BENCH_LONG_CALL_PACE_MS
 * (default 40), BENCH_LONG_CALL_WINDOWS (ms, default 0, 1 and 4 paces), SVC_BENCH_DATABASE_URL.
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CallEvent, type CallSample, detect } from '@svc/detectors';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ulid } from 'ulid';
import { buildApp } from '../src/app.ts';
import { findCallDetail } from '../src/modules/calls/call-queries.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import {
  claimProcessingJobs,
  createProcessingWorker,
  type ProcessingDependencies,
  processSessionJob,
} from '../src/modules/processing/index.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import type { WireItem } from '../test/call-timelines.ts';
import { postChunk } from '../test/ingest-helpers.ts';
import { chunksOf, longCall } from './long-call.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import { cpuSpent, createPostgresCpuReader, type PostgresCpuReading } from './postgres-cpu.ts';

const STORES = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
const MINUTES = Number(process.env.BENCH_LONG_CALL_MINUTES ?? 120);
const RECOMPUTE = process.env.BENCH_LONG_CALL_RECOMPUTE !== '0';
/** Time between two uploads of the paced runs (the call's 10 s chunks compressed in time). */
const PACE_MS = Number(process.env.BENCH_LONG_CALL_PACE_MS ?? 40);
/** Coalescing windows of the paced runs, ms. */
const WINDOWS = (process.env.BENCH_LONG_CALL_WINDOWS ?? `0,${PACE_MS},${4 * PACE_MS}`)
  .split(',')
  .filter((value) => value.trim() !== '')
  .map(Number);
/** Jobs at each end of the call whose medians are compared. */
const ENDS = 20;

type Store = 'embedded' | 'postgres';
const STORE_LABEL: Record<Store, string> = { embedded: 'embedded (PGlite)', postgres: 'PostgreSQL' };

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;
const small = (value: number, baseline: number) => `${(value / baseline).toPrecision(2)}x`;
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

// ---------------------------------------------------------------------------------------------
// Measuring

interface JobCost {
  /** This process's CPU, µs. */
  processCpu: number;
  /** PostgreSQL's processes' CPU, µs (0 on the embedded store). */
  databaseCpu: number;
  wallMs: number;
  rescored: number;
}

interface Run {
  jobs: JobCost[];
  ingestMs: number;
  /** CPU of ingesting the chunks (this process and PostgreSQL's), µs. */
  ingestCpu: number;
  sessionId: string;
}

const cpuOf = (cost: JobCost) => cost.processCpu + cost.databaseCpu;
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

interface Bench {
  store: Store;
  services: OpenedServices;
  app: FastifyInstance;
  projectKey: string;
  projectId: string;
  dependencies: ProcessingDependencies;
  /** Reads the CPU of PostgreSQL's processes (undefined on the embedded store, or a server elsewhere). */
  postgresCpu: (() => PostgresCpuReading | undefined) | undefined;
}

/** Claims and runs the due job (as the call worker does), measured. */
async function measureJob(bench: Bench): Promise<JobCost> {
  const databaseBefore = bench.postgresCpu?.();
  const before = process.cpuUsage();
  const started = performance.now();
  const jobs = await claimProcessingJobs(bench.dependencies.database, 8, 60_000);
  let rescored = 0;
  for (const job of jobs) rescored += (await processSessionJob(bench.dependencies, job)).rescored;
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  const databaseAfter = bench.postgresCpu?.();
  if (jobs.length !== 1) throw new Error(`expected one due job, got ${jobs.length}`);
  return {
    processCpu: used.user + used.system,
    databaseCpu: cpuSpent(databaseBefore, databaseAfter),
    wallMs,
    rescored,
  };
}

async function ingestChunk(bench: Bench, body: Buffer): Promise<number> {
  const started = performance.now();
  const response = await postChunk(bench.app, bench.projectKey, body);
  if (response.statusCode !== 200) throw new Error(`ingest: ${response.statusCode} ${response.body}`);
  return performance.now() - started;
}

/** Live: each chunk ingested, then its job; `recompute`: the progress deleted before every job. */
async function live(
  bench: Bench,
  items: readonly WireItem[],
  start: number,
  recompute = false,
): Promise<Run> {
  const sessionId = `ses_${ulid()}`;
  const jobs: JobCost[] = [];
  let ingestMs = 0;
  let ingestCpu = 0;
  for (const body of chunksOf(sessionId, items, start)) {
    const before = await cpuMark(bench);
    ingestMs += await ingestChunk(bench, body);
    ingestCpu += await cpuSince(bench, before);
    if (recompute)
      await sql`delete from call_progress where session_id = ${sessionId}`.execute(
        bench.services.database.database,
      );
    jobs.push(await measureJob(bench));
  }
  return { jobs, ingestMs, ingestCpu, sessionId };
}

/** CPU of this process (µs) and of PostgreSQL's processes so far. */
interface CpuMark {
  process: number;
  database: PostgresCpuReading | undefined;
}

async function cpuMark(bench: Bench): Promise<CpuMark> {
  const used = process.cpuUsage();
  return { process: used.user + used.system, database: bench.postgresCpu?.() };
}

/** CPU of this process and of PostgreSQL's processes since `mark`, µs. */
async function cpuSince(bench: Bench, mark: CpuMark): Promise<number> {
  const used = process.cpuUsage();
  const database = bench.postgresCpu?.();
  return used.user + used.system - mark.process + cpuSpent(mark.database, database);
}

/** Backlog: every chunk ingested with no job, then one job. */

async function backlog(bench: Bench, items: readonly WireItem[], start: number): Promise<Run> {
  const sessionId = `ses_${ulid()}`;
  let ingestMs = 0;
  const before = await cpuMark(bench);
  for (const body of chunksOf(sessionId, items, start)) ingestMs += await ingestChunk(bench, body);
  const ingestCpu = await cpuSince(bench, before);
  return { jobs: [await measureJob(bench)], ingestMs, ingestCpu, sessionId };
}

/**
 * Live as the server runs it: its background call worker on (woken by each chunk with call
 * items) while the chunks are uploaded one after the other, so a job takes whatever chunks
 * arrived while the previous one ran. Without a coalescing window: uploads back to back compress
 * the call ~700-fold, where any window would stand for minutes (the paced runs measure windows). Processing CPU is the run's CPU minus `ingestCpu` (what
 * ingesting the same chunks cost without a worker).
 */
async function background(bench: Bench, items: readonly WireItem[], start: number, ingestCpu: number) {
  const sessionId = `ses_${ulid()}`;
  // A second app on the same services, as `pnpm start` runs it: its call worker started.
  const server = await buildApp(
    {
      ...bench.services,
      configuration: { ...bench.services.configuration, callWorker: true, callCoalesceMs: 0 },
    },
    { logger: false },
  );
  const database = bench.services.database.database;
  const started = performance.now();
  const before = await cpuMark(bench);
  try {
    for (const body of chunksOf(sessionId, items, start)) {
      const response = await postChunk(server, bench.projectKey, body);
      if (response.statusCode !== 200) throw new Error(`ingest: ${response.statusCode} ${response.body}`);
    }
    for (;;) {
      const { rows } = await sql<{ left: number }>`
        select count(*)::int as left from processing_jobs where session_id = ${sessionId}`.execute(database);
      if (rows[0]?.left === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    await server.close();
  }
  const cpu = await cpuSince(bench, before);
  // Every job that ran wrote the session's progress once: its version counts them.
  const { rows } = await sql<{ version: number }>`
    select version from call_progress where session_id = ${sessionId}`.execute(database);
  return {
    sessionId,
    processingCpu: cpu - ingestCpu,
    seconds: (performance.now() - started) / 1000,
    jobs: rows[0]?.version ?? 0,
  };
}

/**
 * Live at a pace: the chunks uploaded one every `paceMs` (the call's real pace compressed in
 * time) while a background call worker with a coalescing window of `coalesceMs` runs, woken by
 * each upload as ingest wakes the server's own; with `coalesceMs` null, the uploads alone (no
 * worker; the session's job is run afterwards, unmeasured). Reports the run's CPU, the jobs and,
 * per chunk, the time from its upload's answer to the end of the job that processed it.
 */
async function paced(
  bench: Bench,
  items: readonly WireItem[],
  start: number,
  paceMs: number,
  coalesceMs: number | null,
) {
  const sessionId = `ses_${ulid()}`;
  const bodies = chunksOf(sessionId, items, start);
  const acknowledged: number[] = [];
  const latencies: number[] = [];
  let read = 0;
  let jobs = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const worker =
    coalesceMs === null
      ? undefined
      : createProcessingWorker(bench.dependencies, {
          coalesceMs,
          onJob: (job, result) => {
            if (job.sessionId !== sessionId) return;
            jobs += 1;
            const now = performance.now();
            for (let seq = read; seq < read + result.chunksRead; seq++)
              latencies.push(now - (acknowledged[seq] ?? now));
            read += result.chunksRead;
            if (read >= bodies.length) done();
          },
        });
  worker?.start();
  const before = await cpuMark(bench);
  const began = performance.now();
  try {
    for (const [seq, body] of bodies.entries()) {
      const wait = began + seq * paceMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const response = await postChunk(bench.app, bench.projectKey, body);
      if (response.statusCode !== 200) throw new Error(`ingest: ${response.statusCode} ${response.body}`);
      acknowledged[seq] = performance.now();
      worker?.wake({ projectId: bench.projectId, sessionId });
    }
    if (worker !== undefined) await finished;
  } finally {
    await worker?.stop();
  }
  const cpu = await cpuSince(bench, before);
  if (worker === undefined) await measureJob(bench);
  const sorted = [...latencies].sort((a, b) => a - b);
  const quantile = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    sessionId,
    jobs,
    cpu,
    latency: { p50: quantile(0.5), p95: quantile(0.95), max: sorted[sorted.length - 1] ?? Number.NaN },
  };
}

/** A session's calls as stored (rows, series, event markers, findings), without what names the session. */
async function stored(bench: Bench, sessionId: string): Promise<string> {
  const database = bench.services.database.database;
  const ids = await database
    .selectFrom('calls')
    .select('id')
    .where('project_id', '=', bench.projectId)
    .where('session_id', '=', sessionId)
    .orderBy('pc')
    .execute();
  const details = [];
  for (const { id } of ids) {
    const detail = await findCallDetail(database, bench.projectId, id);
    if (detail === undefined) continue;
    const {
      id: _id,
      session_id: _session,
      created_at: _created,
      updated_at: _updated,
      ...call
    } = detail.call;
    details.push({
      call,
      tracks: detail.tracks.map(({ call_id: _call, ...track }) => track),
      events: detail.events.map((event) => event.item),
      findings: detail.findings.map(
        ({ session_id: _s, call_id: _c, created_at: _a, updated_at: _b, ...finding }) => finding,
      ),
    });
  }
  return JSON.stringify(details);
}

/** Median seconds of `pass` (at least 5 passes and 1 s). */
function timePasses(pass: () => number): number {
  const times: number[] = [];
  const started = performance.now();
  let sink = 0;
  while (times.length < 5 || performance.now() - started < 1000) {
    const before = performance.now();
    sink += pass();
    times.push((performance.now() - before) / 1000);
  }
  if (sink === Number.MIN_VALUE) console.log(sink);
  return median(times);
}

// ---------------------------------------------------------------------------------------------

const table = new Map<string, Partial<Record<Store, string>>>();
function record(row: string, store: Store, value: string): void {
  table.set(row, { ...table.get(row), [store]: value });
}

const work = await mkdtemp(join(tmpdir(), 'svc-bench-long-call-'));
let postgres: BenchPostgres | undefined;

async function open(store: Store): Promise<Bench> {
  const environment: Record<string, string> = {
    SVC_DATA_DIR: join(work, store),
    SVC_LOG_LEVEL: 'silent',
    SVC_CALL_WORKER: 'false',
    SVC_DELIVERY_WORKER: 'false',
  };
  if (store === 'postgres') {
    postgres ??= await startBenchPostgres();
    environment.DATABASE_URL = postgres.url;
    environment.SVC_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const services = await openServices(loadConfiguration(environment));
  const app = await buildApp(services, { logger: false });
  const organization = await createOrganization(services.database.database, 'bench');
  const project = await createProject(services.database.database, {
    organizationId: organization.id,
    name: `long call ${ulid()}`,
    masterKey: services.masterKey,
  });
  const dependencies: ProcessingDependencies = {
    database: services.database.database,
    blobStore: services.blobStore,
    masterKey: services.masterKey,
    log: app.log,
    appUrl: services.configuration.appUrl,
  };
  const postgresCpu =
    store === 'postgres' ? await createPostgresCpuReader(services.database.database as never) : undefined;
  return {
    store,
    services,
    app,
    projectKey: project.project_key,
    projectId: project.id,
    dependencies,
    postgresCpu,
  };
}

async function runStore(
  store: Store,
  call: ReturnType<typeof longCall>,
  start: number,
  detectPerSecond: number,
) {
  console.log(`\n${STORE_LABEL[store]}`);
  const bench = await open(store);
  try {
    // Warm-up: a 10-minute call, live (JIT, caches, the pool's connections).
    const warm = longCall(start - 86_400_000, 10);
    await live(bench, warm.items, start - 86_400_000);

    const liveRun = await live(bench, call.items, start);
    const backlogRun = await backlog(bench, call.items, start);
    const recomputeRun = RECOMPUTE ? await live(bench, call.items, start, true) : undefined;
    const backgroundRun = await background(bench, call.items, start, backlogRun.ingestCpu);
    // The uploads alone at the same pace: what the paced runs' CPU is counted from.
    const pacedIngest = await paced(bench, call.items, start, PACE_MS, null);
    const pacedRuns = [];
    for (const window of WINDOWS) {
      const run = await paced(bench, call.items, start, PACE_MS, window);
      pacedRuns.push({ window, ...run, processingCpu: run.cpu - pacedIngest.cpu });
    }

    const chunks = liveRun.jobs.length;
    const liveCpu = sum(liveRun.jobs.map(cpuOf));
    const backlogCpu = sum(backlogRun.jobs.map(cpuOf));
    const first = liveRun.jobs.slice(0, ENDS);
    const last = liveRun.jobs.slice(-ENDS);
    const firstCpu = median(first.map(cpuOf));
    const lastCpu = median(last.map(cpuOf));
    const firstWall = median(first.map((job) => job.wallMs));
    const lastWall = median(last.map((job) => job.wallMs));
    const liveWall = sum(liveRun.jobs.map((job) => job.wallMs));
    const backlogWall = sum(backlogRun.jobs.map((job) => job.wallMs));
    const perSecond = call.trackSamples / ((liveRun.ingestMs + liveWall) / 1000);
    const database =
      store === 'postgres'
        ? ` (PostgreSQL's processes ${count(sum(liveRun.jobs.map((job) => job.databaseCpu)) / 1000)} ms of it)`
        : '';

    console.log(
      `  live, ${chunks} chunks each followed by its job: processing CPU ${count(liveCpu / 1000)} ms${database}, jobs' wall time ${count(liveWall)} ms; ingest ${count(liveRun.ingestMs)} ms`,
    );
    console.log(
      `  ingest CPU per chunk: ${(liveRun.ingestCpu / chunks / 1000).toFixed(2)} ms live (each between two jobs), ${(backlogRun.ingestCpu / chunks / 1000).toFixed(2)} ms for the backlog (one after the other)`,
    );
    console.log(
      `  backlog, one job over the same ${chunks} chunks: processing CPU ${count(backlogCpu / 1000)} ms, wall ${count(backlogWall)} ms`,
    );
    console.log(
      `  live / backlog: CPU ${ratio(liveCpu, backlogCpu)}, wall ${ratio(liveWall, backlogWall)} (target ≤ 2x: ${liveCpu <= 2 * backlogCpu ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  one job, median of the first ${ENDS} / of the last ${ENDS}: CPU ${(firstCpu / 1000).toFixed(2)} / ${(lastCpu / 1000).toFixed(2)} ms = ${ratio(lastCpu, firstCpu)}, wall ${firstWall.toFixed(2)} / ${lastWall.toFixed(2)} ms = ${ratio(lastWall, firstWall)} (target ≤ 2x: ${lastCpu <= 2 * firstCpu ? 'met' : 'NOT met'}); scores summed again from all samples in ${sum(liveRun.jobs.map((job) => job.rescored))} jobs`,
    );
    console.log(
      `  ingest to findings, live: ${count(perSecond)} track-samples/s = ${small(perSecond, detectPerSecond)} detect() in-process`,
    );
    record(
      `live: processing CPU, ${chunks} jobs (wall)`,
      store,
      `${count(liveCpu / 1000)} ms (${count(liveWall)} ms)`,
    );
    record(
      'backlog: processing CPU, 1 job (wall)',
      store,
      `${count(backlogCpu / 1000)} ms (${count(backlogWall)} ms)`,
    );
    record(
      'live / backlog, CPU (target ≤ 2x)',
      store,
      `**${ratio(liveCpu, backlogCpu)}** (wall ${ratio(liveWall, backlogWall)})`,
    );
    record(
      `one job: first ${ENDS} / last ${ENDS}, median CPU (target ≤ 2x)`,
      store,
      `${(firstCpu / 1000).toFixed(2)} / ${(lastCpu / 1000).toFixed(2)} ms: **${ratio(lastCpu, firstCpu)}** (wall ${ratio(lastWall, firstWall)})`,
    );
    record(
      'live: ingest to findings, track-samples/s (/ detect())',
      store,
      `${count(perSecond)} (${small(perSecond, detectPerSecond)})`,
    );
    const backgroundPerSecond = call.trackSamples / backgroundRun.seconds;
    console.log(
      `  live with the server's background worker (chunks uploaded back to back): ${backgroundRun.jobs} jobs for ${chunks} chunks; processing CPU ≈ ${count(backgroundRun.processingCpu / 1000)} ms (the run's CPU minus ingest's) = ${ratio(backgroundRun.processingCpu, backlogCpu)} the backlog; ingest to findings ${count(backgroundPerSecond)} track-samples/s = ${small(backgroundPerSecond, detectPerSecond)} detect()`,
    );
    record(
      "live, the server's background worker: jobs; processing CPU (/ backlog)",
      store,
      `${backgroundRun.jobs} jobs; ${count(backgroundRun.processingCpu / 1000)} ms (${ratio(backgroundRun.processingCpu, backlogCpu)})`,
    );
    console.log(
      `  paced uploads alone (no worker), an upload every ${PACE_MS} ms: ingest CPU ${(pacedIngest.cpu / chunks / 1000).toFixed(2)} ms per chunk; the paced runs' processing CPU is their CPU minus this run's`,
    );
    for (const run of pacedRuns) {
      const label = `paced, an upload every ${PACE_MS} ms, window ${run.window} ms: jobs; processing CPU (/ backlog); chunk to findings p50 / p95 / max`;
      const value = `${run.jobs} jobs; ${count(run.processingCpu / 1000)} ms (${ratio(run.processingCpu, backlogCpu)}); ${run.latency.p50.toFixed(0)} / ${run.latency.p95.toFixed(0)} / ${run.latency.max.toFixed(0)} ms`;
      console.log(`  ${label}: ${value}`);
      record(label, store, value);
    }
    if (recomputeRun !== undefined) {
      const recomputeCpu = sum(recomputeRun.jobs.map(cpuOf));
      const recomputeLast = median(recomputeRun.jobs.slice(-ENDS).map(cpuOf));
      const recomputeFirst = median(recomputeRun.jobs.slice(0, ENDS).map(cpuOf));
      console.log(
        `  baseline, every job recomputing the session from all its items (before): processing CPU ${count(recomputeCpu / 1000)} ms = ${ratio(recomputeCpu, backlogCpu)} the backlog; last / first job ${(recomputeFirst / 1000).toFixed(2)} / ${(recomputeLast / 1000).toFixed(2)} ms = ${ratio(recomputeLast, recomputeFirst)}`,
      );
      record(
        'baseline, a full recompute per chunk: CPU (/ backlog); last / first job',
        store,
        `${count(recomputeCpu / 1000)} ms (${ratio(recomputeCpu, backlogCpu)}); ${ratio(recomputeLast, recomputeFirst)}`,
      );
    }

    // The same rows, series and findings however the session was processed, and detect()'s findings.
    const expected = await stored(bench, backlogRun.sessionId);
    const liveStored = await stored(bench, liveRun.sessionId);
    const recomputeStored =
      recomputeRun === undefined ? expected : await stored(bench, recomputeRun.sessionId);
    const backgroundStored = await stored(bench, backgroundRun.sessionId);
    const pacedStored = [];
    for (const run of pacedRuns) pacedStored.push(await stored(bench, run.sessionId));
    const sessionEnd = Math.max(
      ...chunksOf('ses_x', call.items, start).map((body) => JSON.parse(body.toString()).sentAt),
    );
    const findings = detect(call.items as unknown as Array<CallSample | CallEvent>, { now: sessionEnd });
    const storedFindings = (JSON.parse(liveStored) as Array<{ findings: Array<{ kind: string }> }>).flatMap(
      (call) => call.findings.map((finding) => finding.kind),
    );
    const identical =
      liveStored === expected &&
      recomputeStored === expected &&
      backgroundStored === expected &&
      pacedStored.every((each) => each === expected) &&
      JSON.stringify(storedFindings.sort()) ===
        JSON.stringify(findings.map((finding) => finding.kind).sort());
    console.log(
      `  stored calls, series and findings: ${identical ? 'identical' : 'MISMATCH'} live, backlog, background worker, paced${recomputeRun === undefined ? '' : ', recomputed per chunk'}; findings ${findings.map((finding) => finding.kind).join(', ')} (as detect())`,
    );
    record(
      'stored rows, series and findings the same in every run, and as detect()',
      store,
      identical ? 'yes' : '**MISMATCH**',
    );
  } finally {
    await bench.app.close();
    await bench.services.close();
  }
}

const start = Date.UTC(2026, 10, 20, 9, 0, 0);
const call = longCall(start, MINUTES);
const samples = call.items.filter((item) => item.type === 'call.sample').length;
console.log(
  `@svc/api long-call benchmark: node ${process.version}; one ${MINUTES}-minute call, ${count(samples)} samples x 4 tracks = ${count(call.trackSamples)} track samples, ${chunksOf('ses_x', call.items, start).length} chunks of 10 s; stores: ${[...STORES].join(', ')}`,
);
const detectSeconds = timePasses(() => detect(call.items as unknown as Array<CallSample | CallEvent>).length);
const detectPerSecond = call.trackSamples / detectSeconds;
console.log(`  detect() in this process over the same items: ${count(detectPerSecond)} track-samples/s`);
const benchStarted = performance.now();
try {
  for (const store of ['embedded', 'postgres'] as const) {
    if (!STORES.has(store)) continue;
    record('detect() in-process, track-samples/s', store, count(detectPerSecond));
    await runStore(store, call, start, detectPerSecond);
  }
  const stores = (['embedded', 'postgres'] as const).filter((store) => STORES.has(store));
  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  console.log(`| long call | ${stores.map((store) => STORE_LABEL[store]).join(' | ')} |`);
  console.log(`|---|${stores.map(() => '---').join('|')}|`);
  for (const [row, cells] of table)
    console.log(`| ${row} | ${stores.map((store) => cells[store] ?? '').join(' | ')} |`);
} finally {
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
