/**
 * `pnpm bench` for the reference server. Every server runs as its own process on 127.0.0.1 and
 * autocannon runs here, so load generator and server do not share an event loop.
 *
 * 1. Ingest throughput: acknowledged chunks per second of POST /v1/ingest (json+deflate, every
 *    request a new (sessionId, seq), so every 200 is a durable write), next to a bare Fastify
 *    route that writes and fsyncs the same bodies in the same run (bench/fsync-server.ts); on the
 *    embedded store (PGlite + files, fresh data directory) and on PostgreSQL (+ files).
 * 2. GET /v1/sessions with filters over 100k sessions on PostgreSQL: p50/p95 per query, next to
 *    an authenticated one-row call (GET /v1/projects/current); EXPLAIN of any query over 100 ms.
 * 3. Memory of the embedded server (VmRSS/VmHWM of its process): first start, at rest, under
 *    the ingest load, after it, and reopened.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_SECONDS (per load run, default 10), BENCH_CONNECTIONS (default 64),
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
  freePort,
  megabytes,
  readMemory,
  resetPeakMemory,
  sampleMemory,
  startNode,
  tailOf,
  waitUntilReady,
} from './processes.ts';
import { seedSessions } from './seed-sessions.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
// 64 uploads in flight: an ingest server faces many SDKs at once (each with one request in
// flight per session), and both routes are measured at the same concurrency.
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100_000);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
const WARM_UP_SECONDS = 2;
const LIST_SECONDS = 3;
const SLOW_LIST_MS = 100;

const work = await mkdtemp(join(tmpdir(), 'svc-bench-'));
const children: Child[] = [];
let postgres: BenchPostgres | undefined;
const summary: string[] = [];

const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function start(name: string, script: string, options: Parameters<typeof startNode>[2]): Child {
  const child = startNode(name, script, options);
  children.push(child);
  return child;
}

async function stop(child: Child): Promise<void> {
  const code = await child.stop();
  if (code !== '0') console.log(`  (${child.name} exited with ${code}:\n${tailOf(child, 5)})`);
}

/** A server of the real app as its own process; resolves once /readyz answers. */
async function startApi(name: string, environment: Record<string, string>) {
  const port = await freePort();
  const child = start(name, 'src/server.ts', {
    environment: { HOST: '127.0.0.1', PORT: String(port), SVC_LOG_LEVEL: 'info', ...environment },
    logFile: join(work, `${name}.log`),
  });
  const started = performance.now();
  await waitUntilReady(child, `http://127.0.0.1:${port}/readyz`, 120_000);
  return { child, url: `http://127.0.0.1:${port}`, startSeconds: (performance.now() - started) / 1000 };
}

const INGEST_HEADERS = { 'content-type': 'application/octet-stream', 'x-service-encoding': 'json+deflate' };

/** A warm-up run, then the measured run, of POST /v1/ingest with fresh chunks. */
async function ingestLoad(url: string, projectKey: string, onMeasure?: () => void): Promise<LoadResult> {
  const bodies = createChunkBodies({ concurrentSessions: CONNECTIONS });
  const options = {
    url: `${url}/v1/ingest`,
    method: 'POST' as const,
    headers: { ...INGEST_HEADERS, 'x-service-project-key': projectKey },
    body: () => bodies.next(),
    connections: CONNECTIONS,
  };
  await runLoad({ ...options, duration: WARM_UP_SECONDS });
  onMeasure?.();
  const result = await runLoad({ ...options, duration: SECONDS });
  if (result.non2xx + result.errors > 0) {
    throw new Error(
      `ingest answered ${result.non2xx} non-2xx, ${result.errors} errors: ${result.firstFailure}`,
    );
  }
  return result;
}

function printLoad(label: string, result: LoadResult): void {
  console.log(`  ${label.padEnd(34)} ${describeLoad(result)}`);
}

async function baselineIngest(): Promise<LoadResult> {
  const directory = join(work, 'fsync-baseline');
  await mkdir(directory);
  const port = await freePort();
  const child = start('fsync baseline', 'bench/fsync-server.ts', {
    arguments: [String(port), directory],
    logFile: join(work, 'fsync-baseline.log'),
  });
  await waitUntilReady(child, `http://127.0.0.1:${port}/healthz`);
  try {
    const result = await ingestLoad(`http://127.0.0.1:${port}`, 'pk_baseline');
    printLoad('bare Fastify write+fsync route', result);
    return result;
  } finally {
    await stop(child);
    await rm(directory, { recursive: true, force: true });
  }
}

function target(value: number, baseline: number): string {
  return `(target >= 0.5: ${value / baseline >= 0.5 ? 'met' : 'NOT met'})`;
}

async function embedded(baseline: LoadResult): Promise<void> {
  console.log('\nEmbedded store (PGlite + files), fresh data directory');
  const dataDirectory = join(work, 'embedded');
  const first = await startApi('embedded', { SVC_DATA_DIR: dataDirectory });
  const afterStart = readMemory(first.child.pid);
  await sleep(1000);
  const atRest = readMemory(first.child.pid);
  const credentials = JSON.parse(await readFile(join(dataDirectory, 'first-project.json'), 'utf8')) as {
    projectKey: string;
  };
  let sampler: ReturnType<typeof sampleMemory> | undefined;
  let peakReset = false;
  const result = await ingestLoad(first.url, credentials.projectKey, () => {
    peakReset = resetPeakMemory(first.child.pid);
    sampler = sampleMemory(first.child.pid);
  });
  const samples = sampler?.stop() ?? { samples: [], max: 0 };
  const underLoad = readMemory(first.child.pid);
  await sleep(2000);
  const afterLoad = readMemory(first.child.pid);
  await stop(first.child);

  const reopened = await startApi('embedded-reopened', { SVC_DATA_DIR: dataDirectory });
  await sleep(1000);
  const reopenedAtRest = readMemory(reopened.child.pid);
  await stop(reopened.child);

  printLoad('POST /v1/ingest', result);
  const line = `ingest (embedded): ${Math.round(result.perSecond)} chunks/s = ${ratio(result.perSecond, baseline.perSecond)} the bare fsync route ${target(result.perSecond, baseline.perSecond)}`;
  console.log(`  ${line}`);
  summary.push(line);

  const steady = samples.samples.slice(Math.floor(samples.samples.length / 2)).sort((a, b) => a - b);
  const median = steady[Math.floor(steady.length / 2)] ?? 0;
  const peakUnderLoad = peakReset && underLoad !== undefined ? underLoad.peak : samples.max;
  console.log(`  memory (RSS of the server process):`);
  console.log(
    `    first start (creates the database): ${first.startSeconds.toFixed(1)} s, peak ${megabytes(afterStart?.peak ?? 0)}, then ${megabytes(atRest?.rss ?? 0)} at rest`,
  );
  console.log(
    `    under ingest load: peak ${megabytes(peakUnderLoad)}${peakReset ? '' : ' (sampled)'}, steady ${megabytes(median)}; 2 s after: ${megabytes(afterLoad?.rss ?? 0)}`,
  );
  console.log(
    `    reopened (${reopened.startSeconds.toFixed(1)} s to ready): peak ${megabytes(reopenedAtRest?.peak ?? 0)}, ${megabytes(reopenedAtRest?.rss ?? 0)} at rest`,
  );
  summary.push(
    `memory (embedded): ${megabytes(reopenedAtRest?.rss ?? 0)} at rest (reopened), ${megabytes(median)} steady / ${megabytes(peakUnderLoad)} peak under ingest load; first start peaks at ${megabytes(afterStart?.peak ?? 0)}`,
  );
}

interface ListQuery {
  name: string;
  search: string;
}

async function postgresPart(baseline: LoadResult): Promise<void> {
  console.log('\nPostgreSQL (+ files)');
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
  try {
    const createProject = async (name: string) => {
      const cli = start(`create-project ${name}`, 'src/cli.ts', {
        arguments: ['create-project', '--name', name, '--json'],
        environment,
        logFile: join(work, `create-project-${name}.log`),
      });
      const code = await cli.exited;
      if (code !== '0') throw new Error(`create-project failed (${code}):\n${tailOf(cli)}`);
      return JSON.parse(tailOf(cli, 1)) as { projectId: string; projectKey: string; apiToken: string };
    };

    const ingestProject = await createProject('bench-ingest');
    const result = await ingestLoad(server.url, ingestProject.projectKey);
    printLoad('POST /v1/ingest', result);
    const line = `ingest (PostgreSQL): ${Math.round(result.perSecond)} chunks/s = ${ratio(result.perSecond, baseline.perSecond)} the bare fsync route ${target(result.perSecond, baseline.perSecond)}`;
    console.log(`  ${line}`);
    summary.push(line);

    const listProject = await createProject('bench-list');
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
  `@svc/api server benchmark: node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run (after ${WARM_UP_SECONDS} s warm-up)`,
);
try {
  console.log('\nBaseline');
  const baseline = await baselineIngest();
  if (ONLY.has('embedded')) await embedded(baseline);
  if (ONLY.has('postgres')) await postgresPart(baseline);
  console.log('\nSummary');
  console.log(`  bare write+fsync route: ${Math.round(baseline.perSecond)} requests/s`);
  for (const line of summary) console.log(`  ${line}`);
} finally {
  for (const child of children) await child.stop(5000);
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
