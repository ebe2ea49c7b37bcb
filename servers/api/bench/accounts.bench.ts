/**
 * `pnpm bench`, sign-in and authentication, on the embedded store (PGlite) and on PostgreSQL. The
 * whole app runs in this process and every request goes through it with `app.inject`, one at a
 * time (no sockets: what is measured is the server's work, not a client's).
 *
 * 1. Sign-in: BENCH_SIGN_INS `POST /auth/login` with the right password, next to the baseline of
 *    argon2id's `verify` alone (`@node-rs/argon2`, the stored hash, `PASSWORD_HASHING`'s
 *    parameters) in the same run, so the table shows the share of a sign-in that is hashing. Also
 *    a wrong password for a known address and an unknown address (the server checks a dummy hash
 *    then, so both should cost the same): p50/p95 and the ratio unknown / known. The four kinds
 *    are interleaved, one of each in turn (the order rotating), so a slow minute of the machine
 *    lands on all of them. Sign-in is rate limited per client address and per account: every
 *    request comes from its own address, and each account signs in at most as often as its
 *    limit allows; every answer is checked (200, or 401 for the failing kinds: never a 429).
 * 2. Cookie against bearer on a one-row read: `GET /v1/projects/current` with an API token (one
 *    statement: the token joined to its project) and with the session cookie +
 *    `X-Service-Project` (two: the session, then the project joined to the membership), next to
 *    `GET /healthz` (no authentication, no database) as the floor; BENCH_AUTH_REQUESTS of each in
 *    BENCH_AUTH_ROUNDS short rounds, the kinds in turn in each round (the order rotating); each
 *    ratio is the median of the rounds' ratios. Also the lookups alone, without HTTP:
 *    `authenticateApiToken` against `findLiveSession` + `projectAccess`.
 *
 * Prints ratios against baselines measured in the same run; never gates on absolute times.
 * Settings: BENCH_SIGN_INS (default 200), BENCH_AUTH_REQUESTS (per kind, default 3000),
 * BENCH_AUTH_ROUNDS (default 100), BENCH_ONLY (comma list of embedded, postgres),
 * SVC_BENCH_DATABASE_URL (use that PostgreSQL instead of starting one).
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { verify } from '@node-rs/argon2';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../src/app.ts';
import { hashPassword, PASSWORD_HASHING } from '../src/modules/accounts/passwords.ts';
import { SIGN_IN_LIMITS } from '../src/modules/accounts/rate-limits.ts';
import { findLiveSession, insertUser } from '../src/modules/accounts/repository.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import { projectAccess } from '../src/modules/projects/access.ts';
import { authenticateApiToken, createApiTokenRecord } from '../src/modules/projects/api-tokens.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { type OpenedServices, openServices } from '../src/open-services.ts';
import { loadConfiguration } from '../src/platform/config.ts';
import { percentile } from './load.ts';
import { type BenchPostgres, startBenchPostgres } from './postgres.ts';

const SIGN_INS = Math.max(1, Number(process.env.BENCH_SIGN_INS ?? 200));
const REQUESTS = Math.max(1, Number(process.env.BENCH_AUTH_REQUESTS ?? 3000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_AUTH_ROUNDS ?? 100));
const STORES = new Set((process.env.BENCH_ONLY ?? 'embedded,postgres').split(','));
/** Sign-ins of each kind before the measured ones (first statements, the dummy hash, the JIT). */
const SIGN_IN_WARM_UP = 10;
/** Requests of each kind before the measured rounds. */
const READ_WARM_UP = 200;
const PASSWORD = 'correct horse battery staple';
/** Sign-in attempts one account may make in the window (wrong ones count too). */
const PER_ACCOUNT = SIGN_IN_LIMITS.login.perAccount.max;

type Store = 'embedded' | 'postgres';
const STORE_LABEL: Record<Store, string> = { embedded: 'embedded store (PGlite)', postgres: 'PostgreSQL' };

const ms = (value: number) => (value >= 10 ? value.toFixed(1) : value.toFixed(2));
const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const mean = (values: readonly number[]) => values.reduce((total, value) => total + value, 0) / values.length;

/** Percentiles of latencies in milliseconds. */
function spread(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    mean: mean(sorted),
  };
}

/** `items` starting at `shift` (the order of each turn rotates, so no kind always goes first). */
function rotated<T>(items: readonly T[], shift: number): T[] {
  const start = shift % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

const table = new Map<string, Partial<Record<Store, string>>>();
function record(row: string, store: Store, value: string): void {
  table.set(row, { ...table.get(row), [store]: value });
}

// ---------------------------------------------------------------------------------------------
// The app

interface Bench {
  store: Store;
  services: OpenedServices;
  app: FastifyInstance;
  projectId: string;
  apiToken: string;
  /** Accounts signing in with the right password, and with a wrong one. */
  rightAccounts: string[];
  wrongAccounts: string[];
  /** The stored hash of the accounts' password (for argon2's `verify` alone). */
  passwordHash: string;
  /** An account that is a member of the project's organization, for the cookie. */
  reader: string;
}

const work = await mkdtemp(join(tmpdir(), 'svc-bench-accounts-'));
let postgres: BenchPostgres | undefined;

/** A verified account with the bench's password, owner of `organizationId`. */
async function account(
  services: OpenedServices,
  organizationId: string,
  email: string,
): Promise<{ email: string; passwordHash: string }> {
  const database = services.database.database;
  const passwordHash = await hashPassword(PASSWORD);
  const user = await insertUser(database, { email, name: undefined, passwordHash, emailVerified: true });
  if (user === undefined) throw new Error(`${email} exists already`);
  await database
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: user.id, role: 'owner' })
    .execute();
  return { email, passwordHash };
}

async function open(store: Store): Promise<Bench> {
  const environment: Record<string, string> = {
    SVC_DATA_DIR: join(work, store),
    SVC_LOG_LEVEL: 'silent',
    SVC_CALL_WORKER: 'false',
    SVC_DELIVERY_WORKER: 'false',
  };
  if (store === 'postgres') {
    const startedPostgres = performance.now();
    postgres ??= await startBenchPostgres();
    console.log(
      `  PostgreSQL ${postgres.started ? `started (fsync on) in ${((performance.now() - startedPostgres) / 1000).toFixed(1)} s` : 'from SVC_BENCH_DATABASE_URL'}`,
    );
    environment.DATABASE_URL = postgres.url;
    environment.SVC_MASTER_KEY = randomBytes(32).toString('base64');
  }
  const services = await openServices(loadConfiguration(environment));
  const app = await buildApp(services, { logger: false });
  const database = services.database.database;
  const organization = await createOrganization(database, 'bench');
  const project = await createProject(database, {
    organizationId: organization.id,
    name: 'accounts bench',
    masterKey: services.masterKey,
  });
  const { token } = await createApiTokenRecord(database, { projectId: project.id, name: 'bench' });
  // Each account makes at most PER_ACCOUNT attempts; addresses are unique per run (a PostgreSQL
  // from SVC_BENCH_DATABASE_URL may hold a previous run's).
  const run = randomBytes(4).toString('hex');
  const accountsNeeded = Math.ceil((SIGN_IN_WARM_UP + SIGN_INS) / PER_ACCOUNT);
  const rightAccounts: string[] = [];
  const wrongAccounts: string[] = [];
  let passwordHash = '';
  for (let index = 0; index < accountsNeeded; index += 1) {
    const right = await account(services, organization.id, `right-${run}-${index}@bench.example`);
    rightAccounts.push(right.email);
    passwordHash = right.passwordHash;
    wrongAccounts.push(
      (await account(services, organization.id, `wrong-${run}-${index}@bench.example`)).email,
    );
  }
  const reader = (await account(services, organization.id, `reader-${run}@bench.example`)).email;
  return {
    store,
    services,
    app,
    projectId: project.id,
    apiToken: token,
    rightAccounts,
    wrongAccounts,
    passwordHash,
    reader,
  };
}

let addresses = 0;
/** A client address of its own for every sign-in (the per-address limit is 30 per 15 minutes). */
function nextAddress(): string {
  addresses += 1;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

async function login(bench: Bench, email: string, password: string) {
  return bench.app.inject({
    method: 'POST',
    url: '/auth/login',
    remoteAddress: nextAddress(),
    payload: { email, password },
  });
}

// ---------------------------------------------------------------------------------------------
// 1. Sign-in

const SIGN_IN_KINDS = ['verify', 'right', 'wrong', 'unknown'] as const;
type SignInKind = (typeof SIGN_IN_KINDS)[number];

/** One sign-in (or argon2's verify alone) of `kind`, the `turn`-th: milliseconds. */
async function signInOnce(bench: Bench, kind: SignInKind, turn: number): Promise<number> {
  const account = Math.floor(turn / PER_ACCOUNT);
  const started = performance.now();
  if (kind === 'verify') {
    const matches = await verify(bench.passwordHash, PASSWORD);
    const elapsed = performance.now() - started;
    if (!matches) throw new Error('argon2 verify: the password did not match its hash');
    return elapsed;
  }
  const email =
    kind === 'right'
      ? (bench.rightAccounts[account] as string)
      : kind === 'wrong'
        ? (bench.wrongAccounts[account] as string)
        : `nobody-${turn}-${randomBytes(4).toString('hex')}@bench.example`;
  const response = await login(bench, email, kind === 'right' ? PASSWORD : `${PASSWORD} (wrong)`);
  const elapsed = performance.now() - started;
  const expected = kind === 'right' ? 200 : 401;
  if (response.statusCode !== expected)
    throw new Error(`sign-in (${kind}): ${response.statusCode} ${response.body}, expected ${expected}`);
  if (kind === 'right' && !response.cookies.some((cookie) => cookie.name === 'service_session'))
    throw new Error('sign-in answered 200 without the session cookie');
  return elapsed;
}

async function benchSignIn(bench: Bench): Promise<void> {
  const samples: Record<SignInKind, number[]> = { verify: [], right: [], wrong: [], unknown: [] };
  const started = performance.now();
  for (let turn = 0; turn < SIGN_IN_WARM_UP + SIGN_INS; turn += 1) {
    for (const kind of rotated(SIGN_IN_KINDS, turn)) {
      const elapsed = await signInOnce(bench, kind, turn);
      if (turn >= SIGN_IN_WARM_UP) samples[kind].push(elapsed);
    }
  }
  const verifyTimes = spread(samples.verify);
  const right = spread(samples.right);
  const wrong = spread(samples.wrong);
  const unknown = spread(samples.unknown);
  const triple = (value: ReturnType<typeof spread>) =>
    `${ms(value.p50)} / ${ms(value.p95)} / ${ms(value.p99)} ms`;
  console.log(
    `  ${SIGN_INS} sign-ins of each kind, interleaved (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  const { memoryCost, timeCost, parallelism } = PASSWORD_HASHING;
  const rows: Array<[string, string]> = [
    [
      `argon2id \`verify\` alone (m=${memoryCost} KiB, t=${timeCost}, p=${parallelism}): p50 / p95 / p99`,
      triple(verifyTimes),
    ],
    ['`POST /auth/login`, right password (200 + cookie): p50 / p95 / p99', triple(right)],
    [
      "hashing's share of a sign-in (verify p50 / sign-in p50); the rest",
      `${Math.round((verifyTimes.p50 / right.p50) * 100)}%; ${ms(right.p50 - verifyTimes.p50)} ms`,
    ],
    ['wrong password, known address (401): p50 / p95 / p99', triple(wrong)],
    ['unknown address (401, dummy hash): p50 / p95 / p99', triple(unknown)],
    [
      '**unknown / known address (wrong password)**: p95 (p50)',
      `**${ratio(unknown.p95, wrong.p95)}** (${ratio(unknown.p50, wrong.p50)})`,
    ],
  ];
  for (const [row, value] of rows) {
    console.log(`  ${row}: ${value}`);
    record(row, bench.store, value);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Cookie against bearer

const READ_KINDS = ['none', 'bearer', 'cookie', 'token lookup', 'session lookups'] as const;
type ReadKind = (typeof READ_KINDS)[number];

async function benchReads(bench: Bench): Promise<void> {
  const signedIn = await login(bench, bench.reader, PASSWORD);
  if (signedIn.statusCode !== 200) throw new Error(`reader sign-in: ${signedIn.statusCode} ${signedIn.body}`);
  const secret = signedIn.cookies.find((cookie) => cookie.name === 'service_session')?.value;
  if (secret === undefined) throw new Error('reader sign-in: no session cookie');
  const database = bench.services.database.database;
  const requests: Record<'none' | 'bearer' | 'cookie', InjectOptions> = {
    none: { method: 'GET', url: '/healthz' },
    bearer: {
      method: 'GET',
      url: '/v1/projects/current',
      headers: { authorization: `Bearer ${bench.apiToken}` },
    },
    cookie: {
      method: 'GET',
      url: '/v1/projects/current',
      headers: { cookie: `service_session=${secret}`, 'x-service-project': bench.projectId },
    },
  };

  async function once(kind: ReadKind): Promise<void> {
    if (kind === 'token lookup') {
      if ((await authenticateApiToken(database, bench.apiToken)) === undefined)
        throw new Error('token lookup: no caller');
      return;
    }
    if (kind === 'session lookups') {
      const person = await findLiveSession(database, secret as string);
      if (person === undefined || (await projectAccess(database, person, bench.projectId)) === undefined)
        throw new Error('session lookups: no access');
      return;
    }
    const response = await bench.app.inject(requests[kind]);
    if (response.statusCode !== 200) throw new Error(`${kind}: ${response.statusCode} ${response.body}`);
    if (kind !== 'none' && (JSON.parse(response.body) as { id: string }).id !== bench.projectId)
      throw new Error(`${kind}: another project answered`);
  }

  for (const kind of READ_KINDS) for (let index = 0; index < READ_WARM_UP; index += 1) await once(kind);

  const latencies: Record<ReadKind, number[]> = {
    none: [],
    bearer: [],
    cookie: [],
    'token lookup': [],
    'session lookups': [],
  };
  /** Mean milliseconds per request of each round. */
  const roundMeans: Record<ReadKind, number[]> = {
    none: [],
    bearer: [],
    cookie: [],
    'token lookup': [],
    'session lookups': [],
  };
  const perRound = Math.ceil(REQUESTS / ROUNDS);
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const kind of rotated(READ_KINDS, round)) {
      const roundStarted = performance.now();
      for (let index = 0; index < perRound; index += 1) {
        const requestStarted = performance.now();
        await once(kind);
        latencies[kind].push(performance.now() - requestStarted);
      }
      roundMeans[kind].push((performance.now() - roundStarted) / perRound);
    }
  }
  console.log(
    `  ${perRound * ROUNDS} requests of each kind, one at a time, in ${ROUNDS} rounds (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );

  const perSecond = (kind: ReadKind) => Math.round(1000 / median(roundMeans[kind]));
  const describe = (kind: ReadKind) => {
    const { p50, p95 } = spread(latencies[kind]);
    return `${perSecond(kind).toLocaleString('en-US')}/s; ${ms(p50)} / ${ms(p95)} ms`;
  };
  const roundRatios = (kind: ReadKind, baseline: ReadKind, floor?: ReadKind) =>
    roundMeans[kind].map((value, index) => {
      const under = floor === undefined ? 0 : (roundMeans[floor][index] as number);
      return (value - under) / ((roundMeans[baseline][index] as number) - under);
    });
  // The median of the rounds' ratios, and the middle half of them (a round is short, so single
  // rounds catch the VM's hiccups).
  const describeRatios = (values: readonly number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `**${median(values).toFixed(2)}x** (middle half of rounds ${percentile(sorted, 0.25).toFixed(2)}–${percentile(sorted, 0.75).toFixed(2)})`;
  };
  const bearer = spread(latencies.bearer);
  const cookie = spread(latencies.cookie);
  const micro = (kind: ReadKind) => `${Math.round(median(roundMeans[kind]) * 1000)} µs`;
  const rows: Array<[string, string]> = [
    ['`GET /healthz`, no authentication (the floor): requests/s; p50 / p95', describe('none')],
    ['`GET /v1/projects/current`, Bearer token: requests/s; p50 / p95', describe('bearer')],
    ['`GET /v1/projects/current`, cookie + `X-Service-Project`: requests/s; p50 / p95', describe('cookie')],
    [
      '**cookie / bearer**, time per request (median of rounds); p95',
      `${describeRatios(roundRatios('cookie', 'bearer'))}; ${ratio(cookie.p95, bearer.p95)}`,
    ],
    [
      'cookie / bearer above the floor (each minus `/healthz` in its round)',
      describeRatios(roundRatios('cookie', 'bearer', 'none')),
    ],
    [
      'lookups alone (no HTTP): token, 1 statement / session + membership, 2 statements',
      `${micro('token lookup')} / ${micro('session lookups')}: ${describeRatios(roundRatios('session lookups', 'token lookup'))}`,
    ],
  ];
  for (const [row, value] of rows) {
    console.log(`  ${row}: ${value}`);
    record(row, bench.store, value);
  }
}

// ---------------------------------------------------------------------------------------------

console.log(
  `@svc/api accounts benchmark: node ${process.version}, ${availableParallelism()} cores; ${SIGN_INS} sign-ins of each kind; ${REQUESTS} reads of each kind in ${ROUNDS} rounds; stores: ${[...STORES].join(', ')}`,
);
const benchStarted = performance.now();
try {
  const stores = (['embedded', 'postgres'] as const).filter((store) => STORES.has(store));
  for (const store of stores) {
    console.log(`\n${STORE_LABEL[store]}`);
    const bench = await open(store);
    try {
      await benchSignIn(bench);
      await benchReads(bench);
    } finally {
      await bench.app.close();
      await bench.services.close();
    }
  }
  console.log(
    `\nSummary (${new Date().toISOString().slice(0, 10)}, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s)`,
  );
  console.log(`| sign-in and authentication | ${stores.map((store) => STORE_LABEL[store]).join(' | ')} |`);
  console.log(`|---|${stores.map(() => '---').join('|')}|`);
  for (const [row, cells] of table)
    console.log(`| ${row} | ${stores.map((store) => cells[store] ?? '').join(' | ')} |`);
} finally {
  await postgres?.stop();
  await rm(work, { recursive: true, force: true });
}
