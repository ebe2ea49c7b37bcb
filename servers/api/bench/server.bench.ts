/**
 * `pnpm bench` for the reference server. Every server runs as its own process on 127.0.0.1 and
 * autocannon runs here, so load generator and server do not share an event loop.
 *
 * 1. Ingest throughput: acknowledged chunks per second of POST /v1/ingest (json+deflate, every
 *    request a new (sessionId, seq), so every 200 is a durable write), next to a bare Fastify
 *    route that writes and fsyncs the same bodies in the same run (bench/fsync-server.ts); on the
 *    embedded store (PGlite + files, fresh data directory) and on PostgreSQL (+ files). The
 *    routes are loaded in turn, round after round, and each ratio compares runs of the same
 *    round, so a slow minute of a shared machine does not land on one side only.
 * 2. GET /v1/sessions with filters over 100k sessions on PostgreSQL: p50/p95 per query, next to
 *    an authenticated one-row call (GET /v1/projects/current); EXPLAIN of any query over 100 ms.
 * 3. Memory of the embedded server (VmRSS/VmHWM of its process): first start, at rest, under
 *    the ingest load, after it, and reopened.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_SECONDS (per load run, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 64),
 * BENCH_SESSIONS (default 100000), BENCH_ONLY (comma list of embedded, postgres),
 * SVC_BENCH_DATABASE_URL (use that PostgreSQL instead of starting one).
 */

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChunkBodies } from './chunks.ts';
import { explainSessionList } from './explain.ts';
import { describeLoad, type LoadResult, runLoad } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import {
  type Child,
  createBenchProcesses,
  freePort,
  megabytes,
  readMachineCpu,
  readMemory,
  readProcessCpu,
  resetPeakMemory,
  sampleMemory,
  tailOf,
  waitUntilReady,
} from './processes.ts';
import { seedSessions } from './seed-sessions.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
// 64 uploads in flight: an ingest server faces many SDKs at once (each with one request in
// flight per session), and both routes are measured at the same concurrency.
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100_000);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
const WARM_UP_SECONDS = 2;
const LIST_SECONDS = 3;
const SLOW_LIST_MS = 100;

const work = await mkdtemp(join(tmpdir(), 'svc-bench-'));
let postgres: BenchPostgres | undefined;
const summary: string[] = [];

const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

const processes = createBenchProcesses(work, 120_000);
const { start, startApi, stop } = processes;

const INGEST_HEADERS = { 'content-type': 'application/octet-stream', 'x-service-encoding': 'json+deflate' };

/** An ingest target: a server, and what loading it sends. */
interface IngestTarget {
  label: string;
  url: string;
  projectKey: string;
  /** The server's process, for CPU accounting. */
  pid: number;
  bodies: ReturnType<typeof createChunkBodies>;
  results: LoadResult[];
  /** CPU per acknowledged request of each measured run (Linux only). */
  cpu: RunCpu[];
}

function ingestTarget(label: string, url: string, projectKey: string, pid: number): IngestTarget {
  return {
    label,
    url,
    projectKey,
    pid,
    bodies: createChunkBodies({ concurrentSessions: CONNECTIONS }),
    results: [],
    cpu: [],
  };
}

/** One load run of POST /v1/ingest with fresh chunks; fails on any non-2xx answer. */
async function ingestRun(target: IngestTarget, seconds: number): Promise<LoadResult> {
  const result = await runLoad({
    url: `${target.url}/v1/ingest`,
    method: 'POST',
    headers: { ...INGEST_HEADERS, 'x-service-project-key': target.projectKey },
    body: () => target.bodies.next(),
    connections: CONNECTIONS,
    duration: seconds,
  });
  if (result.non2xx + result.errors > 0) {
    throw new Error(
      `${target.label} answered ${result.non2xx} non-2xx, ${result.errors} errors: ${result.firstFailure}`,
    );
  }
  return result;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * Warms every target up, then loads them in turn for ROUNDS rounds. `onRun` is called around
 * each measured run (memory sampling of the embedded server).
 */
async function compareIngest(
  baseline: IngestTarget,
  targets: IngestTarget[],
  onRun?: (target: IngestTarget, phase: 'start' | 'end') => void,
): Promise<void> {
  for (const target of [baseline, ...targets]) await ingestRun(target, WARM_UP_SECONDS);
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const target of [baseline, ...targets]) {
      onRun?.(target, 'start');
      const before = { server: readProcessCpu(target.pid), machine: readMachineCpu() };
      const result = await ingestRun(target, SECONDS);
      const cpu = cpuPerRequest(
        before,
        { server: readProcessCpu(target.pid), machine: readMachineCpu() },
        result.ok,
      );
      onRun?.(target, 'end');
      target.results.push(result);
      if (cpu !== undefined) target.cpu.push(cpu);
      printLoad(`round ${round}: ${target.label}`, result);
      if (cpu !== undefined) console.log(`  ${''.padEnd(34)} ${describeCpu(cpu)}`);
    }
  }
  const baseRates = baseline.results.map((result) => result.perSecond);
  const baseLine = `bare write+fsync route: median ${Math.round(median(baseRates))} requests/s (${Math.round(Math.min(...baseRates))}–${Math.round(Math.max(...baseRates))})`;
  console.log(`  ${baseLine}`);
  summary.push(baseLine);
  for (const target of targets) {
    const rates = target.results.map((result) => result.perSecond);
    const ratios = target.results.map((result, index) => result.perSecond / (baseRates[index] as number));
    const ratioMedian = median(ratios);
    // Two decimals, rounded down, so the printed ratio and the verdict never disagree.
    const shown = (ratio: number) => (Math.floor(ratio * 100) / 100).toFixed(2);
    const line = `ingest (${target.label}): median ${Math.round(median(rates))} chunks/s = ${shown(ratioMedian)}x the bare fsync route in the same round (rounds ${ratios.map(shown).join(', ')}) (target >= 0.5: ${ratioMedian >= 0.5 ? 'met' : 'NOT met'})`;
    console.log(`  ${line}`);
    summary.push(line);
  }
  for (const target of [baseline, ...targets]) {
    if (target.cpu.length === 0) continue;
    const middle = (pick: (cpu: RunCpu) => number) => Math.round(median(target.cpu.map(pick)));
    const line = `CPU per acknowledged request (${target.label}, median of rounds): server process ${middle((cpu) => cpu.serverUser)} us user + ${middle((cpu) => cpu.serverSystem)} us system; whole machine (load generator and kernel included) ${middle((cpu) => cpu.machineUser)} us user + ${middle((cpu) => cpu.machineSystem)} us system, ${middle((cpu) => cpu.machineIdle)} us idle`;
    console.log(`  ${line}`);
    summary.push(line);
  }
}

/** CPU time per acknowledged request of one load run, in microseconds. */
interface RunCpu {
  serverUser: number;
  serverSystem: number;
  machineUser: number;
  machineSystem: number;
  machineIdle: number;
}

function cpuPerRequest(
  before: { server: ReturnType<typeof readProcessCpu>; machine: ReturnType<typeof readMachineCpu> },
  after: { server: ReturnType<typeof readProcessCpu>; machine: ReturnType<typeof readMachineCpu> },
  requests: number,
): RunCpu | undefined {
  if (
    requests === 0 ||
    before.server === undefined ||
    after.server === undefined ||
    before.machine === undefined ||
    after.machine === undefined
  )
    return undefined;
  return {
    serverUser: (after.server.user - before.server.user) / requests,
    serverSystem: (after.server.system - before.server.system) / requests,
    machineUser: (after.machine.user - before.machine.user) / requests,
    machineSystem: (after.machine.system - before.machine.system) / requests,
    machineIdle: (after.machine.idle - before.machine.idle) / requests,
  };
}

function describeCpu(cpu: RunCpu): string {
  const us = (value: number) => `${Math.round(value)} us`;
  return `CPU per request: server ${us(cpu.serverUser)} user + ${us(cpu.serverSystem)} sys; machine ${us(cpu.machineUser)} user + ${us(cpu.machineSystem)} sys, ${us(cpu.machineIdle)} idle`;
}

function printLoad(label: string, result: LoadResult): void {
  console.log(`  ${label.padEnd(34)} ${describeLoad(result)}`);
}

async function startBaseline(): Promise<IngestTarget> {
  const directory = join(work, 'fsync-baseline');
  await mkdir(directory);
  const port = await freePort();
  const child = start('fsync baseline', 'bench/fsync-server.ts', {
    arguments: [String(port), directory],
    logFile: join(work, 'fsync-baseline.log'),
  });
  await waitUntilReady(child, `http://127.0.0.1:${port}/healthz`);
  return ingestTarget('bare route', `http://127.0.0.1:${port}`, 'pk_baseline', child.pid);
}

interface EmbeddedServer {
  target: IngestTarget;
  child: Child;
  startSeconds: number;
  afterStart: ReturnType<typeof readMemory>;
  atRest: ReturnType<typeof readMemory>;
  dataDirectory: string;
  sampler?: ReturnType<typeof sampleMemory>;
  samples: number[];
  peakReset: boolean;
}

async function startEmbedded(): Promise<EmbeddedServer> {
  const dataDirectory = join(work, 'embedded');
  const first = await startApi('embedded', { SVC_DATA_DIR: dataDirectory });
  const afterStart = readMemory(first.child.pid);
  await sleep(1000);
  const atRest = readMemory(first.child.pid);
  const credentials = JSON.parse(await readFile(join(dataDirectory, 'first-project.json'), 'utf8')) as {
    projectKey: string;
  };
  return {
    target: ingestTarget('embedded', first.url, credentials.projectKey, first.child.pid),
    child: first.child,
    startSeconds: first.startSeconds,
    afterStart,
    atRest,
    dataDirectory,
    samples: [],
    peakReset: false,
  };
}

/** Samples the embedded server's memory during its measured runs. */
function embeddedSampler(server: EmbeddedServer) {
  return (target: IngestTarget, phase: 'start' | 'end') => {
    if (target !== server.target) return;
    if (phase === 'start') {
      if (!server.peakReset) server.peakReset = resetPeakMemory(server.child.pid);
      server.sampler = sampleMemory(server.child.pid);
    } else {
      const sampled = server.sampler?.stop();
      // The second half of each run: steady state.
      if (sampled !== undefined)
        server.samples.push(...sampled.samples.slice(Math.floor(sampled.samples.length / 2)));
      if (!server.peakReset && sampled !== undefined) server.samples.push(sampled.max);
    }
  };
}

async function reportEmbeddedMemory(server: EmbeddedServer): Promise<void> {
  const underLoad = readMemory(server.child.pid);
  await sleep(2000);
  const afterLoad = readMemory(server.child.pid);
  await stop(server.child);

  const reopened = await startApi('embedded-reopened', { SVC_DATA_DIR: server.dataDirectory });
  await sleep(1000);
  const reopenedAtRest = readMemory(reopened.child.pid);
  await stop(reopened.child);

  const steady = [...server.samples].sort((a, b) => a - b);
  const steadyMedian = steady[Math.floor(steady.length / 2)] ?? 0;
  const peakUnderLoad = server.peakReset && underLoad !== undefined ? underLoad.peak : Math.max(0, ...steady);
  console.log('\nEmbedded store memory (RSS of the server process):');
  console.log(
    `  first start (creates the database in a child process): ${server.startSeconds.toFixed(1)} s, peak ${megabytes(server.afterStart?.peak ?? 0)}, then ${megabytes(server.atRest?.rss ?? 0)} at rest`,
  );
  console.log(
    `  under ingest load: peak ${megabytes(peakUnderLoad)}${server.peakReset ? '' : ' (sampled)'}, steady ${megabytes(steadyMedian)}; 2 s after: ${megabytes(afterLoad?.rss ?? 0)}`,
  );
  console.log(
    `  reopened (${reopened.startSeconds.toFixed(1)} s to ready): peak ${megabytes(reopenedAtRest?.peak ?? 0)}, ${megabytes(reopenedAtRest?.rss ?? 0)} at rest`,
  );
  summary.push(
    `memory (embedded): ${megabytes(reopenedAtRest?.rss ?? 0)} at rest (reopened), ${megabytes(server.atRest?.rss ?? 0)} at rest after the first start (peak ${megabytes(server.afterStart?.peak ?? 0)}), ${megabytes(steadyMedian)} steady / ${megabytes(peakUnderLoad)} peak under ingest load`,
  );
}

interface PostgresServer {
  target: IngestTarget;
  server: Awaited<ReturnType<typeof startApi>>;
  environment: Record<string, string>;
}

async function startPostgresServer(): Promise<PostgresServer> {
  const startedPostgres = performance.now();
  postgres = await startBenchPostgres();
  console.log(
    `  PostgreSQL ${postgres.started ? `started (fsync on) in ${((performance.now() - startedPostgres) / 1000).toFixed(1)} s` : 'from SVC_BENCH_DATABASE_URL'}`,
  );
  const environment = {
    DATABASE_URL: postgres.url,
    SVC_DATA_DIR: join(work, 'postgres'),
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
  };
  const server = await startApi('postgres', environment);
  const project = await createProject(environment, 'bench-ingest');
  return {
    target: ingestTarget('PostgreSQL', server.url, project.projectKey, server.child.pid),
    server,
    environment,
  };
}

async function createProject(environment: Record<string, string>, name: string) {
  const cli = start(`create-project ${name}`, 'src/cli.ts', {
    arguments: ['create-project', '--name', name, '--json'],
    environment,
    logFile: join(work, `create-project-${name}.log`),
  });
  const code = await cli.exited;
  if (code !== '0') throw new Error(`create-project failed (${code}):\n${tailOf(cli)}`);
  return JSON.parse(tailOf(cli, 1)) as { projectId: string; projectKey: string; apiToken: string };
}

interface ListQuery {
  name: string;
  search: string;
}

async function listSessions(pg: PostgresServer): Promise<void> {
  const { server, environment } = pg;
  if (postgres === undefined) throw new Error('PostgreSQL is not running');
  try {
    const listProject = await createProject(environment, 'bench-list');
    const seeded = await seedSessions(postgres.url, listProject.projectId, SESSIONS);
    console.log(
      `\n  GET /v1/sessions over ${seeded.count.toLocaleString('en-US')} sessions (seeded in ${seeded.seconds.toFixed(1)} s), 1 connection, ${LIST_SECONDS} s each`,
    );
    const headers = { authorization: `Bearer ${listProject.apiToken}` };
    const day = 24 * 3600 * 1000;
    const queries: ListQuery[] = [
      { name: 'no filter', search: '' },
      { name: 'hasErrors=true', search: 'hasErrors=true' },
      { name: 'browser + device', search: 'browser=firefox&device=mobile' },
      { name: 'level=high', search: 'level=high' },
      {
        name: 'from/to (one day)',
        search: `from=${new Date(seeded.newest - 10 * day).toISOString()}&to=${new Date(seeded.newest - 9 * day).toISOString()}`,
      },
      { name: 'urlContains', search: 'urlContains=billing' },
      { name: 'q (a user)', search: 'q=user4711%40example' },
      {
        name: 'rare: tablet + Samsung + errors',
        search: 'device=tablet&browser=Samsung%20Internet&hasErrors=true',
      },
      { name: 'hasGaps=true', search: 'hasGaps=true' },
      { name: 'limit=200', search: 'limit=200' },
    ];
    // Page 2 of the errors list, from a real nextCursor.
    const firstPage = (await (
      await fetch(`${server.url}/v1/sessions?hasErrors=true`, { headers })
    ).json()) as {
      nextCursor?: string;
    };
    if (firstPage.nextCursor !== undefined) {
      queries.push({
        name: 'hasErrors, page 2 (cursor)',
        search: `hasErrors=true&cursor=${firstPage.nextCursor}`,
      });
    }

    const floor = await runLoad({
      url: `${server.url}/v1/projects/current`,
      headers,
      connections: 1,
      duration: LIST_SECONDS,
    });
    console.log(
      `  ${'GET /v1/projects/current (floor)'.padEnd(34)} p50 ${floor.p50.toFixed(1)} ms  p95 ${floor.p95.toFixed(1)} ms`,
    );
    const slow: ListQuery[] = [];
    let worst = { name: '', p95: 0 };
    for (const query of queries) {
      const url = `${server.url}/v1/sessions${query.search === '' ? '' : `?${query.search}`}`;
      const page = (await (await fetch(url, { headers })).json()) as { items?: unknown[] };
      const result = await runLoad({ url, headers, connections: 1, duration: LIST_SECONDS });
      if (result.non2xx + result.errors > 0) throw new Error(`${query.name}: ${result.firstFailure}`);
      console.log(
        `  ${query.name.padEnd(34)} p50 ${result.p50.toFixed(1).padStart(6)} ms  p95 ${result.p95.toFixed(1).padStart(6)} ms  = ${ratio(result.p95, floor.p95).padStart(6)} the floor  (${page.items?.length ?? 0} rows, ${Math.round(result.perSecond)}/s)`,
      );
      if (result.p95 > worst.p95) worst = { name: query.name, p95: result.p95 };
      if (result.p95 > SLOW_LIST_MS) slow.push(query);
    }
    for (const query of slow) {
      const plan = await explainSessionList(
        postgres.url,
        listProject.projectId,
        new URLSearchParams(query.search),
      );
      console.log(`\n  EXPLAIN ANALYZE, ${query.name}:\n${plan.replace(/^/gm, '    ')}`);
    }
    summary.push(
      `GET /v1/sessions over ${seeded.count.toLocaleString('en-US')} sessions (PostgreSQL): worst p95 ${worst.p95.toFixed(1)} ms (${worst.name}) = ${ratio(worst.p95, floor.p95)} an authenticated one-row call; ${slow.length === 0 ? `every query under ${SLOW_LIST_MS} ms` : `${slow.length} over ${SLOW_LIST_MS} ms`}`,
    );
    const memory = readMemory(server.child.pid);
    console.log(
      `\n  server memory (PostgreSQL): ${megabytes(memory?.rss ?? 0)} RSS, peak ${megabytes(memory?.peak ?? 0)}`,
    );
  } finally {
    await stop(server.child);
  }
}

console.log(
  `@svc/api server benchmark: node ${process.version}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per route (after ${WARM_UP_SECONDS} s warm-up)`,
);
try {
  console.log('\nStarting: the bare route, then each store');
  const baseline = await startBaseline();
  const embeddedServer = ONLY.has('embedded') ? await startEmbedded() : undefined;
  const postgresServer = ONLY.has('postgres') ? await startPostgresServer() : undefined;
  const targets = [embeddedServer?.target, postgresServer?.target].filter(
    (target): target is IngestTarget => target !== undefined,
  );
  console.log('\nIngest, routes in turn');
  await compareIngest(
    baseline,
    targets,
    embeddedServer === undefined ? undefined : embeddedSampler(embeddedServer),
  );
  if (embeddedServer !== undefined) await reportEmbeddedMemory(embeddedServer);
  if (postgresServer !== undefined) {
    console.log('\nPostgreSQL (+ files)');
    await listSessions(postgresServer);
  }
  console.log('\nSummary');
  for (const line of summary) console.log(`  ${line}`);
} finally {
  await processes.stopAll();
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
