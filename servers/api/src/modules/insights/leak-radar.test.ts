import { describe, expect, it } from 'vitest';
import { sessionMeta, type WireItem } from '../../../test/call-timelines.ts';
import type { Json } from '../../../test/http.ts';
import { newSessionId } from '../../../test/ingest-helpers.ts';
import type { TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { notificationsSuite, T0, verified } from '../notifications/notifications.fixture.ts';
import { findLeaks, type LeakFinding, reportLeaks } from './leak-radar.ts';

// The leak radar end to end on both engines: chunks through POST /v1/ingest, the facts worker
// scanning them, `privacy.leak_radar` events in the inbox and delivered to a real receiver
// through a `security` rule, naming the session, event type and field and never the value; the
// hourly throttle per kind and field; clean sessions and Luhn-invalid numbers raise nothing.

const EMAIL = 'ada.lovelace@example.com';
const CARD = '4111 1111 1111 1111';
const TOKEN = 'sk_live_51HqLyjWDarjtT1zdp7dc';
const PASSWORD = 'hunter2-Correct-Horse';
/** Every value that must never be stored or sent, in every form it was written in. */
const VALUES = [EMAIL, CARD, CARD.replaceAll(' ', ''), TOKEN, PASSWORD];

const leakyEvents = (t: number): WireItem[] => [
  { t, type: 'nav', url: `https://shop.test/welcome?email=${EMAIL}&ref=mail` },
  { t: t + 1_000, type: 'error', name: 'Error', message: `Payment declined for ${CARD}`, source: 'onerror' },
  {
    t: t + 2_000,
    type: 'request',
    initiator: 'fetch',
    method: 'GET',
    // Ingest keeps a request's origin and path: the key is in the path.
    url: `https://api.shop.test/v1/keys/${TOKEN}`,
    status: 200,
    durationMs: 12,
  },
  { t: t + 3_000, type: 'custom', name: 'signup', props: { plan: 'pro', password: PASSWORD } },
];

describe('finding leaks in a chunk', () => {
  it('names the field and the place, never the value', () => {
    const findings = findLeaks(3, {
      meta: { url: 'https://shop.test/', referrer: `https://mail.test/?to=${EMAIL}` },
      events: [
        ...leakyEvents(T0),
        { t: T0, type: 'identify', user: { id: 'u_1', email: EMAIL } },
        { t: T0, type: 'rrweb', data: { type: 4, data: { href: `https://shop.test/?token=${TOKEN}` } } },
        {
          t: T0,
          type: 'custom',
          name: 'x',
          props: { [EMAIL]: 1, apiKey: '****', token: 'abc', token_count: 3 },
        },
      ],
    });
    expect(findings).toEqual([
      { kind: 'email', eventType: 'meta', field: 'meta.referrer', place: 'chunk 3, meta.referrer' },
      { kind: 'email', eventType: 'nav', field: 'nav.url', place: 'chunk 3, events[0].url' },
      {
        kind: 'card_number',
        eventType: 'error',
        field: 'error.message',
        place: 'chunk 3, events[1].message',
      },
      { kind: 'api_key', eventType: 'request', field: 'request.url', place: 'chunk 3, events[2].url' },
      {
        kind: 'secret',
        eventType: 'custom',
        field: 'custom.props.password',
        place: 'chunk 3, events[3].props[#1]',
      },
      {
        kind: 'api_key',
        eventType: 'rrweb',
        field: 'rrweb.meta.href',
        place: 'chunk 3, events[5].data.data.href',
      },
      // A property whose name is an e-mail address is named by its position.
      {
        kind: 'email',
        eventType: 'custom',
        field: 'custom.props[#0]',
        place: 'chunk 3, events[6].props[#0] (name)',
      },
      // A masked value or a number is no leak; a secret-named property with a value is.
      {
        kind: 'secret',
        eventType: 'custom',
        field: 'custom.props.token',
        place: 'chunk 3, events[6].props[#2]',
      },
    ]);
    expect(JSON.stringify(findings)).not.toMatch(/ada\.lovelace|4111|sk_live|hunter2/);
  });
});

describe.each(ENGINES)('the leak radar on %s', (engine) => {
  const { suite, request, ok, worker, setUp, send } = notificationsSuite(engine);

  const inbox = async (project: TestProject): Promise<Json[]> =>
    (await ok('GET', '/v1/inbox?limit=100', undefined, project)).items;

  const session = async (project: TestProject, events: WireItem[]) => {
    const sessionId = newSessionId();
    await send(project, {
      sessionId,
      seq: 0,
      sentAt: (events.at(-1)?.t ?? T0) + 100,
      meta: { ...sessionMeta(T0), url: 'https://shop.test/' },
      events,
    });
    return sessionId;
  };

  it('reports each kind once per session through a security rule, names where, never what, and throttles per field', async () => {
    const { project } = await setUp({ source: { type: 'security', events: ['privacy.leak_radar'] } });
    const leaky = await session(project, leakyEvents(T0));
    // A clean session and a 16-digit number that fails Luhn raise nothing.
    await session(project, [
      { t: T0, type: 'nav', url: 'https://shop.test/products?ref=mail&page=2' },
      { t: T0 + 1, type: 'error', message: 'Order 4111 1111 1111 1112 not found', source: 'onerror' },
      { t: T0 + 2, type: 'custom', name: 'checkout', props: { step: 3, card_brand: 'visa' } },
    ]);
    await suite.test.factsWorker.runUntilIdle();

    const items = await inbox(project);
    expect(items).toHaveLength(4);
    for (const item of items) expect(item.data.summary).toContain(`Session ${leaky} `);
    const byKind = Object.fromEntries(
      items.map((item) => [/\((\w+)\) that masking/.exec(item.data.summary)?.[1], item]),
    );
    expect(Object.keys(byKind).sort()).toEqual(['api_key', 'card_number', 'email', 'secret']);
    const link = `${suite.test.configuration.appUrl}/sessions/${leaky}`;
    for (const [kind, field, eventType, severity] of [
      ['email', 'nav.url', 'nav', 'medium'],
      ['card_number', 'error.message', 'error', 'high'],
      ['api_key', 'request.url', 'request', 'high'],
      ['secret', 'custom.props.password', 'custom', 'high'],
    ] as const) {
      const item = byKind[kind] as Json;
      expect(item).toMatchObject({ type: 'privacy.leak_radar', severity });
      expect(item.title).toContain(field);
      expect(item.data.summary).toContain(`Session ${leaky}`);
      expect(item.data.summary).toContain(`event type ${eventType}, field ${field}`);
      expect(item.data.links).toEqual({ session: link });
      expect(item.data.counts).toEqual({ places: 1, fields: 1 });
    }

    // Delivered to the rule's channel, signed and valid.
    expect(await worker().runUntilIdle()).toBe(4);
    expect(suite.receiver.rejected).toHaveLength(0);
    const bodies = suite.receiver.deliveries.map((delivery) => {
      expect(verified(delivery).type).toBe('privacy.leak_radar');
      return delivery.rawBody;
    });
    expect(bodies).toHaveLength(4);

    // The values appear nowhere: not in the stored events, the inbox, the bodies, the throttle.
    const stored = JSON.stringify(
      await suite.test.database.database
        .selectFrom('notification_events')
        .selectAll()
        .where('project_id', '=', project.project.id)
        .execute(),
    );
    const answer = (await request('GET', '/v1/inbox?limit=100', undefined, project)).body;
    const reports = JSON.stringify(
      await suite.test.database.database
        .selectFrom('leak_radar_reports')
        .selectAll()
        .where('project_id', '=', project.project.id)
        .execute(),
    );
    for (const value of VALUES)
      for (const [where, text] of [
        ['stored events', stored],
        ['inbox', answer],
        ['webhook bodies', bodies.join('\n')],
        ['reports', reports],
      ] as const)
        expect(text.includes(value), `${value} in ${where}`).toBe(false);

    // The same kind in the same field within the hour is not reported again; in another field it is.
    await session(project, [
      { t: T0, type: 'nav', url: `https://shop.test/welcome?email=${EMAIL}` },
      { t: T0 + 1, type: 'error', message: `No account for ${EMAIL}`, source: 'onerror' },
    ]);
    await suite.test.factsWorker.runUntilIdle();
    const after = await inbox(project);
    expect(after).toHaveLength(5);
    const newest = after.find((item) => !items.some((earlier) => earlier.id === item.id)) as Json;
    expect(newest.data.summary).toContain('event type error, field error.message');
    expect(newest.data.summary).not.toContain('nav.url');
  });

  it('reports a kind in a field again once the hour has passed, each kind of a session in its own event', async () => {
    const project = await suite.test.createProject();
    const findings: LeakFinding[] = [
      { kind: 'email', eventType: 'nav', field: 'nav.url', place: 'chunk 0, events[0].url' },
      { kind: 'email', eventType: 'error', field: 'error.stack', place: 'chunk 0, events[1].stack' },
      { kind: 'email', eventType: 'nav', field: 'nav.url', place: 'chunk 1, events[4].url' },
      { kind: 'bearer_token', eventType: 'request', field: 'request.url', place: 'chunk 1, events[2].url' },
    ];
    const report = (sessionId: string, at: number, some = findings) =>
      suite.test.database.database.transaction().execute((transaction) =>
        reportLeaks(transaction, project.project, sessionId, some, {
          now: new Date(at),
          appUrl: 'https://app.example.com',
        }),
      );
    const now = Date.now();
    expect(await report('ses_a', now)).toEqual({ events: 2, deliveries: 0 });
    const first = await inbox(project);
    const email = first.find((item) => item.data.summary.includes('(email)')) as Json;
    expect(email.data.counts).toEqual({ places: 3, fields: 2 });
    expect(email.title).toBe('Leak radar: an e-mail address in error.stack, nav.url');
    // Within the hour, for any session: nothing; one field new: only it.
    expect(await report('ses_b', now + 59 * 60_000)).toEqual({ events: 0, deliveries: 0 });
    expect(
      await report('ses_b', now + 59 * 60_000, [
        ...findings,
        { kind: 'email', eventType: 'custom', field: 'custom.name', place: 'chunk 0, events[3].name' },
      ]),
    ).toEqual({ events: 1, deliveries: 0 });
    // After the hour, again.
    expect(await report('ses_c', now + 61 * 60_000)).toEqual({ events: 2, deliveries: 0 });
    expect(await inbox(project)).toHaveLength(5);
  });

  it('writes leaks to the inbox without any rule, and nothing for a clean project', async () => {
    const project = await suite.test.createProject();
    const clean = await suite.test.createProject();
    await session(project, [{ t: T0, type: 'custom', name: 'login', props: { apiKey: 'abc123' } }]);
    await session(clean, [{ t: T0, type: 'nav', url: 'https://shop.test/products?ref=mail' }]);
    await suite.test.factsWorker.runUntilIdle();
    expect((await inbox(project)).map((item) => item.type)).toEqual(['privacy.leak_radar']);
    expect(await inbox(clean)).toEqual([]);
  });
});
