import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionMeta } from '../../../test/call-timelines.ts';
import { apiClient, type Caller, expectJson, type Json } from '../../../test/http.ts';
import { newSessionId, postChunk } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import type { Scope } from '../../platform/http/authentication.ts';
import { createSession } from '../accounts/repository.ts';
import { addPerson } from '../orgs/index.ts';
import { createApiTokenRecord } from '../projects/api-tokens.ts';

// /v1/funnels over the HTTP API: saved funnels (create, list, read, change, delete), who may do
// what, results on seeded facts (page views and clicks as the facts job writes them, custom
// events through ingest) counted per session and per user, and suggestions from walked routes.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** Monday 2 November 2026, 10:00 UTC: the facts' time. */
const B = Date.UTC(2026, 10, 2, 10);
const RANGE = `from=${new Date(B - HOUR).toISOString()}&to=${new Date(B + 6 * HOUR).toISOString()}`;

const HOME = { type: 'pageview', route: '/home' } as const;
const SIGNUP_CLICK = { type: 'click', selector: 'main > button.signup' } as const;
const SIGNED_UP = { type: 'event', name: 'signup', properties: { plan: 'pro' } } as const;

/** What a seeded session did: page views of routes, clicks (kind, selector) and custom events. */
type Fact =
  | { at: number; view: string }
  | { at: number; click: string; kind?: 'click' | 'rage' | 'dead' }
  | { at: number; event: string; props?: Record<string, string | number | boolean> };

const day = (time: number) => new Date(time).toISOString().slice(0, 10);

describe.each(ENGINES)('/v1/funnels on %s', (engine) => {
  let test: TestApp;
  const { request, ok, get } = apiClient(() => test);

  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  /**
   * A session through ingest (its custom events become signals, its user the session's), started
   * 5 s before its first fact, and its page views and clicks as the facts job writes them.
   */
  async function seedSession(project: TestProject, facts: Fact[], userId?: string) {
    const sessionId = newSessionId();
    const startedAt = Math.min(...facts.map((fact) => fact.at)) - 5 * SECOND;
    const events = facts.flatMap((fact) =>
      'event' in fact
        ? [{ t: fact.at, type: 'custom', name: fact.event, ...(fact.props ? { props: fact.props } : {}) }]
        : [],
    );
    const chunk = {
      v: 1,
      sessionId,
      seq: 0,
      sentAt: startedAt + HOUR,
      meta: sessionMeta(startedAt, userId === undefined ? {} : { userId }),
      events,
    };
    expectJson(await postChunk(test.app, project.projectKey, Buffer.from(JSON.stringify(chunk))), 200);
    const database = test.database.database;
    const views = facts.filter((fact) => 'view' in fact);
    for (const [index, view] of views.entries()) {
      const next = views[index + 1]?.at ?? view.at + MINUTE;
      await database
        .insertInto('page_views')
        .values({
          project_id: project.project.id,
          session_id: sessionId,
          view_index: index,
          started_at: new Date(view.at),
          day: day(view.at),
          ended_at: new Date(next),
          duration_ms: next - view.at,
          route: view.view,
          viewport_width: 1280,
          breakpoint: 'desktop',
          page_height: null,
          scroll_depth: null,
          lcp: null,
          inp: null,
          cls: null,
          fcp: null,
          ttfb: null,
          device: 'desktop',
          browser_name: 'Chrome',
          release: null,
          environment: 'test',
        })
        .execute();
    }
    const clicks = facts.filter((fact) => 'click' in fact);
    for (const [ordinal, click] of clicks.entries()) {
      const view = views.filter((one) => one.at <= click.at).length - 1;
      await database
        .insertInto('click_facts')
        .values({
          project_id: project.project.id,
          session_id: sessionId,
          kind: click.kind ?? 'click',
          ordinal,
          view_index: Math.max(0, view),
          t: new Date(click.at),
          day: day(click.at),
          route: views[view]?.view ?? '/',
          breakpoint: 'desktop',
          selector: click.click,
          page_x: 10,
          page_y: 20,
          element_x: 0.5,
          element_y: 0.5,
        })
        .execute();
    }
    return { sessionId, startedAt };
  }

  /** A token of the first project holding only `scopes`. */
  async function tokenWith(...scopes: Scope[]): Promise<Caller> {
    const { token } = await createApiTokenRecord(test.database.database, {
      projectId: test.first.project.id,
      name: scopes.join(' '),
      scopes,
    });
    return { headers: { authorization: `Bearer ${token}` } };
  }

  /** A person of the first project's organization with `role`, signed in (cookie and CSRF token). */
  async function person(role: 'viewer' | 'member') {
    const added = await addPerson(test.database.database, test.configuration.appUrl, {
      email: `${role}-${engine}@example.com`,
      password: 'correct horse battery staple',
      organizationId: test.first.project.organization_id,
      role,
      actor: 'test',
    });
    if ('problem' in added) throw new Error(added.problem);
    const session = await createSession(test.database.database, {
      userId: added.userId,
      ip: undefined,
      userAgent: undefined,
    });
    return (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
      test.app.inject({
        method,
        url,
        headers: {
          cookie: `service_session=${session.secret}`,
          'x-service-csrf': session.csrfToken,
          'x-service-project': test.first.project.id,
        },
        ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
      });
  }

  it('creates, lists, reads, changes and deletes funnels', async () => {
    const created = expectJson(
      await request('POST', '/v1/funnels', { name: '  Sign-up  ', steps: [HOME, SIGNUP_CLICK, SIGNED_UP] }),
      201,
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^fnl_[0-9A-Z]{26}$/),
      name: 'Sign-up',
      steps: [HOME, SIGNUP_CLICK, SIGNED_UP],
      windowMs: 24 * HOUR,
      countBy: 'session',
      createdBy: expect.stringMatching(/^tok_/),
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
    });
    expect(await get(`/v1/funnels/${created.id}`)).toEqual(created);

    const changed = await ok('PATCH', `/v1/funnels/${created.id}`, {
      name: 'Sign-up by user',
      countBy: 'user',
      windowMs: HOUR,
      steps: [HOME, SIGNED_UP],
    });
    expect(changed).toMatchObject({
      id: created.id,
      name: 'Sign-up by user',
      countBy: 'user',
      windowMs: HOUR,
      steps: [HOME, SIGNED_UP],
      createdAt: created.createdAt,
    });
    expect(await get(`/v1/funnels/${created.id}`)).toEqual(changed);

    // Pages by id, oldest first.
    const second = await ok('POST', '/v1/funnels', { name: 'Two', steps: [HOME, SIGNUP_CLICK] });
    const third = await ok('POST', '/v1/funnels', { name: 'Three', steps: [SIGNUP_CLICK, HOME] });
    const first = await get('/v1/funnels?limit=2');
    expect(first.items.map((item: Json) => item.id)).toEqual([created.id, second.id]);
    const rest = await get(`/v1/funnels?limit=2&cursor=${first.nextCursor}`);
    expect(rest).toEqual({ items: [third] });

    expect((await request('DELETE', `/v1/funnels/${second.id}`)).statusCode).toBe(204);
    expect(expectJson(await request('GET', `/v1/funnels/${second.id}`), 404)).toEqual({
      error: `No funnel ${second.id}`,
      code: 'not_found',
    });
    expect(expectJson(await request('DELETE', `/v1/funnels/${second.id}`), 404).code).toBe('not_found');
    expect((await get('/v1/funnels')).items.map((item: Json) => item.id)).toEqual([created.id, third.id]);
  });

  it('refuses bad input with 400 invalid', async () => {
    const refused = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => {
      const answer = expectJson(await request(method, url, body), 400);
      expect(answer).toEqual({ error: expect.any(String), code: 'invalid' });
      return answer.error as string;
    };
    expect(await refused('POST', '/v1/funnels', { name: 'One', steps: [HOME] })).toMatch(/steps/);
    await refused('POST', '/v1/funnels', { name: 'Eleven', steps: new Array(11).fill(HOME) });
    await refused('POST', '/v1/funnels', { name: 'Kind', steps: [HOME, { type: 'scroll', depth: 3 }] });
    await refused('POST', '/v1/funnels', {
      name: 'Route',
      steps: [HOME, { type: 'pageview', route: 'home' }],
    });
    await refused('POST', '/v1/funnels', {
      name: 'Props',
      steps: [HOME, { type: 'event', name: 'x', properties: { nested: { a: 1 } } }],
    });
    await refused('POST', '/v1/funnels', { name: ' ', steps: [HOME, SIGNED_UP] });
    await refused('POST', '/v1/funnels', { name: 'Window', steps: [HOME, SIGNED_UP], windowMs: 0 });
    await refused('POST', '/v1/funnels', { name: 'Count', steps: [HOME, SIGNED_UP], countBy: 'visit' });
    await refused('POST', '/v1/funnels', { name: 'Extra', steps: [HOME, SIGNED_UP], color: 'red' });
    const { id } = await ok('POST', '/v1/funnels', { name: 'Valid', steps: [HOME, SIGNED_UP] });
    await refused('PATCH', `/v1/funnels/${id}`, {});
    await refused('PATCH', `/v1/funnels/${id}`, { steps: [HOME] });
    await refused('GET', '/v1/funnels/not-a-funnel');
    await refused('GET', '/v1/funnels?cursor=nope');
    await refused('GET', `/v1/funnels/${id}/results?from=2026-11-03&to=2026-11-02`);
    await refused('GET', `/v1/funnels/${id}/results?from=${Date.now() + HOUR}`);
    await refused('GET', `/v1/funnels/${id}/results?since=2026-11-02`);
    await refused('GET', '/v1/funnels/suggestions?from=yesterday');
    expect(
      expectJson(await request('GET', '/v1/funnels/fnl_01KAJBCH80XTQ0YDPAV81S476S/results'), 404),
    ).toEqual({
      error: 'No funnel fnl_01KAJBCH80XTQ0YDPAV81S476S',
      code: 'not_found',
    });
  });

  it('lets a viewer read and not write; a token needs sessions:read to read and sessions:write to write', async () => {
    const { id } = await ok('POST', '/v1/funnels', { name: 'Guarded', steps: [HOME, SIGNED_UP] });
    const before = await get('/v1/funnels?limit=200');

    const viewer = await person('viewer');
    expect((await viewer('GET', '/v1/funnels?limit=200')).json()).toEqual(before);
    expect((await viewer('GET', `/v1/funnels/${id}`)).statusCode).toBe(200);
    expect((await viewer('GET', `/v1/funnels/${id}/results?${RANGE}`)).statusCode).toBe(200);
    expect((await viewer('GET', `/v1/funnels/suggestions?${RANGE}`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['POST', '/v1/funnels', { name: 'Mine', steps: [HOME, SIGNED_UP] }],
      ['PATCH', `/v1/funnels/${id}`, { name: 'Renamed' }],
      ['DELETE', `/v1/funnels/${id}`, undefined],
    ] as const) {
      const answer = await viewer(method, url, body);
      expect(answer.statusCode, `${method} ${url}`).toBe(403);
      expect(answer.json()).toEqual({
        error: expect.stringContaining('sessions:write'),
        code: 'unauthorized',
      });
    }
    const member = await person('member');
    expect((await member('PATCH', `/v1/funnels/${id}`, { name: 'By a member' })).statusCode).toBe(200);

    const callsOnly = await tokenWith('calls:read');
    const refusal = await request('GET', '/v1/funnels', undefined, callsOnly);
    expect(refusal.statusCode).toBe(403);
    expect(refusal.json()).toEqual({ error: expect.stringContaining('sessions:read'), code: 'unauthorized' });
    expect((await request('GET', `/v1/funnels/${id}/results`, undefined, callsOnly)).statusCode).toBe(403);
    const reader = await tokenWith('sessions:read');
    expect((await request('GET', `/v1/funnels/${id}`, undefined, reader)).statusCode).toBe(200);
    expect((await request('DELETE', `/v1/funnels/${id}`, undefined, reader)).statusCode).toBe(403);
    expect(
      (await request('POST', '/v1/funnels', { name: 'R', steps: [HOME, HOME] }, reader)).statusCode,
    ).toBe(403);

    // Nothing changed but the member's rename.
    expect((await get(`/v1/funnels/${id}`)).name).toBe('By a member');
    expect((await get('/v1/funnels?limit=200')).items).toHaveLength(before.items.length);

    // Another project's token never learns the funnel exists.
    const other = await test.createProject('Elsewhere');
    for (const [method, url, body] of [
      ['GET', `/v1/funnels/${id}`, undefined],
      ['GET', `/v1/funnels/${id}/results`, undefined],
      ['PATCH', `/v1/funnels/${id}`, { name: 'Stolen' }],
      ['DELETE', `/v1/funnels/${id}`, undefined],
    ] as const)
      expect(expectJson(await request(method, url, body, other), 404).code).toBe('not_found');
    expect((await get('/v1/funnels', other)).items).toEqual([]);
    expect((await get(`/v1/funnels/${id}`)).name).toBe('By a member');
  });

  it('counts results per session and per user on seeded facts, with drop-offs linking to replays', async () => {
    const project = await test.createProject('Results');
    const as = project;
    // S1 goes through; S2's event has another plan; S3 only rage-clicks; S4 clicked before
    // arriving; S5 (u1 again) stops before the event; S6 clicks after the window; S8 and S9 are
    // one user's two sessions that together go through; S7's first step is before the range.
    const s1 = await seedSession(
      project,
      [
        { at: B, view: '/home' },
        { at: B + 10 * SECOND, click: 'main > button.signup' },
        { at: B + 40 * SECOND, event: 'signup', props: { plan: 'pro', seats: 3 } },
      ],
      'u1',
    );
    const s2 = await seedSession(
      project,
      [
        { at: B + MINUTE, view: '/home' },
        { at: B + MINUTE + 20 * SECOND, click: 'main > button.signup' },
        { at: B + MINUTE + 30 * SECOND, event: 'signup', props: { plan: 'free' } },
      ],
      'u2',
    );
    const s3 = await seedSession(project, [
      { at: B + 2 * MINUTE, view: '/home' },
      { at: B + 2 * MINUTE + 5 * SECOND, click: 'main > button.signup', kind: 'rage' },
      { at: B + 2 * MINUTE + 6 * SECOND, click: 'main > a.pricing' },
    ]);
    const s4 = await seedSession(
      project,
      [
        { at: B + 3 * MINUTE, click: 'main > button.signup' },
        { at: B + 4 * MINUTE, view: '/home' },
        { at: B + 4 * MINUTE + SECOND, view: '/pricing' },
      ],
      'u3',
    );
    const s5 = await seedSession(
      project,
      [
        { at: B + 10 * MINUTE, view: '/home' },
        { at: B + 10 * MINUTE + 50 * SECOND, click: 'main > button.signup' },
      ],
      'u1',
    );
    const s6 = await seedSession(
      project,
      [
        { at: B, view: '/home' },
        { at: B + 2 * HOUR, click: 'main > button.signup' },
        { at: B + 2 * HOUR + SECOND, event: 'signup', props: { plan: 'pro' } },
      ],
      'u4',
    );
    await seedSession(project, [
      { at: B - 2 * HOUR, view: '/home' },
      { at: B + 10 * SECOND, click: 'main > button.signup' },
      { at: B + 20 * SECOND, event: 'signup', props: { plan: 'pro' } },
    ]);
    const s8 = await seedSession(project, [{ at: B + 20 * MINUTE, view: '/home' }], 'u5');
    await seedSession(
      project,
      [
        { at: B + 25 * MINUTE, click: 'main > button.signup' },
        { at: B + 30 * MINUTE, event: 'signup', props: { plan: 'pro' } },
      ],
      'u5',
    );
    // The same steps in another project count for that project only.
    await seedSession(test.first, [
      { at: B, view: '/home' },
      { at: B + SECOND, click: 'main > button.signup' },
      { at: B + 2 * SECOND, event: 'signup', props: { plan: 'pro' } },
    ]);

    const funnel = await ok(
      'POST',
      '/v1/funnels',
      { name: 'Sign-up', steps: [HOME, SIGNUP_CLICK, SIGNED_UP], windowMs: HOUR },
      as,
    );
    const dropped = (session: { sessionId: string; startedAt: number }, at: number, userId?: string) => ({
      sessionId: session.sessionId,
      ...(userId === undefined ? {} : { userId }),
      at: new Date(at).toISOString(),
      links: {
        replay: `${test.configuration.appUrl}/sessions/${session.sessionId}?t=${at - session.startedAt}`,
      },
    });

    const bySession = await get(`/v1/funnels/${funnel.id}/results?${RANGE}`, as);
    expect(bySession).toEqual({
      funnelId: funnel.id,
      from: new Date(B - HOUR).toISOString(),
      to: new Date(B + 6 * HOUR).toISOString(),
      windowMs: HOUR,
      countBy: 'session',
      steps: [
        {
          step: HOME,
          count: 7,
          conversionFromPrevious: 1,
          conversionFromFirst: 1,
          medianTimeFromPreviousMs: null,
          droppedOffCount: 0,
          droppedOff: [],
        },
        {
          step: SIGNUP_CLICK,
          count: 3,
          conversionFromPrevious: 3 / 7,
          conversionFromFirst: 3 / 7,
          medianTimeFromPreviousMs: 20 * SECOND,
          droppedOffCount: 4,
          droppedOff: [
            dropped(s8, B + 20 * MINUTE),
            dropped(s4, B + 4 * MINUTE),
            dropped(s3, B + 2 * MINUTE),
            dropped(s6, B),
          ],
        },
        {
          step: SIGNED_UP,
          count: 1,
          conversionFromPrevious: 1 / 3,
          conversionFromFirst: 1 / 7,
          medianTimeFromPreviousMs: 30 * SECOND,
          droppedOffCount: 2,
          droppedOff: [dropped(s5, B + 10 * MINUTE + 50 * SECOND), dropped(s2, B + MINUTE + 20 * SECOND)],
        },
      ],
    });

    await ok('PATCH', `/v1/funnels/${funnel.id}`, { countBy: 'user' }, as);
    const byUser = await get(`/v1/funnels/${funnel.id}/results?${RANGE}`, as);
    expect(byUser.countBy).toBe('user');
    // Units: u1 (S1 and S5), u2, S3 (no user), u3, u4, u5 (S8 then S9), and S7's user-less session, outside.
    expect(byUser.steps).toEqual([
      expect.objectContaining({ count: 6, droppedOffCount: 0 }),
      {
        step: SIGNUP_CLICK,
        count: 3,
        conversionFromPrevious: 0.5,
        conversionFromFirst: 0.5,
        // u1 10 s, u2 20 s, u5 5 min.
        medianTimeFromPreviousMs: 20 * SECOND,
        droppedOffCount: 3,
        droppedOff: [dropped(s4, B + 4 * MINUTE, 'u3'), dropped(s3, B + 2 * MINUTE), dropped(s6, B, 'u4')],
      },
      {
        step: SIGNED_UP,
        count: 2,
        conversionFromPrevious: 2 / 3,
        conversionFromFirst: 1 / 3,
        // u1 30 s and u5 5 min: the mean of the two.
        medianTimeFromPreviousMs: (30 * SECOND + 5 * MINUTE) / 2,
        droppedOffCount: 1,
        droppedOff: [dropped(s2, B + MINUTE + 20 * SECOND, 'u2')],
      },
    ]);

    // A range that ends before the event step: nobody gets to it.
    const early = await get(`/v1/funnels/${funnel.id}/results?from=${B - HOUR}&to=${B + 30 * SECOND}`, as);
    expect(early.steps.map((step: Json) => step.count)).toEqual([2, 1, 0]);
    expect(s1.sessionId).toMatch(/^ses_/);
  });

  it('caps drop-offs at 20 per step, the latest', async () => {
    const project = await test.createProject('Many');
    const sessions = [];
    for (let index = 0; index < 23; index += 1)
      sessions.push(await seedSession(project, [{ at: B + index * SECOND, view: '/home' }]));
    const funnel = await ok(
      'POST',
      '/v1/funnels',
      { name: 'Home to pricing', steps: [HOME, { type: 'pageview', route: '/pricing' }] },
      project,
    );
    const results = await get(`/v1/funnels/${funnel.id}/results?${RANGE}`, project);
    expect(results.steps[0].count).toBe(23);
    expect(results.steps[1]).toMatchObject({ count: 0, conversionFromPrevious: 0, droppedOffCount: 23 });
    expect(results.steps[1].droppedOff.map((unit: Json) => unit.sessionId)).toEqual(
      sessions
        .slice(3)
        .reverse()
        .map((session) => session.sessionId),
    );
  });

  it("normalizes page-view steps' routes with the project's route patterns, as the facts job names page views", async () => {
    const project = await test.createProject('Routes');
    await ok(
      'PATCH',
      `/v1/projects/${project.project.id}`,
      { settings: { insights: { routePatterns: ['/docs/:slug'] } } },
      project,
    );
    // The routes the facts job writes for /product/123 and /docs/intro with that pattern.
    await seedSession(project, [
      { at: B, view: '/product/:id' },
      { at: B + MINUTE, view: '/docs/:slug' },
    ]);
    await seedSession(project, [{ at: B + 2 * MINUTE, view: '/product/:id' }]);

    const created = expectJson(
      await request(
        'POST',
        '/v1/funnels',
        {
          name: 'Product to docs',
          steps: [
            { type: 'pageview', route: '/product/123' },
            { type: 'pageview', route: '/docs/intro/?ref=mail#top' },
          ],
        },
        project,
      ),
      201,
    );
    const normalized = [
      { type: 'pageview', route: '/product/:id' },
      { type: 'pageview', route: '/docs/:slug' },
    ];
    expect(created.steps).toEqual(normalized);
    expect((await get(`/v1/funnels/${created.id}`, project)).steps).toEqual(normalized);
    const results = await get(`/v1/funnels/${created.id}/results?${RANGE}`, project);
    expect(results.steps.map((step: Json) => [step.step, step.count])).toEqual([
      [normalized[0], 2],
      [normalized[1], 1],
    ]);

    // A change of steps is normalized too; other steps stay as given.
    const changed = await ok(
      'PATCH',
      `/v1/funnels/${created.id}`,
      { steps: [{ type: 'pageview', route: '/docs/getting-started/' }, SIGNUP_CLICK] },
      project,
    );
    expect(changed.steps).toEqual([{ type: 'pageview', route: '/docs/:slug' }, SIGNUP_CLICK]);

    // A funnel saved before a pattern was added is matched as page views are named now.
    const before = await ok(
      'POST',
      '/v1/funnels',
      { name: 'Guides', steps: [{ type: 'pageview', route: '/guides/intro' }, HOME] },
      project,
    );
    expect(before.steps[0]).toEqual({ type: 'pageview', route: '/guides/intro' });
    await ok(
      'PATCH',
      `/v1/projects/${project.project.id}`,
      { settings: { insights: { routePatterns: ['/docs/:slug', '/guides/:guide'] } } },
      project,
    );
    await seedSession(project, [
      { at: B, view: '/guides/:guide' },
      { at: B + MINUTE, view: '/home' },
    ]);
    const guides = await get(`/v1/funnels/${before.id}/results?${RANGE}`, project);
    expect(guides.steps.map((step: Json) => [step.step, step.count])).toEqual([
      [{ type: 'pageview', route: '/guides/:guide' }, 1],
      [HOME, 1],
    ]);
  });

  it('suggests draft funnels from the route sequences most sessions walked', async () => {
    const project = await test.createProject('Suggestions');
    const walk = (start: number, routes: string[]) =>
      seedSession(
        project,
        routes.map((route, index) => ({ at: start + index * MINUTE, view: route })),
      );
    for (let index = 0; index < 3; index += 1) await walk(B + index * HOUR, ['/', '/pricing', '/signup']);
    for (let index = 0; index < 2; index += 1) await walk(B + index * HOUR, ['/', '/docs']);
    // A reload of /pricing is no step of its own.
    await walk(B, ['/', '/pricing', '/pricing', '/signup', '/welcome']);
    // /a → /b → /a is no funnel; /a → /b and /b → /a are, and /a → /b counts once for the session.
    await walk(B, ['/a', '/b', '/a', '/b']);
    // Outside the range.
    await walk(B - 3 * HOUR, ['/x', '/y']);

    const draft = (routes: string[]) => ({
      name: routes.join(' → '),
      steps: routes.map((route) => ({ type: 'pageview', route })),
      windowMs: 24 * HOUR,
      countBy: 'session',
    });
    const suggestions = await get(`/v1/funnels/suggestions?${RANGE}`, project);
    // `/ → /pricing` and `/pricing → /signup` (4 sessions each) are inside `/ → /pricing → /signup`
    // (4 too); `/signup → /welcome` and `/pricing → /signup → /welcome` inside the 4-step one.
    expect(suggestions).toEqual({
      items: [
        { sessions: 4, draft: draft(['/', '/pricing', '/signup']) },
        { sessions: 2, draft: draft(['/', '/docs']) },
        { sessions: 1, draft: draft(['/', '/pricing', '/signup', '/welcome']) },
        { sessions: 1, draft: draft(['/a', '/b']) },
        { sessions: 1, draft: draft(['/b', '/a']) },
      ],
    });
    // A draft is a body ready to POST (its first step: the 4 sessions and the 2 that went to /docs).
    const created = expectJson(
      await request('POST', '/v1/funnels', suggestions.items[0].draft, project),
      201,
    );
    expect(created).toMatchObject(suggestions.items[0].draft);
    expect(
      (await get(`/v1/funnels/${created.id}/results?${RANGE}`, project)).steps.map(
        (step: Json) => step.count,
      ),
    ).toEqual([6, 4, 4]);
    expect(await get('/v1/funnels/suggestions', await test.createProject('Empty'))).toEqual({ items: [] });
  });
});
