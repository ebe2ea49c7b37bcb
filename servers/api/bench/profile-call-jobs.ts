/**
 * Where a live call job's cost goes (not part of `pnpm bench`): the long call of
 * `long-call.bench.ts` uploaded chunk by chunk, each chunk followed by its job, as in the bench's
 * live run. Per job it measures the claim (which reads what the job needs) apart from the rest
 * of the job: wall time and CPU of this process (the worker, kysely, the driver and, on the
 * embedded store, PGlite's own thread), and on PostgreSQL the CPU of its processes. Prints
 * medians and means, the spread of whole jobs, and the costliest jobs with the garbage
 * collections that fell inside them.
 *
 * Alone: `pnpm --filter @svc/api exec node --conditions=@svc/source bench/profile-call-jobs.ts`.
 * Settings: BENCH_ONLY (embedded, postgres), BENCH_LONG_CALL_MINUTES (default 60); EXPLAIN=1
 * prints the plan of one claim (it runs it); TABLE_STATS=1 prints rows inserted, updated (HOT)
 * and deleted per table; PROFILE_WINDOWS=<file> writes each job's [start, end] on the clock of
 * `node --cpu-prof` profiles, and `node bench/profile-call-jobs.ts --summarize <windows>
 * <profile.cpuprofile>` sums a profile's samples inside them, by function.
 */

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { CompiledQuery, sql } from 'kysely';
import { ulid } from 'ulid';
import { buildApp } from '../src/app.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import {
  claimProcessingJobs,
  type ProcessingDependencies,
  type ProcessingResult,
  processSessionJob,
} from '../src/modules/processing/index.ts';
import { CLAIM_AND_LOAD_PROCESSING_JOBS } from '../src/modules/processing/jobs.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { postChunk } from '../test/ingest-helpers.ts';
import { chunksOf, longCall } from './long-call.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import { cpuSpent, createPostgresCpuReader } from './postgres-cpu.ts';

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const cpuNow = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** Sums the samples of a `--cpu-prof` profile that fall inside the windows, by function. */
function summarize(windowsFile: string, profileFile: string): void {
  const windows = JSON.parse(readFileSync(windowsFile, 'utf8')) as Array<[number, number]>;
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as {
    nodes: Array<{
      id: number;
      children?: number[];
      callFrame: { functionName: string; url: string; lineNumber: number };
    }>;
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const label = (id: number) => {
    const { functionName, url, lineNumber } = (nodes.get(id) as (typeof profile.nodes)[number]).callFrame;
    return `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber}`;
  };
  const own = new Map<string, number>();
  const within = new Map<string, number>();
  let time = profile.startTime;
  let window = 0;
  let busy = 0;
  for (const [index, id] of profile.samples.entries()) {
    time += profile.timeDeltas[index] ?? 0;
    const spent = profile.timeDeltas[index + 1] ?? 0;
    while (window < windows.length && (windows[window] as [number, number])[1] < time) window += 1;
    if (window >= windows.length || time < (windows[window] as [number, number])[0]) continue;
    if (nodes.get(id)?.callFrame.functionName === '(idle)') continue;
    busy += spent;
    own.set(label(id), (own.get(label(id)) ?? 0) + spent);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const name = label(at);
      if (!seen.has(name)) within.set(name, (within.get(name) ?? 0) + spent);
      seen.add(name);
    }
  }
  const jobs = windows.length;
  console.log(`busy inside ${jobs} jobs: ${(busy / jobs).toFixed(0)} µs a job`);
  for (const [title, totals] of [
    ['self', own],
    ['inclusive', within],
  ] as const) {
    console.log(`--- ${title}, µs a job`);
    for (const [name, value] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 40))
      console.log(`${(value / jobs).toFixed(1).padStart(8)} ${name}`);
  }
}

/** The plan of one claim and read (it claims the due job), then the job released again. */
async function explainClaim(services: OpenedServices): Promise<void> {
  const { rows } = await services.database.database.executeQuery<Record<string, string>>(
    CompiledQuery.raw(
      `explain (analyze, buffers, wal, settings off) ${CLAIM_AND_LOAD_PROCESSING_JOBS}`,
      [60, 8, 0, 1],
    ),
  );
  console.log('--- plan of the claim and read');
  for (const row of rows) console.log(Object.values(row)[0]);
  await sql`update processing_jobs set locked_until = null, attempts = 0`.execute(services.database.database);
}

async function profileStore(store: string, work: string, postgres: () => Promise<BenchPostgres>) {
  const environment: Record<string, string> = {
    SVC_DATA_DIR: join(work, store),
    SVC_LOG_LEVEL: 'silent',
    SVC_CALL_WORKER: 'false',
    SVC_DELIVERY_WORKER: 'false',
  };
  if (store === 'postgres') {
    environment.DATABASE_URL = (await postgres()).url;
    environment.SVC_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const services = await openServices(loadConfiguration(environment));
  const app = await buildApp(services, { logger: false });
  const database = services.database.database;
  const organization = await createOrganization(database, 'profile');
  const project = await createProject(database, {
    organizationId: organization.id,
    name: `profile ${ulid()}`,
    masterKey: services.masterKey,
  });
  const dependencies: ProcessingDependencies = {
    database,
    blobStore: services.blobStore,
    masterKey: services.masterKey,
    log: app.log,
    appUrl: services.configuration.appUrl,
  };
  const readPostgresCpu = store === 'postgres' ? await createPostgresCpuReader(database as never) : undefined;
  const collections: Array<{ at: number; duration: number; kind: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      collections.push({
        at: entry.startTime,
        duration: entry.duration,
        kind: (entry as { detail?: { kind?: number } }).detail?.kind ?? 0,
      });
  });
  observer.observe({ entryTypes: ['gc'] });
  const jobs: Array<{
    claimWall: number;
    claimCpu: number;
    wall: number;
    cpu: number;
    databaseCpu: number;
    collections: string;
    results: ProcessingResult[];
  }> = [];
  const windows: Array<[number, number]> = [];
  try {
    const start = Date.UTC(2026, 10, 20, 9, 0, 0);
    const minutes = Number(process.env.BENCH_LONG_CALL_MINUTES ?? 60);
    // A 10-minute call first, unmeasured (JIT, caches, prepared statements).
    for (const [at, length, measured] of [
      [start - 86_400_000, 10, false],
      [start, minutes, true],
    ] as const) {
      const call = longCall(at, length);
      for (const [seq, body] of chunksOf(`ses_${ulid()}`, call.items, at).entries()) {
        const response = await postChunk(app, project.project_key, body);
        if (response.statusCode !== 200) throw new Error(`ingest: ${response.statusCode}`);
        if (measured && seq === 300 && process.env.EXPLAIN === '1') await explainClaim(services);
        const databaseBefore = readPostgresCpu?.();
        const began = performance.now();
        const windowStart = Number(process.hrtime.bigint() / 1000n);
        const cpuBefore = cpuNow();
        const claimed = await claimProcessingJobs(database, 8, 60_000);
        const claimWall = performance.now() - began;
        const claimCpu = cpuNow() - cpuBefore;
        const results: ProcessingResult[] = [];
        for (const job of claimed) results.push(await processSessionJob(dependencies, job));
        const cpu = cpuNow() - cpuBefore;
        const wall = performance.now() - began;
        windows.push([windowStart, Number(process.hrtime.bigint() / 1000n)]);
        const databaseCpu = cpuSpent(databaseBefore, readPostgresCpu?.());
        if (!measured) continue;
        jobs.push({
          claimWall: claimWall * 1000,
          claimCpu,
          wall: wall * 1000,
          cpu,
          databaseCpu,
          collections: collections
            .filter((collection) => collection.at >= began && collection.at <= began + wall)
            .map((collection) => `${collection.kind}:${collection.duration.toFixed(1)} ms`)
            .join(' '),
          results,
        });
      }
      if (!measured) windows.length = 0;
    }
    const row = (name: string, values: readonly number[]) =>
      `${name.padEnd(34)} ${median(values).toFixed(0).padStart(7)} ${(sum(values) / jobs.length).toFixed(0).padStart(7)}`;
    console.log(`\n${store}: ${jobs.length} live jobs, µs a job       median    mean`);
    console.log(
      row(
        'claim and read: wall',
        jobs.map((job) => job.claimWall),
      ),
    );
    console.log(
      row(
        'claim and read: CPU of this process',
        jobs.map((job) => job.claimCpu),
      ),
    );
    console.log(
      row(
        'rest of the job: wall',
        jobs.map((job) => job.wall - job.claimWall),
      ),
    );
    console.log(
      row(
        'rest of the job: CPU of this process',
        jobs.map((job) => job.cpu - job.claimCpu),
      ),
    );
    console.log(
      row(
        'whole job: wall',
        jobs.map((job) => job.wall),
      ),
    );
    console.log(
      row(
        'whole job: CPU of this process',
        jobs.map((job) => job.cpu),
      ),
    );
    if (store === 'postgres')
      console.log(
        row(
          "whole job: PostgreSQL's CPU",
          jobs.map((job) => job.databaseCpu),
        ),
      );
    const totals = jobs.map((job) => job.cpu + job.databaseCpu);
    const sorted = [...totals].sort((a, b) => a - b);
    const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    const heavy = totals.filter((value) => value > 3 * quantile(0.5));
    console.log(
      `whole job, all CPU: p10 ${quantile(0.1).toFixed(0)}, p50 ${quantile(0.5).toFixed(0)}, p90 ${quantile(0.9).toFixed(0)}, p99 ${quantile(0.99).toFixed(0)} µs; ${heavy.length} jobs above 3x the median hold ${((100 * sum(heavy)) / sum(totals)).toFixed(0)}% of it`,
    );
    console.log('costliest jobs: CPU µs, wall µs, garbage collections inside (kind: pause), items added');
    for (const job of [...jobs].sort((a, b) => b.cpu + b.databaseCpu - (a.cpu + a.databaseCpu)).slice(0, 8))
      console.log(
        `  ${(job.cpu + job.databaseCpu).toFixed(0)}, ${job.wall.toFixed(0)}, [${job.collections}], ${job.results.map((result) => `${result.itemsAdded}${result.recomputed ? ' recomputed' : ''}${result.occurrences > 0 ? ' +occurrences' : ''}`).join(' ')}`,
      );
    if (process.env.TABLE_STATS === '1') {
      const { rows } = await sql<Record<string, unknown>>`
        select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del from pg_stat_user_tables
        where n_tup_ins + n_tup_upd + n_tup_del > 0 order by relname`.execute(database);
      console.table(rows);
    }
    if (process.env.PROFILE_WINDOWS !== undefined)
      await writeFile(`${process.env.PROFILE_WINDOWS}.${store}.json`, JSON.stringify(windows));
  } finally {
    observer.disconnect();
    await app.close();
    await services.close();
  }
}

if (process.argv[2] === '--summarize') {
  summarize(process.argv[3] as string, process.argv[4] as string);
} else {
  const work = await mkdtemp(join(tmpdir(), 'svc-profile-call-jobs-'));
  let postgres: BenchPostgres | undefined;
  try {
    for (const store of (process.env.BENCH_ONLY ?? 'embedded,postgres').split(',')) {
      await profileStore(store, work, async () => {
        postgres ??= await startBenchPostgres();
        return postgres;
      });
    }
  } finally {
    await postgres?.stop();
    await rm(work, { recursive: true, force: true });
  }
}
