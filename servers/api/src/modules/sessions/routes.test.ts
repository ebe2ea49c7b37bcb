import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import {
  createSessionId,
  createVisitId,
  type SeededSession,
  seedSession,
  testStorage,
} from '../../../test/seed.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { MAX_CHUNKS_PER_EVENTS_PAGE } from './events.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

describe.each(ENGINES)('sessions read API on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  async function get(url: string, project: TestProject = test.first) {
    return test.app.inject({ method: 'GET', url, headers: project.headers });
  }

  async function listIds(query: string, project: TestProject): Promise<string[]> {
    const response = await get(`/v1/sessions?${query}`, project);
    const body = expectJson<{ items: Array<{ id: string }>; nextCursor?: string }>(response, 200);
    expect(body.nextCursor).toBeUndefined();
    return body.items.map((item) => item.id);
  }

  /** Every page of `query` with page size `limit`, following nextCursor. */
  async function allPages(query: string, limit: number, project: TestProject) {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const response = await get(
        `/v1/sessions?limit=${limit}${query ? `&${query}` : ''}${cursor ? `&cursor=${cursor}` : ''}`,
        project,
      );
      const body = expectJson<{ items: Array<{ id: string }>; nextCursor?: string }>(response, 200);
      pages.push(body.items.map((item) => item.id));
      cursor = body.nextCursor;
    } while (cursor !== undefined && pages.length < 100);
    return pages;
  }

  describe('GET /v1/sessions filters', () => {
    let project: TestProject;
    // S1 errors + SDK gap, S2 quiet mobile, S3 critical custom event + missing seq, S4 long, low.
    const ids = { s1: '', s2: '', s3: '', s4: '' };
    beforeAll(async () => {
      project = await test.createProject('filters');
      ids.s1 = (
        await seedSession(test, project, {
          startedAt: T0 + 1 * HOUR,
          url: 'https://app.example.com/calls/42',
          browser: { name: 'Chrome', version: '142.0' },
          os: { name: 'macOS', version: '15.1' },
          device: 'desktop',
          release: 'web@1',
          environment: 'production',
          user: { id: 'u_1', email: 'ada@example.com', name: 'Ada Lovelace' },
        })
      ).id;
      ids.s2 = (
        await seedSession(test, project, {
          startedAt: T0 + 2 * HOUR,
          seqs: [0],
          quiet: true,
          durationMs: 5_000,
          url: 'https://app.example.com/settings?deal=100%_off',
          browser: { name: 'Firefox', version: '140.0' },
          os: { name: 'Linux', version: 'x86_64' },
          device: 'mobile',
          release: 'web@2',
          environment: 'staging',
          user: null,
        })
      ).id;
      ids.s3 = (
        await seedSession(test, project, {
          startedAt: T0 + 3 * HOUR,
          seqs: [0, 2],
          quiet: true,
          url: 'https://app.example.com/calls/7',
          browser: { name: 'Safari', version: '19.0' },
          os: { name: 'iOS', version: '19.0' },
          device: 'tablet',
          release: null,
          environment: null,
          user: null,
          extraEvents: { 0: [{ t: 1_000, type: 'custom', name: 'payment_failed', severity: 'critical' }] },
        })
      ).id;
      ids.s4 = (
        await seedSession(test, project, {
          startedAt: T0 + 4 * HOUR,
          seqs: [0],
          quiet: true,
          durationMs: 120_000,
          url: 'https://app.example.com/calls/9',
          browser: { name: 'Chrome', version: '141.0' },
          os: { name: 'Windows', version: '11' },
          device: 'desktop',
          release: 'web@2',
          environment: 'production',
          user: { id: 'u_2', email: 'grace@example.com' },
          extraEvents: { 0: [{ t: 2_000, type: 'custom', name: 'slow_load', severity: 'low' }] },
        })
      ).id;
    });

    it('lists newest first with summaries', async () => {
      const response = await get('/v1/sessions', project);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.nextCursor).toBeUndefined();
      expect(body.items.map((item: { id: string }) => item.id)).toEqual([ids.s4, ids.s3, ids.s2, ids.s1]);
      expect(body.items[3]).toEqual({
        id: ids.s1,
        startedAt: new Date(T0 + HOUR).toISOString(),
        durationMs: 20_000,
        url: 'https://app.example.com/calls/42',
        user: { id: 'u_1', email: 'ada@example.com', name: 'Ada Lovelace' },
        browser: { name: 'Chrome', version: '142.0' },
        os: { name: 'macOS', version: '15.1' },
        device: 'desktop',
        errorCount: 2,
        level: 'high',
        chunkCount: 2,
        hasGaps: true,
        release: 'web@1',
        environment: 'production',
      });
      // Unknown values are omitted, never null.
      expect(body.items[2]).not.toHaveProperty('user');
      expect(body.items[2]).not.toHaveProperty('level');
      expect(body.items[1]).not.toHaveProperty('release');
      expect(JSON.stringify(body)).not.toContain('null');
    });

    it.each([
      ['hasErrors=true', ['s1']],
      ['hasErrors=false', ['s4', 's3', 's2']],
      ['browser=chrome', ['s4', 's1']],
      ['browser=CHROME&os=macos', ['s1']],
      ['os=Linux', ['s2']],
      ['device=mobile', ['s2']],
      ['device=tablet', ['s3']],
      ['level=critical', ['s3']],
      ['level=high', ['s3', 's1']],
      ['level=low', ['s4', 's3', 's1']],
      ['level=info', ['s4', 's3', 's1']],
      ['hasGaps=true', ['s3', 's1']],
      ['hasGaps=false', ['s4', 's2']],
      ['minDurationSec=20', ['s4', 's3', 's1']],
      ['minDurationSec=60', ['s4']],
      ['maxDurationSec=5', ['s2']],
      ['maxDurationSec=4.999', []],
      ['minDurationSec=10&maxDurationSec=45', ['s3', 's1']],
      [`from=${new Date(T0 + 2 * HOUR).toISOString()}&to=${T0 + 4 * HOUR}`, ['s3', 's2']],
      [`from=${T0 + 4 * HOUR}`, ['s4']],
      [`to=${encodeURIComponent(new Date(T0 + 2 * HOUR).toISOString().replace('Z', '+00:00'))}`, ['s1']],
      ['from=2026-01-01&to=2026-01-02', ['s4', 's3', 's2', 's1']],
      ['user=u_1', ['s1']],
      ['user=grace%40example.com', ['s4']],
      ['user=ada', []],
      ['urlContains=CALLS', ['s4', 's3', 's1']],
      ['urlContains=100%25_off', ['s2']],
      ['urlContains=%25', ['s2']],
      ['urlContains=calls_', []],
      ['q=ADA', ['s1']],
      ['q=staging', ['s2']],
      ['q=web%402', ['s4', 's2']],
      ['q=grace', ['s4']],
      ['q=%25', ['s2']],
      ['q=calls%2F7', ['s3']],
      ['environment=production', ['s4', 's1']],
      ['environment=Production', []],
      ['release=web%402', ['s4', 's2']],
      ['browser=Chrome&environment=production&hasErrors=false', ['s4']],
      ['level=low&device=desktop', ['s4', 's1']],
      ['hasGaps=true&hasErrors=false&level=critical&device=tablet', ['s3']],
      ['browser=Edge', []],
    ] as const)('filters %s', async (query, expected) => {
      expect(await listIds(query, project)).toEqual(expected.map((key) => ids[key]));
    });
  });

  describe('GET /v1/sessions pagination', () => {
    let project: TestProject;
    let expected: string[];
    beforeAll(async () => {
      project = await test.createProject('pagination');
      const seeded: Array<{ id: string; startedAt: number }> = [];
      for (let index = 0; index < 23; index += 1) {
        // Every third pair shares a start time: the id breaks the tie.
        const startedAt = T0 + Math.floor(index / 2) * 60_000;
        const session = await seedSession(test, project, {
          startedAt,
          seqs: [0],
          quiet: index % 2 === 0,
        });
        seeded.push({ id: session.id, startedAt });
      }
      expected = seeded
        .sort((left, right) => right.startedAt - left.startedAt || (left.id < right.id ? 1 : -1))
        .map((session) => session.id);
    });

    it('pages through every session exactly once, in order', async () => {
      for (const limit of [1, 5, 7, 23, 200]) {
        const pages = await allPages('', limit, project);
        expect(pages.flat()).toEqual(expected);
        expect(pages.length).toBe(Math.ceil(23 / limit));
        for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
      }
    });

    it('uses 50 as the default page size', async () => {
      const response = await get('/v1/sessions', project);
      expect(response.json().items).toHaveLength(23);
      expect(response.json().nextCursor).toBeUndefined();
    });

    it('pages through a filter', async () => {
      const all = await listIds('hasErrors=false', project);
      expect(all).toHaveLength(12);
      expect((await allPages('hasErrors=false', 5, project)).flat()).toEqual(all);
    });

    it('stays stable when sessions arrive between pages', async () => {
      const first = await get('/v1/sessions?limit=10', project);
      const firstPage = first.json<{ items: Array<{ id: string }>; nextCursor: string }>();
      expect(firstPage.items.map((item) => item.id)).toEqual(expected.slice(0, 10));
      // A newer session (before the cursor) and an older one (after it) arrive.
      const newer = await seedSession(test, project, { startedAt: T0 + 365 * 24 * HOUR, seqs: [0] });
      const older = await seedSession(test, project, { startedAt: T0 - HOUR, seqs: [0] });
      const rest: string[] = [];
      let cursor: string | undefined = firstPage.nextCursor;
      while (cursor !== undefined) {
        const response = await get(`/v1/sessions?limit=10&cursor=${cursor}`, project);
        const page = response.json<{ items: Array<{ id: string }>; nextCursor?: string }>();
        rest.push(...page.items.map((item) => item.id));
        cursor = page.nextCursor;
      }
      expect(rest).toEqual([...expected.slice(10), older.id]);
      expect(rest).not.toContain(newer.id);
      expect((await listIds('limit=200', project))[0]).toBe(newer.id);
    });
  });

  describe('GET /v1/sessions bad queries', () => {
    it.each([
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=10000', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['cursor=!!!', 'cursor'],
      ['cursor=bm90LWpzb24', 'cursor'],
      [`cursor=${Buffer.from('{"a":1}').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from('[1,"../etc"]').toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from('[-5,"ses_01KAJBCH80XTQ0YDPAV81S476S"]').toString('base64url')}`, 'cursor'],
      [`cursor=${'a'.repeat(300)}`, 'cursor'],
      ['from=yesterday', 'from'],
      ['from=2026-13-45', 'from'],
      ['to=1e12', 'to'],
      [`from=${T0 + HOUR}&to=${T0}`, 'to'],
      [`from=${T0}&to=${T0}`, 'to'],
      ['device=phone', 'device'],
      ['level=severe', 'level'],
      ['hasErrors=yes', 'hasErrors'],
      ['hasGaps=1', 'hasGaps'],
      ['minDurationSec=-5', 'minDurationSec'],
      ['maxDurationSec=abc', 'maxDurationSec'],
      ['maxDurationSec=99999999999', 'maxDurationSec'],
      ['minDurationSec=10&maxDurationSec=5', 'maxDurationSec'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=', 'q'],
      [`urlContains=${'x'.repeat(201)}`, 'urlContains'],
      [`user=${'x'.repeat(300)}`, 'user'],
      ['release=', 'release'],
      ['limt=5', 'limt'],
    ])('refuses %s with 400 invalid', async (query, parameter) => {
      const response = await get(`/v1/sessions?${query}`);
      expect(response.statusCode, response.body).toBe(400);
      const body = response.json();
      expect(body.code).toBe('invalid');
      expect(body.error).toContain(parameter);
    });
  });

  describe('one session', () => {
    let session: SeededSession;
    let visitId: string;
    beforeAll(async () => {
      visitId = createVisitId();
      session = await seedSession(test, test.first, {
        startedAt: T0,
        seqs: [0, 1, 3],
        visitId,
        extraEvents: { 1: [{ t: 15_000, type: 'network.request', method: 'GET' }] },
      });
    });

    it('answers the SessionDetail with its chunk manifest and gaps', async () => {
      const response = await get(`/v1/sessions/${session.id}`);
      expect(response.statusCode).toBe(200);
      const detail = response.json();
      expect(detail).toMatchObject({
        id: session.id,
        visitId,
        startedAt: new Date(T0).toISOString(),
        lastEventAt: new Date(T0 + 60_000).toISOString(),
        durationMs: 60_000,
        url: 'https://app.example.com/calls/42?ref=calendar',
        referrer: 'https://calendar.example.com/',
        userAgent: expect.stringContaining('Chrome/142'),
        browser: { name: 'Chrome', version: '142.0.0.0' },
        os: { name: 'macOS', version: '15.1' },
        device: 'desktop',
        viewport: { w: 1280, h: 720 },
        release: 'web@2025.11.3',
        environment: 'production',
        user: { id: 'u_8842', email: 'ada@example.com', name: 'Ada Lovelace' },
        recording: { mode: 'always' },
        sdk: { name: '@svc/browser-sdk', version: '0.1.0' },
        errorCount: 2,
        level: 'high',
      });
      expect(detail.chunks).toEqual(
        session.chunks.map((chunk) => ({
          seq: chunk.seq,
          sizeBytes: chunk.json.byteLength,
          eventCount: chunk.events.length,
          firstEventAt: new Date(Math.min(...chunk.events.map((event) => event.t))).toISOString(),
          lastEventAt: new Date(Math.max(...chunk.events.map((event) => event.t))).toISOString(),
          receivedAt: expect.any(String),
        })),
      );
      expect(detail.gaps).toEqual([
        { kind: 'missing', fromSeq: 2, toSeq: 2 },
        {
          kind: 'sdk',
          fromT: new Date(T0 + 6_100).toISOString(),
          toT: new Date(T0 + 9_000).toISOString(),
          reason: 'hidden',
        },
      ]);
    });

    it('omits what is unknown when the first chunk has not arrived', async () => {
      const partial = await seedSession(test, test.first, { startedAt: T0, seqs: [2] });
      const response = await get(`/v1/sessions/${partial.id}`);
      expect(response.statusCode).toBe(200);
      const detail = response.json();
      expect(JSON.stringify(detail)).not.toContain('null');
      for (const field of [
        'url',
        'browser',
        'os',
        'device',
        'viewport',
        'user',
        'sdk',
        'recording',
        'visitId',
      ]) {
        expect(detail).not.toHaveProperty(field);
      }
      expect(detail.gaps).toEqual([{ kind: 'missing', fromSeq: 0, toSeq: 1 }]);
    });

    it('answers each chunk byte-identical, as JSON', async () => {
      for (const chunk of session.chunks) {
        const response = await get(`/v1/sessions/${session.id}/chunks/${chunk.seq}`);
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(Buffer.compare(response.rawPayload, Buffer.from(chunk.json))).toBe(0);
      }
    });

    it('answers 404 for an unknown seq or session and 400 for a malformed one', async () => {
      expect((await get(`/v1/sessions/${session.id}/chunks/2`)).json()).toMatchObject({ code: 'not_found' });
      expect((await get(`/v1/sessions/${createSessionId()}/chunks/0`)).statusCode).toBe(404);
      expect((await get(`/v1/sessions/${createSessionId()}`)).statusCode).toBe(404);
      for (const url of [
        `/v1/sessions/${session.id}/chunks/-1`,
        `/v1/sessions/${session.id}/chunks/abc`,
        `/v1/sessions/${session.id}/chunks/99999999999`,
        '/v1/sessions/not-a-session',
        '/v1/sessions/..%2F..%2Fetc%2Fpasswd',
        '/v1/sessions/..%2F..%2Fetc/chunks/0',
        `/v1/sessions/${session.id.toLowerCase()}/events`,
      ]) {
        const response = await get(url);
        expect(response.statusCode, url).toBe(400);
        expect(response.json().code).toBe('invalid');
      }
    });

    it('answers a missing or tampered blob with a masked 500', async () => {
      const broken = await seedSession(test, test.first, { startedAt: T0, seqs: [0, 1] });
      const [first, second] = broken.chunks;
      await (await testStorage(test)).blobStore.delete(first?.blobKey as string);
      await (await testStorage(test)).blobStore.put(second?.blobKey as string, new Uint8Array(64).fill(7));
      for (const seq of [0, 1]) {
        const response = await get(`/v1/sessions/${broken.id}/chunks/${seq}`);
        expect(response.statusCode).toBe(500);
        expect(response.json()).toEqual({ error: 'Internal server error', code: 'internal' });
      }
    });

    describe('events', () => {
      const flat = () =>
        session.chunks.flatMap((chunk) =>
          chunk.events.map((event, index) => ({ seq: chunk.seq, index, event })),
        );

      it('flattens every event across chunks in (seq, index) order, unknown types included', async () => {
        const response = await get(`/v1/sessions/${session.id}/events?limit=1000`);
        expect(response.statusCode).toBe(200);
        const body = response.json();
        expect(body.nextCursor).toBeUndefined();
        expect(body.items).toEqual(flat());
        expect(
          body.items.some((item: { event: { type: string } }) => item.event.type === 'network.request'),
        ).toBe(true);
      });

      it('pages with no duplicates or gaps', async () => {
        const all: unknown[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const response = await get(
            `/v1/sessions/${session.id}/events?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
          );
          const body = response.json();
          expect(body.items.length).toBeLessThanOrEqual(7);
          all.push(...body.items);
          cursor = body.nextCursor;
          pages += 1;
        } while (cursor !== undefined);
        expect(all).toEqual(flat());
        expect(pages).toBe(Math.ceil(flat().length / 7));
      });

      it('uses 100 as the default page size', async () => {
        const body = (await get(`/v1/sessions/${session.id}/events`)).json();
        expect(body.items).toEqual(flat().slice(0, 100));
      });

      it('filters on types', async () => {
        const response = await get(`/v1/sessions/${session.id}/events?types=error,nav,network.request`);
        const types = new Set(['error', 'nav', 'network.request']);
        expect(response.json().items).toEqual(flat().filter((item) => types.has(item.event.type)));
        const paged: unknown[] = [];
        let cursor: string | undefined;
        do {
          const page = (
            await get(
              `/v1/sessions/${session.id}/events?types=nav&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
            )
          ).json();
          paged.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        expect(paged).toEqual(flat().filter((item) => item.event.type === 'nav'));
        expect((await get(`/v1/sessions/${session.id}/events?types=call.sample`)).json()).toEqual({
          items: [],
        });
      });

      it('opens only the chunks a page needs', async () => {
        const lazy = await seedSession(test, test.first, { startedAt: T0, seqs: [0, 1, 2] });
        await (await testStorage(test)).blobStore.delete(lazy.chunks[2]?.blobKey as string);
        const response = await get(`/v1/sessions/${lazy.id}/events?limit=5`);
        expect(response.statusCode).toBe(200);
        expect(response.json().items).toHaveLength(5);
        const cursor = Buffer.from(JSON.stringify([1, 0])).toString('base64url');
        expect((await get(`/v1/sessions/${lazy.id}/events?limit=3&cursor=${cursor}`)).statusCode).toBe(200);
        expect((await get(`/v1/sessions/${lazy.id}/events?limit=1000`)).statusCode).toBe(500);
      });

      it('bounds the chunks one request opens and goes on from where it stopped', async () => {
        const chunkCount = MAX_CHUNKS_PER_EVENTS_PAGE + 6;
        const last = chunkCount - 1;
        const long = await seedSession(test, test.first, {
          startedAt: T0,
          seqs: Array.from({ length: chunkCount }, (_, seq) => seq),
          extraEvents: { [last]: [{ t: last * 20_000, type: 'needle.found' }] },
        });
        const first = (await get(`/v1/sessions/${long.id}/events?types=needle.found`)).json();
        expect(first.items).toEqual([]);
        expect(first.nextCursor).toEqual(expect.any(String));
        const second = (
          await get(`/v1/sessions/${long.id}/events?types=needle.found&cursor=${first.nextCursor}`)
        ).json();
        expect(second.items).toEqual([
          { seq: last, index: expect.any(Number), event: { t: T0 + last * 20_000, type: 'needle.found' } },
        ]);
        expect(second.nextCursor).toBeUndefined();
      });

      it.each([
        'limit=0',
        'limit=1001',
        'limit=x',
        'types=',
        'types=,,,',
        'types=bad%20type',
        `types=${'a,'.repeat(40)}a`,
        'cursor=zzz',
        `cursor=${Buffer.from('[0,-1]').toString('base64url')}`,
        'since=1',
      ])('refuses %s with 400 invalid', async (query) => {
        const response = await get(`/v1/sessions/${session.id}/events?${query}`);
        expect(response.statusCode, response.body).toBe(400);
        expect(response.json().code).toBe('invalid');
      });
    });

    describe('issues', () => {
      it("lists the session's errors, custom events with a severity and triggers, in order", async () => {
        const response = await get(`/v1/sessions/${session.id}/issues`);
        expect(response.statusCode).toBe(200);
        const body = response.json();
        expect(body.nextCursor).toBeUndefined();
        expect(body.items.map((item: { kind: string; name: string }) => [item.kind, item.name])).toEqual([
          ['custom', 'chat_message_sent'],
          ['error', 'TypeError'],
          ['error', 'Error'],
          ['trigger', 'webrtc:freeze'],
        ]);
        expect(body.items[1]).toEqual({
          kind: 'error',
          severity: 'high',
          name: 'TypeError',
          message: "Cannot read properties of undefined (reading 'srcObject')",
          t: new Date(T0 + 4_200).toISOString(),
          seq: 0,
          index: 13,
          details: { source: 'onerror', stack: expect.stringContaining('at attachRemote') },
        });
        const chunk = JSON.parse(Buffer.from(session.chunks[0]?.json as Uint8Array).toString('utf8'));
        expect(chunk.events[13].type).toBe('error');
      });

      it('pages', async () => {
        const first = (await get(`/v1/sessions/${session.id}/issues?limit=3`)).json();
        expect(first.items).toHaveLength(3);
        const second = (
          await get(`/v1/sessions/${session.id}/issues?limit=3&cursor=${first.nextCursor}`)
        ).json();
        expect(second.items.map((item: { name: string }) => item.name)).toEqual(['webrtc:freeze']);
        expect(second.nextCursor).toBeUndefined();
      });

      it('is empty for a quiet session and refuses bad parameters', async () => {
        const quiet = await seedSession(test, test.first, { startedAt: T0, seqs: [0], quiet: true });
        expect((await get(`/v1/sessions/${quiet.id}/issues`)).json()).toEqual({ items: [] });
        for (const query of ['limit=0', 'limit=1001', 'cursor=%%%', 'kind=error']) {
          expect((await get(`/v1/sessions/${session.id}/issues?${query}`)).statusCode, query).toBe(400);
        }
      });
    });
  });

  describe('isolation between projects', () => {
    let other: TestProject;
    let theirs: SeededSession;
    let sameId: SeededSession;
    let mine: SeededSession;
    beforeAll(async () => {
      other = await test.createProject('other');
      theirs = await seedSession(test, other, {
        startedAt: T0 + 10 * HOUR,
        visitId: createVisitId(),
        url: 'https://other.example.com/secret',
        environment: 'production',
      });
      // Session ids come from clients: two projects may hold the same one.
      mine = await seedSession(test, test.first, { startedAt: T0 + 11 * HOUR, seqs: [0], quiet: true });
      sameId = await seedSession(test, other, { id: mine.id, startedAt: T0 + 11 * HOUR, seqs: [0, 1] });
    });

    it("never lists another project's sessions", async () => {
      for (const query of ['', 'q=other.example', 'urlContains=secret', 'limit=200', 'hasErrors=true']) {
        const response = await get(`/v1/sessions?${query}`);
        const ids = response.json().items.map((item: { id: string }) => item.id);
        expect(ids).not.toContain(theirs.id);
        expect(JSON.stringify(response.json())).not.toContain('other.example.com');
      }
      expect(await listIds('urlContains=secret', other)).toEqual([theirs.id]);
    });

    it("answers 404 for another project's session on every route", async () => {
      for (const url of [
        `/v1/sessions/${theirs.id}`,
        `/v1/sessions/${theirs.id}/chunks/0`,
        `/v1/sessions/${theirs.id}/events`,
        `/v1/sessions/${theirs.id}/issues`,
      ]) {
        const response = await get(url);
        expect(response.statusCode, url).toBe(404);
        expect(response.json().code).toBe('not_found');
      }
      const share = await test.app.inject({
        method: 'POST',
        url: `/v1/sessions/${theirs.id}/share`,
        headers: test.first.headers,
        payload: { expiresInHours: 1 },
      });
      expect(share.statusCode).toBe(404);
      expect(await test.database.database.selectFrom('share_links').selectAll().execute()).toEqual([]);
    });

    it('keeps a session id shared by two projects apart', async () => {
      const detail = (await get(`/v1/sessions/${mine.id}`)).json();
      expect(detail.chunks.map((chunk: { seq: number }) => chunk.seq)).toEqual([0]);
      expect(detail.errorCount).toBe(0);
      expect((await get(`/v1/sessions/${mine.id}/chunks/1`)).statusCode).toBe(404);
      const chunk = await get(`/v1/sessions/${mine.id}/chunks/0`);
      expect(Buffer.compare(chunk.rawPayload, Buffer.from(mine.chunks[0]?.json as Uint8Array))).toBe(0);
      expect((await get(`/v1/sessions/${mine.id}/issues`)).json()).toEqual({ items: [] });
      const events = (await get(`/v1/sessions/${mine.id}/events?limit=1000`)).json();
      expect(events.items).toHaveLength(mine.chunks[0]?.events.length as number);
      const theirsDetail = (await get(`/v1/sessions/${sameId.id}`, other)).json();
      expect(theirsDetail.chunks).toHaveLength(2);
    });

    it('refuses every route without a valid token', async () => {
      for (const url of [
        '/v1/sessions',
        `/v1/sessions/${mine.id}`,
        `/v1/sessions/${mine.id}/chunks/0`,
        `/v1/sessions/${mine.id}/events`,
        `/v1/sessions/${mine.id}/issues`,
      ]) {
        const response = await test.app.inject({ url, headers: { authorization: 'Bearer svc_nope' } });
        expect(response.statusCode, url).toBe(401);
      }
    });
  });

  it('describes the routes in /openapi.json', async () => {
    const document = (await test.app.inject('/openapi.json')).json();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/sessions',
        '/v1/sessions/{id}',
        '/v1/sessions/{id}/chunks/{seq}',
        '/v1/sessions/{id}/events',
        '/v1/sessions/{id}/issues',
        '/v1/sessions/{id}/share',
        '/v1/visits/{id}',
        '/share/{token}',
        '/share/{token}/chunks/{seq}',
      ]),
    );
    const parameters = document.paths['/v1/sessions'].get.parameters.map(
      (parameter: { name: string }) => parameter.name,
    );
    expect(parameters).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'q', 'hasErrors', 'level', 'hasGaps', 'from', 'to', 'user']),
    );
  });
});
