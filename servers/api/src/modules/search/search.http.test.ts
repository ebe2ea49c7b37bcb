import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTimeline,
  chunkBytes,
  ingest,
  sessionMeta,
  type WireItem,
} from '../../../test/call-timelines.ts';
import { apiClient, type Caller, expectJson, type Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import type { Scope } from '../../platform/http/authentication.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';
import {
  type SearchAccess,
  type SearchAnswer,
  type SearchQuery,
  searchAnswerSchema,
  search as searchFunction,
  searchQuerySchema,
} from './index.ts';

// POST /v1/search end to end: sessions, calls and issues seeded through the real ingest route and
// the processing job, searched over HTTP with the project's tokens. Ranking, every filter against
// the list endpoints' own answers, scopes, other projects, pagination and bad input.

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
const MINUTE = 60_000;

interface SeedSession {
  key: string;
  minute: number;
  url: string;
  user?: { id: string; email?: string; name?: string };
  browser: string;
  os: string;
  device: 'desktop' | 'mobile' | 'tablet';
  release?: string;
  environment: string;
  durationSec: number;
  events?: (start: number) => WireItem[];
  calls?: (start: number) => WireItem[];
}

const error = (t: number, name: string, message: string): WireItem => ({
  t,
  type: 'error',
  name,
  message,
  // A frame of its own per error: each error is a cluster of its own.
  stack: `${name}: ${message}\n    at ${message.split(' ').slice(0, 2).join('_')} (https://shop.example.com/assets/app.js:1:120)`,
  source: 'onerror',
});

const SESSIONS: SeedSession[] = [
  {
    key: 'cartCrash',
    minute: 0,
    url: 'https://shop.example.com/cart',
    user: { id: 'u-ada', email: 'ada@example.com', name: 'Ada Lovelace' },
    browser: 'Chrome',
    os: 'macOS',
    device: 'desktop',
    release: 'web@2.4.0',
    environment: 'production',
    durationSec: 60,
    events: (start) => [error(start + 8_000, 'TypeError', 'Checkout button crashed while reading the total')],
  },
  {
    key: 'checkoutPage',
    minute: 1,
    url: 'https://shop.example.com/checkout/83',
    user: { id: 'u-bob', email: 'bob@example.com' },
    browser: 'Firefox',
    os: 'Windows',
    device: 'desktop',
    release: 'web@2.3.0',
    environment: 'production',
    durationSec: 10,
  },
  {
    key: 'declinedPhrase',
    minute: 2,
    url: 'https://shop.example.com/pay',
    browser: 'Safari',
    os: 'iOS',
    device: 'mobile',
    release: 'web@2.4.0',
    environment: 'staging',
    durationSec: 300,
    events: (start) => [error(start + 5_000, 'PaymentError', 'Payment declined by the card issuer')],
  },
  {
    key: 'declinedScattered',
    minute: 3,
    url: 'https://shop.example.com/pay',
    browser: 'Chrome',
    os: 'Android',
    device: 'mobile',
    environment: 'production',
    durationSec: 30,
    events: (start) => [
      error(start + 5_000, 'PaymentError', 'Payment form shown twice, then the card was declined'),
    ],
  },
  {
    key: 'orderFailed',
    minute: 4,
    url: 'https://shop.example.com/orders',
    user: { id: 'u-dan', email: 'dan@example.com' },
    browser: 'Edge',
    os: 'Windows',
    device: 'desktop',
    environment: 'production',
    durationSec: 45,
    // The issue's title scrubs the number: the issue is found by its error message.
    events: (start) => [error(start + 3_000, 'Error', 'Order 48213 could not be saved')],
  },
  {
    key: 'exportEvent',
    minute: 5,
    url: 'https://app.example.com/settings',
    browser: 'Chrome',
    os: 'macOS',
    device: 'tablet',
    environment: 'production',
    durationSec: 20,
    events: (start) => [
      { t: start + 2_000, type: 'custom', name: 'export_failed', severity: 'medium', props: { rows: 3 } },
    ],
  },
  {
    key: 'roomAlpha',
    minute: 6,
    url: 'https://meet.example.com/room/alpha',
    user: { id: 'u-cara', email: 'cara@example.com' },
    browser: 'Chrome',
    os: 'Linux',
    device: 'desktop',
    environment: 'production',
    durationSec: 120,
    calls: (start) => [
      ...callTimeline({ start: start + 1_000, network: 'wifi' }).items,
      ...callTimeline({ start: start + 30_000, network: 'ethernet', relayed: true }).items,
    ],
  },
  {
    key: 'roomBeta',
    minute: 8,
    url: 'https://meet.example.com/room/beta',
    browser: 'Firefox',
    os: 'Windows',
    device: 'desktop',
    environment: 'production',
    durationSec: 120,
    calls: (start) => [
      ...callTimeline({ start: start + 1_000, candidateError: 701, fail: true }).items,
      ...callTimeline({
        start: start + 30_000,
        network: 'cellular',
        samples: 20,
        lossPct: (index) => (index >= 2 && index < 18 ? 12 : 0),
      }).items,
    ],
  },
];

/** Ingests a session as one chunk: meta, its events and calls, and a last event at its duration. */
async function ingestSession(test: TestApp, project: TestProject, seed: SeedSession): Promise<string> {
  const sessionId = newSessionId();
  const start = T0 + seed.minute * MINUTE;
  const events: WireItem[] = [
    ...(seed.events?.(start) ?? []),
    ...(seed.calls?.(start) ?? []),
    { t: start + seed.durationSec * 1000, type: 'custom', name: 'seed_end' },
  ];
  const base = sessionMeta(start, { browser: seed.browser, os: seed.os, device: seed.device });
  const meta = {
    ...base,
    url: seed.url,
    environment: seed.environment,
    ...(seed.release === undefined ? {} : { release: seed.release }),
    ...(seed.user === undefined ? {} : { user: seed.user }),
  };
  const last = Math.max(...events.map((event) => event.t));
  await ingest(
    test.app,
    project.projectKey,
    chunkBytes({ sessionId, seq: 0, sentAt: last + 200_000, meta, events }),
  );
  return sessionId;
}

describe.each(ENGINES)('search on %s', (engine) => {
  let test: TestApp;
  let project: TestProject;
  let other: TestProject;
  /** Session ids by seed key. */
  const ids: Record<string, string> = {};
  let otherSessionId: string;
  const { request, get, ok } = apiClient(
    () => test,
    () => project,
  );

  /** A token of the search project holding only `scopes`. */
  async function tokenWith(...scopes: Scope[]): Promise<Caller> {
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: project.project.id,
      name: scopes.join(' '),
      scopes,
    });
    return { headers: { authorization: `Bearer ${token}` } };
  }

  const search = (body: Json, caller?: Caller) => request('POST', '/v1/search', body, caller);
  const found = async (body: Json, caller?: Caller) =>
    expectJson(await search(body, caller), 200).items as Json[];

  /** Every page of a search, `limit` at a time. */
  async function walk(body: Json, limit: number, caller?: Caller): Promise<Json[]> {
    const items: Json[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const answer = expectJson(
        await search({ ...body, limit, ...(cursor === undefined ? {} : { cursor }) }, caller),
        200,
      );
      expect(answer.items.length).toBeLessThanOrEqual(limit);
      items.push(...answer.items);
      cursor = answer.nextCursor;
      if (cursor === undefined) return items;
    }
    throw new Error('more than 100 pages');
  }

  /** `type:id` of each result, in order. */
  const keys = (items: readonly Json[]) => items.map((item) => `${item.type}:${item.id}`);
  const idsOf = (items: readonly Json[], type: string) =>
    items.filter((item) => item.type === type).map((item) => item.id as string);

  /** Every session, call and issue of the project, from the list endpoints. */
  let everything: { sessions: Json[]; calls: Json[]; issues: Json[] };

  beforeAll(async () => {
    test = await createTestApp(engine);
    project = await test.createProject('search');
    other = await test.createProject('elsewhere');
    for (const seed of SESSIONS) ids[seed.key] = await ingestSession(test, project, seed);
    // Another project: a session whose error says "checkout" too.
    otherSessionId = await ingestSession(test, other, {
      ...(SESSIONS[0] as SeedSession),
      key: 'elsewhere',
      url: 'https://other.example.com/checkout',
    });
    await test.processingWorker.runUntilIdle();
    const list = async (path: string) => (await get(`${path}?limit=200`)).items as Json[];
    everything = {
      sessions: await list('/v1/sessions'),
      calls: await list('/v1/calls'),
      issues: await list('/v1/issues'),
    };
  });
  afterAll(async () => {
    await test?.close();
  });

  it('seeded what the tests expect: 8 sessions, 4 calls, error and detector issues', () => {
    expect(everything.sessions).toHaveLength(8);
    expect(everything.calls).toHaveLength(4);
    const kinds = everything.issues.map((issue) => issue.kind);
    expect(kinds.filter((kind) => kind === 'error')).toHaveLength(4);
    expect(kinds).toEqual(expect.arrayContaining(['webrtc_connect_failure', 'webrtc_relay_fallback']));
  });

  describe('without free text', () => {
    it('lists every session, call and issue, newest first, with score 0', async () => {
      const items = await found({});
      expect(items.length).toBe(
        everything.sessions.length + everything.calls.length + everything.issues.length,
      );
      const times = items.map((item) => Date.parse(item.t));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(items.every((item) => item.score === 0 && item.snippet === undefined)).toBe(true);
      expect(new Set(idsOf(items, 'session'))).toEqual(new Set(Object.values(ids)));
      // An empty or blank q is no q.
      expect(keys(await found({ q: '' }))).toEqual(keys(items));
      expect(keys(await found({ q: '   ' }))).toEqual(keys(items));
    });

    it('answers each type with its summary and dashboard link', async () => {
      const items = await found({ limit: 100 });
      const session = items.find((item) => item.id === ids.cartCrash);
      expect(session).toEqual({
        type: 'session',
        id: ids.cartCrash,
        score: 0,
        title: 'https://shop.example.com/cart',
        t: new Date(T0).toISOString(),
        url: `/sessions/${ids.cartCrash}`,
        session: {
          url: 'https://shop.example.com/cart',
          user: { id: 'u-ada', email: 'ada@example.com', name: 'Ada Lovelace' },
          browser: { name: 'Chrome', version: '156' },
          os: 'macOS',
          device: 'desktop',
          durationMs: 60_000,
          errorCount: 1,
          level: 'high',
          release: 'web@2.4.0',
          environment: 'production',
        },
      });
      const failed = items.find((item) => item.type === 'call' && item.call.failedToConnect);
      expect(failed).toMatchObject({
        title: 'Call failed to connect · Firefox',
        url: `/calls/${failed.id}`,
        call: {
          sessionId: ids.roomBeta,
          relayed: false,
          failedToConnect: true,
          failureReason: 'ice_candidate_error_701',
          browser: 'Firefox',
          findings: expect.arrayContaining(['webrtc_connect_failure']),
        },
      });
      const relayed = items.find((item) => item.type === 'call' && item.call.relayed);
      expect(relayed.title).toMatch(/^Call · Chrome · ethernet · quality \d+ · relayed$/);
      expect(relayed.call.qualityScore).toEqual(expect.any(Number));
      const issue = items.find(
        (item) => item.type === 'issue' && item.issue.kind === 'webrtc_connect_failure',
      );
      const listed = everything.issues.find((entry) => entry.id === issue.id);
      expect(issue).toEqual({
        type: 'issue',
        id: listed.id,
        score: 0,
        title: listed.title,
        t: listed.lastSeenAt,
        url: `/issues/${listed.id}`,
        issue: {
          kind: 'webrtc_connect_failure',
          severity: listed.severity,
          status: 'open',
          firstSeenAt: listed.firstSeenAt,
          count24h: listed.count24h,
          occurrences: listed.occurrences,
        },
      });
    });
  });

  describe('ranking', () => {
    it('ranks a session whose error matches above one whose URL merely holds the word', async () => {
      const items = await found({ q: 'checkout', types: ['session'] });
      expect(idsOf(items, 'session')).toEqual([ids.cartCrash, ids.checkoutPage]);
      const [crash, page] = items;
      expect(crash.score).toBeGreaterThan(page.score);
      expect(crash.snippet).toBe('TypeError: Checkout button crashed while reading the total');
      // The link opens the replay at the error.
      expect(crash.url).toBe(`/sessions/${ids.cartCrash}?t=8000`);
      expect(page.snippet).toBe('https://shop.example.com/checkout/83');
      expect(page.url).toBe(`/sessions/${ids.checkoutPage}`);
    });

    it('ranks the exact phrase above the same words scattered', async () => {
      const items = await found({ q: 'payment declined', types: ['session'] });
      expect(idsOf(items, 'session')).toEqual([ids.declinedPhrase, ids.declinedScattered]);
      expect(items[0].score).toBeGreaterThan(items[1].score);
      // Quoted, only the phrase matches.
      expect(idsOf(await found({ q: '"payment declined"', types: ['session'] }), 'session')).toEqual([
        ids.declinedPhrase,
      ]);
      // -word leaves out what holds it.
      expect(idsOf(await found({ q: 'declined -issuer', types: ['session'] }), 'session')).toEqual([
        ids.declinedScattered,
      ]);
    });

    it('matches the last word as a prefix, and a URL fragment as a substring', async () => {
      expect(new Set(idsOf(await found({ q: 'payment decli', types: ['session'] }), 'session'))).toEqual(
        new Set([ids.declinedPhrase, ids.declinedScattered]),
      );
      const fragment = await found({ q: 'checkout/83' });
      expect(keys(fragment)).toEqual([`session:${ids.checkoutPage}`]);
      expect(fragment[0].snippet).toBe('https://shop.example.com/checkout/83');
      const user = await found({ q: 'ada@example.com' });
      expect(idsOf(user, 'session')).toEqual([ids.cartCrash]);
      expect(user[0].snippet).toBe('ada@example.com');
    });

    it('finds calls by failure, findings, network and their session, and issues by title and error message', async () => {
      const failed = everything.calls.find((call) => call.failedToConnect);
      const relayed = everything.calls.find((call) => call.relayed);
      const ice = await found({ q: 'ice candidate error' });
      expect(ice[0]).toMatchObject({ type: 'call', id: failed.id, snippet: 'ice_candidate_error_701' });
      const loss = await found({ q: 'packet loss' });
      const lossCluster = everything.issues.find((issue) => issue.kind === 'webrtc_packet_loss');
      expect(keys(loss)).toEqual(
        expect.arrayContaining([
          `issue:${lossCluster.id}`,
          `call:${everything.calls.find((call) => call.networkType === 'cellular').id}`,
        ]),
      );
      // A call is found by its session's URL; the session too.
      const alpha = await found({ q: 'alpha' });
      expect(new Set(keys(alpha))).toEqual(
        new Set([
          `session:${ids.roomAlpha}`,
          ...everything.calls
            .filter((call) => call.sessionId === ids.roomAlpha)
            .map((call) => `call:${call.id}`),
        ]),
      );
      expect(idsOf(await found({ q: 'ethernet' }), 'call')).toEqual([relayed.id]);
      // The title scrubs the order number: the issue is found by its error's message.
      const order = await found({ q: '48213' });
      const orderIssue = everything.issues.find((issue) => issue.title.startsWith('Error: Order'));
      expect(keys(order)).toEqual(
        expect.arrayContaining([`issue:${orderIssue.id}`, `session:${ids.orderFailed}`]),
      );
      expect(order.find((item) => item.type === 'issue').snippet).toBe(
        'Error: Order 48213 could not be saved',
      );
      // A custom event's name.
      expect(keys(await found({ q: 'export failed' }))).toEqual([`session:${ids.exportEvent}`]);
    });

    it('ranks what happened above what describes: issues and errors before URLs', async () => {
      const items = await found({ q: 'declined' });
      const scores = items.map((item) => item.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      // Both issues (title and message: 4 + 4) above both sessions (their errors: 4).
      expect(items.map((item) => item.type)).toEqual(['issue', 'issue', 'session', 'session']);
    });

    it('never errors on what people type', async () => {
      for (const q of [
        '!!! ...',
        '"',
        '""',
        '-',
        '-checkout',
        'or',
        'a or',
        '"unterminated phrase',
        "'; drop table sessions; --",
        '%_\\',
        '日本語',
        'x'.repeat(256),
      ]) {
        const response = await search({ q });
        expect(response.statusCode, `${q}: ${response.body}`).toBe(200);
      }
      expect(await found({ q: '!!! ...' })).toEqual([]);
      expect(await found({ q: '%_\\' })).toEqual([]);
    });
  });

  describe('filters', () => {
    const byId = (items: readonly Json[]) => new Set(items.map((item) => item.id as string));

    it('narrows sessions and calls exactly as their lists select them', async () => {
      const cases: Array<[Json, (session: Json) => boolean, ((call: Json) => boolean) | undefined]> = [
        [{ browser: 'FIREFOX' }, (s) => s.browser?.name === 'Firefox', (c) => c.browser?.name === 'Firefox'],
        [{ os: 'ios' }, (s) => s.os?.name === 'iOS', (c) => c.os?.name === 'iOS'],
        [{ device: 'mobile' }, (s) => s.device === 'mobile', (c) => c.device === 'mobile'],
        [{ release: 'web@2.4.0' }, (s) => s.release === 'web@2.4.0', (c) => c.release === 'web@2.4.0'],
        [{ environment: 'staging' }, (s) => s.environment === 'staging', (c) => c.environment === 'staging'],
        [{ user: 'ada@example.com' }, (s) => s.user?.email === 'ada@example.com', () => false],
        [{ user: 'u-cara' }, (s) => s.user?.id === 'u-cara', (c) => c.sessionId === ids.roomAlpha],
        [{ urlContains: '/ROOM/' }, (s) => s.url.includes('/room/'), () => true],
        [{ minDurationSec: 100 }, (s) => s.durationMs >= 100_000, (c) => c.durationMs >= 100_000],
        [
          { maxDurationSec: 30 },
          (s) => s.durationMs <= 30_000,
          (c) => c.durationMs !== undefined && c.durationMs <= 30_000,
        ],
        [{ hasErrors: true }, (s) => s.errorCount > 0, undefined],
        [{ hasErrors: false }, (s) => s.errorCount === 0, undefined],
        [
          { browser: 'chrome', device: 'desktop' },
          (s) => s.browser?.name === 'Chrome' && s.device === 'desktop',
          (c) => c.browser?.name === 'Chrome' && c.device === 'desktop',
        ],
      ];
      for (const [filters, session, call] of cases) {
        const label = JSON.stringify(filters);
        const items = await found({ filters, limit: 100 });
        expect(byId(items.filter((item) => item.type === 'session')), label).toEqual(
          new Set(everything.sessions.filter(session).map((entry) => entry.id)),
        );
        expect(byId(items.filter((item) => item.type === 'call')), label).toEqual(
          new Set(call === undefined ? [] : everything.calls.filter(call).map((entry) => entry.id)),
        );
        // Issues take none of these filters: they are left out.
        expect(
          items.filter((item) => item.type === 'issue'),
          label,
        ).toEqual([]);
        expect(items.length, label).toBeGreaterThan(0);
      }
    });

    it('narrows calls with the call filters, and leaves sessions and issues out', async () => {
      const cases: Array<[Json, (call: Json) => boolean]> = [
        [{ relayed: true }, (c) => c.relayed],
        [{ relayed: false }, (c) => !c.relayed],
        [{ failedToConnect: true }, (c) => c.failedToConnect],
        [{ minQuality: 80 }, (c) => c.qualityScore !== undefined && c.qualityScore >= 80],
        [{ maxQuality: 79 }, (c) => c.qualityScore !== undefined && c.qualityScore <= 79],
        [{ minQuality: 0, maxQuality: 100 }, (c) => c.qualityScore !== undefined],
      ];
      for (const [filters, call] of cases) {
        const items = await found({ filters });
        const expected = everything.calls.filter(call).map((entry) => entry.id);
        expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0);
        expect(keys(items).sort(), JSON.stringify(filters)).toEqual(
          expected.map((id) => `call:${id}`).sort(),
        );
      }
    });

    it('narrows issues by status and kind, and every type by severity', async () => {
      const connect = everything.issues.find((issue) => issue.kind === 'webrtc_connect_failure');
      await ok('PATCH', `/v1/issues/${connect.id}`, { status: 'resolved' });
      expect(keys(await found({ filters: { status: 'resolved' } }))).toEqual([`issue:${connect.id}`]);
      const open = await found({ filters: { status: 'open' } });
      expect(byId(open)).toEqual(
        new Set(everything.issues.filter((issue) => issue.id !== connect.id).map((issue) => issue.id)),
      );
      expect(keys(await found({ filters: { kind: 'webrtc_connect_failure' } }))).toEqual([
        `issue:${connect.id}`,
      ]);
      await ok('PATCH', `/v1/issues/${connect.id}`, { status: 'open' });

      const order = ['info', 'low', 'medium', 'high', 'critical'];
      const atLeast = (severity: string | undefined, level: string) =>
        severity !== undefined && order.indexOf(severity) >= order.indexOf(level);
      const worst = (call: Json) =>
        call.issues
          .map((finding: Json) => finding.severity)
          .sort((a: string, b: string) => order.indexOf(b) - order.indexOf(a))[0];
      for (const level of ['medium', 'high']) {
        const items = await found({ filters: { severity: level }, limit: 100 });
        expect(byId(items.filter((item) => item.type === 'session')), level).toEqual(
          byId(everything.sessions.filter((session) => atLeast(session.level, level))),
        );
        expect(byId(items.filter((item) => item.type === 'call')), level).toEqual(
          byId(everything.calls.filter((call) => atLeast(worst(call), level))),
        );
        expect(byId(items.filter((item) => item.type === 'issue')), level).toEqual(
          byId(everything.issues.filter((issue) => atLeast(issue.severity, level))),
        );
      }
    });

    it('bounds time with from and to, and combines filters with free text', async () => {
      const from = new Date(T0 + 4 * MINUTE).toISOString();
      const to = new Date(T0 + 8 * MINUTE).toISOString();
      const items = await found({ from, to, types: ['session', 'call'], limit: 100 });
      expect(new Set(idsOf(items, 'session'))).toEqual(
        new Set([ids.orderFailed, ids.exportEvent, ids.roomAlpha]),
      );
      expect(new Set(idsOf(items, 'call'))).toEqual(
        new Set(everything.calls.filter((call) => call.sessionId === ids.roomAlpha).map((call) => call.id)),
      );
      // Issues last seen at or after `from`, first seen before `to`.
      expect(new Set(idsOf(await found({ from, to, types: ['issue'] }), 'issue'))).toEqual(
        new Set(
          everything.issues
            .filter(
              (issue) =>
                Date.parse(issue.lastSeenAt) >= Date.parse(from) &&
                Date.parse(issue.firstSeenAt) < Date.parse(to),
            )
            .map((issue) => issue.id),
        ),
      );
      expect(idsOf(await found({ q: 'checkout', filters: { browser: 'firefox' } }), 'session')).toEqual([
        ids.checkoutPage,
      ]);
      expect(await found({ q: 'checkout', filters: { hasErrors: true, device: 'mobile' } })).toEqual([]);
    });
  });

  describe('access', () => {
    it('searches only the types the token may read', async () => {
      const calls = await tokenWith('calls:read');
      const items = await found({}, calls);
      expect(items.map((item) => item.type)).toEqual(everything.calls.map(() => 'call'));
      expect(new Set(items.map((item) => item.id))).toEqual(new Set(everything.calls.map((call) => call.id)));
      const checkout = await found({ q: 'alpha' }, calls);
      expect(checkout.every((item) => item.type === 'call')).toBe(true);
      expect(checkout).toHaveLength(2);
      const issues = await tokenWith('issues:read');
      expect((await found({ q: 'declined' }, issues)).map((item) => item.type)).toEqual(['issue', 'issue']);
    });

    it('refuses a type the token may not read, naming the scope, and a token with none of the three', async () => {
      const calls = await tokenWith('calls:read');
      expect(expectJson(await search({ types: ['session', 'call'] }, calls), 403)).toEqual({
        error: 'Searching sessions needs the sessions:read scope, which this caller lacks',
        code: 'unauthorized',
      });
      const sessions = await tokenWith('sessions:read');
      expect(expectJson(await search({ filters: { relayed: true } }, sessions), 403)).toEqual({
        error:
          'Searching calls needs the calls:read scope, which this caller lacks (the filters given apply to calls only)',
        code: 'unauthorized',
      });
      const settings = await tokenWith('settings:read');
      expect(expectJson(await search({}, settings), 403)).toEqual({
        error: 'This API token lacks a scope this needs: one of sessions:read, calls:read, issues:read',
        code: 'unauthorized',
      });
    });

    it('answers the same through the function the MCP tool and the model call', async () => {
      const access: SearchAccess = {
        projectId: project.project.id,
        scopes: new Set<Scope>(['sessions:read', 'calls:read', 'issues:read']),
      };
      for (const body of [
        { q: 'checkout' },
        { q: 'payment decli', limit: 2 },
        { filters: { relayed: true } },
      ]) {
        const query: SearchQuery = searchQuerySchema.parse(body);
        const answer: SearchAnswer = await searchFunction(test.database.database, access, query);
        expect(searchAnswerSchema.parse(answer)).toEqual(answer);
        const over = expectJson(await search(body), 200);
        expect(keys(answer.items), JSON.stringify(body)).toEqual(keys(over.items));
        expect(answer.items.map((item) => item.score)).toEqual(over.items.map((item: Json) => item.score));
      }
    });

    it("never sees another project's data", async () => {
      const mine = await found({ q: 'checkout', limit: 100 });
      expect(idsOf(mine, 'session')).not.toContain(otherSessionId);
      const theirs = await found({ q: 'checkout', limit: 100 }, other);
      expect(idsOf(theirs, 'session')).toEqual([otherSessionId]);
      expect(theirs.filter((item) => item.type === 'call')).toEqual([]);
      const all = await found({ limit: 100 }, other);
      expect(idsOf(all, 'session')).toEqual([otherSessionId]);
      expect(all.every((item) => item.type !== 'call')).toBe(true);
    });
  });

  describe('pages', () => {
    it('walks every page without duplicates or gaps, the same way twice', async () => {
      for (const body of [{}, { q: 'example' }, { q: 'declined' }, { filters: { device: 'desktop' } }]) {
        const whole = await found({ ...body, limit: 100 });
        expect(whole.length, JSON.stringify(body)).toBeGreaterThan(2);
        for (const limit of [1, 3]) {
          const walked = await walk(body, limit);
          expect(keys(walked), `${JSON.stringify(body)} by ${limit}`).toEqual(keys(whole));
          expect(keys(await walk(body, limit))).toEqual(keys(walked));
        }
      }
    });

    it('leaves out of later pages what started after the first page', async () => {
      const first = expectJson(await search({ types: ['session'], limit: 2 }), 200);
      // A session starting after the first page ran: the newest of all.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const added = await ingestSession(test, project, {
        ...(SESSIONS[1] as SeedSession),
        minute: (Date.now() - T0) / MINUTE,
      });
      const now = await found({ types: ['session'], limit: 100 });
      expect(keys(now)[0]).toBe(`session:${added}`);
      const next = expectJson(
        await search({ types: ['session'], limit: 100, cursor: first.nextCursor }),
        200,
      );
      expect(keys([...first.items, ...next.items])).toEqual(keys(now).slice(1));
    });

    it('refuses a cursor that is not one, or that belongs to another query', async () => {
      const first = expectJson(await search({ q: 'example', limit: 1 }), 200);
      expect(first.nextCursor).toEqual(expect.any(String));
      for (const cursor of [
        'nope',
        'x'.repeat(257),
        Buffer.from('[0,1,"x"]').toString('base64url'),
        Buffer.from('{}').toString('base64url'),
      ]) {
        const response = await search({ q: 'example', cursor });
        expect(response.statusCode, cursor).toBe(400);
        expect(response.json().code).toBe('invalid');
      }
      expect(expectJson(await search({ q: 'other', cursor: first.nextCursor }), 400)).toEqual({
        error: 'The cursor belongs to another query: send it with the query of the page it came from',
        code: 'invalid',
      });
      // The limit may change from page to page.
      expect(
        expectJson(await search({ q: 'example', limit: 5, cursor: first.nextCursor }), 200).items.length,
      ).toBeGreaterThan(0);
    });
  });

  describe('bad input', () => {
    it('answers 400 invalid, saying what is wrong', async () => {
      const cases: Array<[Json, RegExp]> = [
        [{ q: 'x'.repeat(257) }, /^Invalid body: \/q: /],
        [{ q: 42 }, /^Invalid body: \/q: /],
        [{ filters: { colour: 'red' } }, /^Invalid body: \/filters: .*colour/],
        [{ sort: 'new' }, /^Invalid body: .*sort/],
        [
          { from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' },
          /^Invalid body: \/to: `to` must be after `from`/,
        ],
        [{ from: 'yesterday' }, /^Invalid body: \/from: /],
        [{ types: ['sessions'] }, /^Invalid body: \/types\/0: /],
        [{ types: [] }, /^Invalid body: \/types: /],
        [{ limit: 0 }, /^Invalid body: \/limit: /],
        [{ limit: 101 }, /^Invalid body: \/limit: /],
        [{ limit: 2.5 }, /^Invalid body: \/limit: /],
        [
          { filters: { minQuality: 80, maxQuality: 20 } },
          /^Invalid body: \/filters\/maxQuality: `maxQuality` must be at least `minQuality`/,
        ],
        [{ filters: { minDurationSec: -1 } }, /^Invalid body: \/filters\/minDurationSec: /],
        [{ filters: { hasErrors: 'yes' } }, /^Invalid body: \/filters\/hasErrors: /],
        [{ filters: { device: 'watch' } }, /^Invalid body: \/filters\/device: /],
        [{ filters: { kind: 'gremlins' } }, /^Invalid body: \/filters\/kind: /],
        [
          { types: ['session', 'call'], filters: { relayed: true } },
          /^The filter `relayed` applies to calls only: remove sessions from `types`, or the filter$/,
        ],
        [
          { filters: { status: 'open', relayed: true } },
          /^No result type takes all of these filters: `relayed` \(calls\), `status` \(issues\)$/,
        ],
      ];
      for (const [body, message] of cases) {
        const response = await search(body);
        expect(response.statusCode, `${JSON.stringify(body)}: ${response.body}`).toBe(400);
        const answer = response.json();
        expect(answer.code).toBe('invalid');
        expect(answer.error, JSON.stringify(body)).toMatch(message);
      }
      const empty = await test.app.inject({
        method: 'POST',
        url: '/v1/search',
        headers: { ...project.headers, 'content-type': 'application/json' },
        payload: '',
      });
      expect(empty.statusCode).toBe(400);
      expect(empty.json()).toEqual({ error: expect.stringMatching(/^Invalid body/), code: 'invalid' });
    });
  });
});
