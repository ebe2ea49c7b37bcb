/**
 * `pnpm bench`, transcripts (issue 24): what a long session's transcript, reproduction and
 * explanation cost, on the embedded store (PGlite) and on PostgreSQL. The whole app runs in this
 * process and every request goes through it with `app.inject`, one at a time, with an API token
 * (no sockets: what is measured is the server's work).
 *
 * 1. A session as the browser SDK records and sends it (bench/long-session.ts: a web console of
 *    2,000–4,000 nodes a page, page loads and the app's own navigations, mouse moves, scrolls,
 *    clicks answered by mutations, masked typing, dead and rage clicks, requests (some failing),
 *    errors, custom events, vitals, a hidden tab, a checkout every BENCH_TRANSCRIPT_CHECKOUT_SEC
 *    seconds, a chunk sealed every 5 s, and a WebRTC call of a quarter of the session in its
 *    middle with a sample every 5 s), for each length of BENCH_TRANSCRIPT_MINUTES.
 * 2. Its chunks go through `POST /v1/ingest` (json+deflate, one after the other: an SDK keeps one
 *    request in flight per session), then the processing job runs once (calls, findings, issues),
 *    as a server's worker would.
 * 3. BENCH_TRANSCRIPT_ROUNDS rounds, after one warm-up round, each in a rotated order:
 *    `GET /v1/sessions/{id}/transcript`, `POST /v1/sessions/{id}/repro`,
 *    `POST /v1/sessions/{id}/explain` and the baseline: reading the same chunks back, every
 *    `GET /v1/sessions/{id}/chunks/{seq}` one after the other (the same bytes decrypted and
 *    inflated). Each is reported as its p50 and the spread of the rounds, and as the ratio of its
 *    p50 to the baseline's (with the spread of the rounds' own ratios); with the transcript's
 *    size, events per second, the CPU time of this process (every thread: PGlite's too, not
 *    PostgreSQL's) and the growth of its RSS during the request (sampled every 5 ms). Also, as a reference without I/O: `JSON.parse` of every chunk in this process.
 * 4. How cost grows: the longest session's p50s over the shortest's, next to the growth of its
 *    events and bytes.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_ONLY (comma list of embedded, postgres), BENCH_TRANSCRIPT_MINUTES (default
 * 30,120), BENCH_TRANSCRIPT_ROUNDS (default 5), BENCH_TRANSCRIPT_CHECKOUT_SEC (default 30, the
 * SDK's `recording.checkoutIntervalSec`), SVC_BENCH_DATABASE_URL (use that PostgreSQL instead of
 * starting one).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import { createProcessingWorker } from '../src/modules/processing/index.ts';
import { createApiTokenRecord } from '../src/modules/projects/api-tokens.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { newSessionId } from '../test/ingest-helpers.ts';
import { percentile } from './load.ts';
import { createLongSession, type LongSession } from './long-session.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';

const STORES = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
const LENGTHS = (process.env.BENCH_TRANSCRIPT_MINUTES ?? '30,120')
  .split(',')
  .map(Number)
  .filter((minutes) => minutes > 0)
  .sort((a, b) => a - b);
const ROUNDS = Math.max(1, Number(process.env.BENCH_TRANSCRIPT_ROUNDS ?? 5));
const CHECKOUT_SEC = Math.max(1, Number(process.env.BENCH_TRANSCRIPT_CHECKOUT_SEC ?? 30));
const START = Date.UTC(2026, 10, 20, 9, 0, 0);

type Store = 'embedded' | 'postgres';
const STORE_LABEL: Record<Store, string> = { embedded: 'embedded store (PGlite)', postgres: 'PostgreSQL' };
const KINDS = ['baseline', 'transcript', 'repro', 'explain'] as const;
type Kind = (typeof KINDS)[number];
const KIND_LABEL: Record<Kind, string> = {
  baseline: 'baseline: every GET …/chunks/{seq}',
  transcript: 'GET …/transcript',
  repro: 'POST …/repro',
  explain: 'POST …/explain',
};

const lengthLabel = (minutes: number) => (minutes % 60 === 0 ? `${minutes / 60} h` : `${minutes} min`);
const columns: string[] = [];
const table = new Map<string, Map<string, string>>();
const record = (row: string, column: string, value: string) => {
  if (!columns.includes(column)) columns.push(column);
  const cells = table.get(row) ?? new Map<string, string>();
  cells.set(column, value);
  table.set(row, cells);
  console.log(`  ${row}: ${value}`);
};
const ms = (value: number) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
const count = (value: number) => Math.round(value).toLocaleString('en-US');
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const median = (values: readonly number[]) => percentile(sorted(values), 0.5);
const spread = (values: readonly number[], format: (value: number) => string) =>
  `${format(Math.min(...values))}–${format(Math.max(...values))}`;
const times = (value: number) => `${value.toFixed(2)}x`;

const work = await mkdtemp(join(tmpdir(), 'svc-analysis-bench-'));
let postgres: BenchPostgres | undefined;

interface Bench {
  store: Store;
  services: OpenedServices;
  app: FastifyInstance;
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
    const started = performance.now();
    postgres ??= await startBenchPostgres();
    console.log(
      `  PostgreSQL ${postgres.started ? `started (fsync on) in ${((performance.now() - started) / 1000).toFixed(1)} s` : 'from SVC_BENCH_DATABASE_URL'}`,
    );
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
    name: `transcripts bench ${store}`,
    masterKey: services.masterKey,
  });
  const { token } = await createApiTokenRecord(database, { projectId: project.id, name: 'bench' });
  return {
    store,
    services,
    app,
    headers: { authorization: `Bearer ${token}` },
    projectKey: project.project_key,
  };
}

async function ingest(bench: Bench, bodies: readonly Buffer[]): Promise<number> {
  const started = performance.now();
  for (const [index, body] of bodies.entries()) {
    const answer = await bench.app.inject({
      method: 'POST',
      url: '/v1/ingest',
      headers: { 'x-service-project-key': bench.projectKey, 'x-service-encoding': 'json+deflate' },
      payload: body,
    });
    if (answer.statusCode !== 200 || answer.json<{ duplicate: boolean }>().duplicate)
      throw new Error(`ingest of chunk ${index}: ${answer.statusCode} ${answer.body}`);
  }
  return performance.now() - started;
}

async function call(bench: Bench, method: 'GET' | 'POST', url: string): Promise<string> {
  const answer = await bench.app.inject({ method, url, headers: bench.headers });
  if (answer.statusCode !== 200) throw new Error(`${method} ${url}: ${answer.statusCode} ${answer.body}`);
  return answer.body;
}

/** What one request of a kind measured. */
interface Run {
  ms: number;
  /** CPU time of this process (user and system, every thread: PGlite's too; not PostgreSQL's). */
  cpuMs: number;
  /** Growth of the RSS during the request over the RSS before it (sampled every 5 ms). */
  rssGrowth: number;
  body: string;
}

async function measure(run: () => Promise<string>): Promise<Run> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  const started = performance.now();
  const cpu = process.cpuUsage();
  try {
    const body = await run();
    const elapsed = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    peak = Math.max(peak, process.memoryUsage.rss());
    return { ms: elapsed, cpuMs: (user + system) / 1000, rssGrowth: peak - before, body };
  } finally {
    clearInterval(sampler);
  }
}

interface Measured {
  runs: Record<Kind, Run[]>;
  parseMs: number[];
}

async function benchSession(
  bench: Bench,
  session: LongSession,
  bodies: readonly Buffer[],
): Promise<Measured> {
  const column = `${STORE_LABEL[bench.store]}, ${lengthLabel((session.end - session.start) / 60_000)}`;
  const ingestMs = await ingest(bench, bodies);
  const worker = createProcessingWorker(
    {
      database: bench.services.database.database,
      blobStore: bench.services.blobStore,
      masterKey: bench.services.masterKey,
      log: bench.app.log,
      appUrl: bench.services.configuration.appUrl,
    },
    { batchSize: 8 },
  );
  const processingStarted = performance.now();
  const jobs = await worker.runUntilIdle();
  const processingMs = performance.now() - processingStarted;
  const id = session.sessionId;
  const calls = JSON.parse(await call(bench, 'GET', `/v1/sessions/${id}/calls`)) as { items: unknown[] };
  const issues = JSON.parse(await call(bench, 'GET', `/v1/sessions/${id}/issues?limit=1000`)) as {
    items: Array<{ kind: string }>;
  };
  record(
    'session: chunks; events; JSON (deflated as sent)',
    column,
    `${count(session.chunks.length)}; ${count(session.events)}; ${megabytes(session.bytes)} (${megabytes(bodies.reduce((total, body) => total + body.byteLength, 0))})`,
  );
  record(
    'full snapshots (page loads and checkouts); nodes each',
    column,
    `${session.snapshotNodes.count}; ${count(session.snapshotNodes.min)}–${count(session.snapshotNodes.max)}`,
  );
  const { counts } = session;
  record(
    'page loads, navigations; clicks; keystrokes; mutations; requests (failed); errors; call samples',
    column,
    `${counts.pageLoads}, ${counts.navigations}; ${counts.clicks}; ${counts.keystrokes}; ${counts.mutations}; ${counts.requests} (${counts.failedRequests}); ${counts.errors}; ${counts.callSamples}`,
  );
  record(
    'ingest (one chunk after the other): s, chunks/s; processing job',
    column,
    `${(ingestMs / 1000).toFixed(1)} s, ${count(bodies.length / (ingestMs / 1000))}/s; ${(processingMs / 1000).toFixed(1)} s (${jobs} job${jobs === 1 ? '' : 's'}, ${calls.items.length} call, ${issues.items.filter((issue) => issue.kind === 'finding').length} findings)`,
  );

  const requests: Record<Kind, () => Promise<string>> = {
    baseline: async () => {
      let bytes = 0;
      for (let seq = 0; seq < session.chunks.length; seq += 1)
        bytes += (await call(bench, 'GET', `/v1/sessions/${id}/chunks/${seq}`)).length;
      return String(bytes);
    },
    transcript: () => call(bench, 'GET', `/v1/sessions/${id}/transcript`),
    repro: () => call(bench, 'POST', `/v1/sessions/${id}/repro`),
    explain: () => call(bench, 'POST', `/v1/sessions/${id}/explain`),
  };
  const runs: Record<Kind, Run[]> = { baseline: [], transcript: [], repro: [], explain: [] };
  const parseMs: number[] = [];
  for (let round = 0; round <= ROUNDS; round += 1) {
    const order = KINDS.map((_, index) => KINDS[(index + round) % KINDS.length] as Kind);
    for (const kind of order) {
      const run = await measure(requests[kind]);
      if (round > 0) runs[kind].push(run);
    }
    const started = performance.now();
    for (const chunk of session.chunks) JSON.parse(chunk.toString('utf8'));
    if (round > 0) parseMs.push(performance.now() - started);
  }

  const baseline = median(runs.baseline.map((run) => run.ms));
  for (const kind of KINDS) {
    const values = runs[kind].map((run) => run.ms);
    const ratios = runs[kind].map((run, index) => run.ms / (runs.baseline[index] as Run).ms);
    record(
      `${KIND_LABEL[kind]}: p50 (rounds); CPU p50; RSS growth p50`,
      column,
      `${ms(median(values))} ms (${spread(values, ms)}); ${ms(median(runs[kind].map((run) => run.cpuMs)))} ms; ${megabytes(median(runs[kind].map((run) => run.rssGrowth)))}`,
    );
    if (kind !== 'baseline')
      record(
        `${KIND_LABEL[kind]} / baseline: p50 (rounds' ratios)`,
        column,
        `**${times(median(values) / baseline)}** (${spread(ratios, times)})`,
      );
  }
  record(
    'in-process reference: JSON.parse of every chunk, p50 (rounds)',
    column,
    `${ms(median(parseMs))} ms (${spread(parseMs, ms)}); transcript / parse ${times(median(runs.transcript.map((run) => run.ms)) / median(parseMs))}`,
  );
  const transcript = JSON.parse((runs.transcript[0] as Run).body) as {
    entries: unknown[];
    text: string;
    truncated: boolean;
  };
  const repro = JSON.parse((runs.repro[0] as Run).body) as { steps: string[]; script: string };
  const explain = JSON.parse((runs.explain[0] as Run).body) as { explanation: { problems: unknown[] } };
  record(
    'transcript: entries; text; JSON answer',
    column,
    `${count(transcript.entries.length)}${transcript.truncated ? ' (truncated)' : ''}; ${megabytes(Buffer.byteLength(transcript.text))}; ${megabytes(Buffer.byteLength((runs.transcript[0] as Run).body))}`,
  );
  record(
    'transcript: events/s (p50)',
    column,
    count(session.events / (median(runs.transcript.map((run) => run.ms)) / 1000)),
  );
  record(
    'repro: steps; script; explain: problems',
    column,
    `${count(repro.steps.length)}; ${megabytes(Buffer.byteLength(repro.script))}; ${explain.explanation.problems.length}`,
  );
  return { runs, parseMs };
}

console.log(
  `@svc/api transcripts benchmark: node ${process.version}, ${availableParallelism()} cores; sessions of ${LENGTHS.map(lengthLabel).join(', ')}; a checkout every ${CHECKOUT_SEC} s; ${ROUNDS} rounds; stores: ${[...STORES].join(', ')}`,
);
const benchStarted = performance.now();
try {
  const sessions = LENGTHS.map((minutes, index) => {
    const started = performance.now();
    const session = createLongSession({
      sessionId: newSessionId(),
      start: START,
      minutes,
      seed: 24 + index,
      checkoutSec: CHECKOUT_SEC,
    });
    const bodies = session.chunks.map((chunk) => deflateSync(chunk));
    console.log(
      `  generated ${lengthLabel(minutes)}: ${count(session.chunks.length)} chunks, ${count(session.events)} events in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    return { minutes, session, bodies };
  });
  const stores = (['embedded', 'postgres'] as const).filter((store) => STORES.has(store));
  const results = new Map<Store, Measured[]>();
  for (const store of stores) {
    console.log(`\n${STORE_LABEL[store]}`);
    const bench = await open(store);
    try {
      const measured: Measured[] = [];
      for (const { session, bodies } of sessions) {
        console.log(`  ${lengthLabel((session.end - session.start) / 60_000)}`);
        measured.push(await benchSession(bench, session, bodies));
      }
      results.set(store, measured);
    } finally {
      await bench.app.close();
      await bench.services.close();
    }
  }

  // How cost grows with the session: the longest one's p50s over the shortest one's.
  const growth: string[] = [];
  const first = sessions[0];
  const last = sessions.at(-1);
  if (first !== undefined && last !== undefined && first !== last) {
    const events = last.session.events / first.session.events;
    const bytes = last.session.bytes / first.session.bytes;
    growth.push(
      `| ${lengthLabel(last.minutes)} / ${lengthLabel(first.minutes)} | events | JSON bytes | ${KINDS.map((kind) => KIND_LABEL[kind]).join(' | ')} |`,
      `|---|---|---|${KINDS.map(() => '---').join('|')}|`,
    );
    for (const store of stores) {
      const measured = results.get(store) as Measured[];
      const [short, long] = [measured[0] as Measured, measured.at(-1) as Measured];
      const ratios = KINDS.map((kind) =>
        times(median(long.runs[kind].map((run) => run.ms)) / median(short.runs[kind].map((run) => run.ms))),
      );
      growth.push(`| ${STORE_LABEL[store]} | ${times(events)} | ${times(bytes)} | ${ratios.join(' | ')} |`);
    }
  }

  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  console.log(`| transcripts | ${columns.join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---').join('|')}|`);
  for (const [row, cells] of table)
    console.log(`| ${row} | ${columns.map((column) => cells.get(column) ?? '').join(' | ')} |`);
  if (growth.length > 0) console.log(`\n${growth.join('\n')}`);
} finally {
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
