import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, type Json, startHarness, until, withOptions } from './harness.ts';

// The rrweb recorder, its privacy defaults, recording modes, navigation, web vitals and remote
// configuration, in headless Chromium against the real server.

let harness: Harness;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  harness = await startHarness();
}, 120_000);

afterAll(async () => {
  await harness?.close();
});

beforeEach(async () => {
  context = await harness.browser.newContext();
  page = await context.newPage();
});

afterEach(async () => {
  await context?.close();
});

const sessionIdOf = (target: Page): Promise<string> => target.evaluate(() => (window as Json).sdk.sessionId);
const flush = (target: Page) => target.evaluate(() => (window as Json).sdk.flush());

/** rrweb's full snapshot (type 2) of the stored session. */
function snapshotOf(events: Json[]): Json {
  const snapshot = events.find((event) => event.type === 'rrweb' && event.data.type === 2);
  expect(snapshot).toBeDefined();
  return snapshot.data.data.node;
}

/** The first serialized node of an rrweb snapshot that `test` accepts. */
function find(node: Json, test: (node: Json) => boolean): Json {
  if (test(node)) return node;
  for (const child of node.childNodes ?? []) {
    const found = find(child, test);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The serialized element with this `id` attribute. */
const byId = (node: Json, id: string): Json => find(node, (each) => each.attributes?.id === id);

const textOf = (node: Json): string =>
  node.type === 3 ? node.textContent : (node.childNodes ?? []).map(textOf).join('');

/** Adds a paragraph to the page every 200 ms, so rrweb has mutations to record. */
const startMutating = (target: Page) =>
  target.evaluate(() => {
    (window as Json).mutating = setInterval(() => {
      const paragraph = document.createElement('p');
      paragraph.textContent = `tick ${Date.now()}`;
      document.body.append(paragraph);
    }, 200);
  });

describe('recorder privacy', () => {
  it('masks every text and input, blocks media and the block class, and shows only the unmask class', async () => {
    await page.goto(harness.pageUrl);
    await page.fill('#email', 'grace@example.com');
    await page.fill('#coupon', 'AUTUMN25');
    await flush(page);
    const { events } = await harness.stored(await sessionIdOf(page));
    const node = snapshotOf(events);
    expect(textOf(byId(node, 'title'))).toBe('******* ** *** ********');
    expect(textOf(byId(node, 'secret'))).toMatch(/^[* ]+$/);
    expect(byId(node, 'email').attributes.value).toBe('*'.repeat('ada@example.com'.length));
    expect(byId(node, 'password').attributes.value).toBe('*******');
    // Media: an empty box of the element's size, without its source or alternative text.
    expect(find(node, (each) => each.tagName === 'img').attributes).toEqual({
      rr_width: expect.any(String),
      rr_height: expect.any(String),
    });
    const blocked = find(node, (each) => each.attributes?.class === 'svc-block');
    expect(blocked.childNodes).toEqual([]);
    expect(blocked.attributes.rr_height).toBeDefined();
    // The unmask class shows its text and inputs, never a password.
    expect(textOf(byId(node, 'public'))).toBe('Plan Pro');
    expect(byId(node, 'coupon').attributes.value).toBe('SPRING24');
    expect(byId(node, 'pin').attributes.value).toBe('****');
    // Typing is recorded masked, except inside the unmask class.
    const inputs = events.filter((event) => event.type === 'rrweb' && event.data.data?.source === 5);
    expect(inputs.map((event) => event.data.data.text)).toEqual(
      expect.arrayContaining(['*'.repeat('grace@example.com'.length), 'AUTUMN25']),
    );
    const everything = JSON.stringify(events);
    for (const secret of [
      'Lovelace',
      '4111',
      'ada@example.com',
      'grace@example.com',
      'hunter2',
      'Internal note',
      'base64',
    ])
      expect(everything, secret).not.toContain(secret);
  });

  it('strict mode ignores the unmask class, masks text attributes and keeps URLs to origin and path', async () => {
    await page.goto(`${withOptions(harness.pageUrl, { privacy: { mode: 'strict' } })}#token=abc`);
    await page.evaluate(() => history.pushState({}, '', '/account?email=ada%40example.com'));
    await flush(page);
    const { session, events } = await harness.stored(await sessionIdOf(page));
    const node = snapshotOf(events);
    expect(textOf(byId(node, 'public'))).toBe('**** ***');
    expect(byId(node, 'coupon').attributes.value).toBe('********');
    expect(byId(node, 'email').attributes.placeholder).toBe('**** ******');
    expect(session.url).toBe(harness.pageUrl);
    // The replay's own URL: the page when the recorder took its snapshot (before or after the
    // pushState, as the recorder loads on demand), cut to origin and path either way.
    const meta = events.find((event) => event.type === 'rrweb' && event.data.type === 4);
    expect([harness.pageUrl, `${new URL(harness.pageUrl).origin}/account`]).toContain(meta.data.data.href);
    expect(events.filter((event) => event.type === 'nav')).toEqual([
      expect.objectContaining({ url: `${new URL(harness.pageUrl).origin}/account` }),
    ]);
    const everything = JSON.stringify(events);
    for (const secret of ['Plan Pro', 'SPRING24', 'Your e-mail', 'token=abc', 'ada%40example.com'])
      expect(everything, secret).not.toContain(secret);
  });
});

describe('navigation and web vitals', () => {
  it('records history and fragment changes as `nav`, and TTFB and FCP as `vital`', async () => {
    await page.goto(harness.pageUrl);
    await page.evaluate(() => {
      history.pushState({}, '', '/calls/42');
      history.replaceState({}, '', '/calls/42?tab=quality');
      location.hash = 'stats';
    });
    await page.waitForTimeout(300);
    await page.goBack();
    await page.waitForTimeout(300);
    await flush(page);
    const { events } = await harness.stored(await sessionIdOf(page));
    const origin = new URL(harness.pageUrl).origin;
    expect(events.filter((event) => event.type === 'nav').map((event) => event.url)).toEqual([
      `${origin}/calls/42`,
      `${origin}/calls/42?tab=quality`,
      `${origin}/calls/42?tab=quality#stats`,
      `${origin}/calls/42?tab=quality`,
    ]);
    const vitals = events.filter((event) => event.type === 'vital');
    expect(vitals.map((event) => event.name)).toEqual(expect.arrayContaining(['TTFB', 'FCP']));
    for (const vital of vitals) {
      expect(vital.value).toBeGreaterThanOrEqual(0);
      expect(['good', 'needs-improvement', 'poor']).toContain(vital.rating);
    }
  });
});

describe('shutdown', () => {
  it('gives the page back: the native history methods, no more listeners or events', async () => {
    await page.goto(harness.pageUrl);
    const restored = await page.evaluate(async () => {
      const wrapped = history.pushState !== History.prototype.pushState;
      await (window as Json).sdk.shutdown();
      return {
        wrapped,
        native:
          history.pushState === History.prototype.pushState &&
          history.replaceState === History.prototype.replaceState,
      };
    });
    expect(restored).toEqual({ wrapped: true, native: true });
    const sessionId = await sessionIdOf(page);
    await page.evaluate(() => {
      history.pushState({}, '', '/after-shutdown');
      setTimeout(() => {
        throw new Error('after shutdown');
      }, 0);
    });
    await page.waitForTimeout(1_500);
    const { events } = await harness.stored(sessionId);
    expect(events.some((event) => event.type === 'nav' || event.type === 'error')).toBe(false);
  });
});

describe('recorder detail (the governor)', () => {
  it('records less as the level drops, and declares the time paused in survival as a gap', async () => {
    await page.goto(withOptions(harness.pageUrl, { recording: { enabled: false } }));
    await page.addScriptTag({ url: '/recorder.js' });
    await page.evaluate(() => {
      const events: Json[] = [];
      (window as Json).recorded = events;
      (window as Json).recorder = (window as Json).SvcRecorder.startRecorder({
        emit: (event: Json) => events.push(event),
      });
    });
    /** Moves the mouse across the page; the number of rrweb mouse-move events (source 1) recorded. */
    const moves = async () => {
      const before: number = await page.evaluate(() => (window as Json).recorded.length);
      for (let step = 0; step < 20; step += 1) {
        await page.mouse.move(10 + step * 20, 10 + step * 10);
        await page.waitForTimeout(60);
      }
      await page.waitForTimeout(600);
      return page.evaluate(
        (from) =>
          (window as Json).recorded
            .slice(from)
            .filter(
              (event: Json) =>
                event.type === 'rrweb' && event.data.type === 3 && event.data.data.source === 1,
            ).length,
        before,
      );
    };
    expect(await moves()).toBeGreaterThan(0);
    await page.evaluate(() => (window as Json).recorder.setDetail('reduced'));
    expect(await moves()).toBe(0);

    await page.evaluate(() => (window as Json).recorder.setDetail('paused'));
    const pausedFrom: number = await page.evaluate(() => (window as Json).recorded.length);
    await page.evaluate(() => document.body.append('while paused'));
    await page.waitForTimeout(500);
    expect(await page.evaluate(() => (window as Json).recorded.length)).toBe(pausedFrom);
    await page.evaluate(() => (window as Json).recorder.setDetail('full'));
    const resumed: Json[] = await page.evaluate((from) => (window as Json).recorded.slice(from), pausedFrom);
    expect(resumed[0]).toMatchObject({ type: 'gap', reason: 'survival' });
    expect(resumed[0].toT - resumed[0].fromT).toBeGreaterThanOrEqual(500);
    // A new full snapshot: the replay goes on from the page as it is now.
    expect(resumed.slice(1, 3).map((event) => event.data.type)).toEqual([4, 2]);
    expect(await moves()).toBeGreaterThan(0);
  }, 30_000);
});

describe('recording modes', () => {
  it('conditional: stores nothing until a trigger, then the pre-roll from a full snapshot and the trigger', async () => {
    await page.goto(
      withOptions(harness.pageUrl, {
        recording: { mode: 'conditional', triggers: ['checkout_failed'], checkoutIntervalSec: 2 },
      }),
    );
    const sessionId = await sessionIdOf(page);
    await startMutating(page);
    await page.evaluate(() => (window as Json).sdk.track('browsing'));
    await page.waitForTimeout(5_000);
    await flush(page);
    expect((await harness.request('GET', `/v1/sessions/${sessionId}`)).status).toBe(404);

    const triggeredAt: number = await page.evaluate(() => {
      (window as Json).sdk.track('checkout_failed', { plan: 'pro' });
      return Date.now();
    });
    await page.waitForTimeout(1_000);
    await flush(page);
    const { session, events } = await harness.stored(sessionId);
    expect(session.gaps).toEqual([]);
    // The replay's pre-roll starts at a full snapshot (Meta, then the snapshot) and covers at
    // least one checkout interval before the trigger, but not the start of the page; the events
    // other than replay of the time before (the `browsing` custom event) are kept.
    const replay = events.filter((event) => event.type === 'rrweb');
    expect(replay[0]).toMatchObject({ data: { type: 4 } });
    expect(replay[1]).toMatchObject({ data: { type: 2 } });
    expect(replay[0].t).toBeLessThanOrEqual(triggeredAt - 2_000);
    expect(replay[0].t).toBeGreaterThan(triggeredAt - 5_000);
    const browsing = events.findIndex((event) => event.type === 'custom' && event.name === 'browsing');
    expect(browsing).toBeGreaterThanOrEqual(0);
    expect(browsing).toBeLessThan(events.indexOf(replay[0]));
    expect(events.filter((event) => event.type === 'trigger')).toEqual([
      expect.objectContaining({ name: 'checkout_failed' }),
    ]);
    // Recorded as it comes after the trigger.
    const after = events.filter((event) => event.type === 'rrweb' && event.t > triggeredAt + 200);
    expect(after.length).toBeGreaterThan(0);
  }, 30_000);

  it('monitor mode: a gap for what was let go, then a burst with its pre-roll around an error', async () => {
    await page.goto(
      withOptions(harness.pageUrl, {
        recording: {
          monitorModeAfterMinutes: 0,
          monitorTriggers: ['error'],
          checkoutIntervalSec: 1,
          postRollSec: 1,
        },
      }),
    );
    const sessionId = await sessionIdOf(page);
    await startMutating(page);
    await page.evaluate(() => (window as Json).sdk.track('still_sent'));
    await page.waitForTimeout(3_500);
    await page.evaluate(() => setTimeout(() => Promise.reject(new Error('boom')), 0));
    await page.waitForTimeout(2_500);
    await flush(page);
    const { events } = await harness.stored(sessionId);
    // Events other than the replay are sent throughout.
    expect(events.some((event) => event.type === 'custom' && event.name === 'still_sent')).toBe(true);
    const gapAt = events.findIndex((event) => event.type === 'gap');
    expect(events[gapAt]).toMatchObject({ reason: 'monitor' });
    expect(events[gapAt].toT).toBeGreaterThan(events[gapAt].fromT);
    expect(events[gapAt + 1]).toMatchObject({ type: 'rrweb', data: { type: 4 } });
    const trigger = events.find((event) => event.type === 'trigger');
    expect(trigger).toMatchObject({ name: 'error' });
    // The pre-roll covers at least the checkout interval before the error; the post-roll follows it.
    expect(trigger.t - events[gapAt + 1].t).toBeGreaterThanOrEqual(1_000);
    const replay = events.filter((event) => event.type === 'rrweb');
    expect(replay.some((event) => event.t > trigger.t && event.t <= trigger.t + 1_000)).toBe(true);
    expect(replay.some((event) => event.t > trigger.t + 1_300)).toBe(false);
  }, 30_000);
});

describe('remote configuration', () => {
  it('applies the project settings from GET /v1/config: the collector switched on and conditional recording', async () => {
    const project = await harness.read('/v1/projects/current');
    const patch = (settings: unknown) => harness.request('PATCH', `/v1/projects/${project.id}`, { settings });
    expect(
      (
        await patch({
          webrtc: { enabled: true },
          recording: { mode: 'conditional', triggers: ['remote_trigger'] },
        })
      ).status,
    ).toBe(200);
    try {
      await page.goto(harness.pageUrl);
      const sessionId = await sessionIdOf(page);
      // The page's own options say nothing about either; the collector loads on the project's word.
      await page.evaluate(async () => {
        await (window as Json).sdk.webrtc.list();
        new RTCPeerConnection().close();
      });
      await flush(page);
      expect((await harness.request('GET', `/v1/sessions/${sessionId}`)).status).toBe(404);
      await page.evaluate(() => (window as Json).sdk.track('remote_trigger'));
      await flush(page);
      const { session, events } = await harness.stored(sessionId);
      expect(session.recording).toEqual({ mode: 'conditional' });
      const names = events.filter((event) => event.type === 'call.event').map((event) => event.name);
      expect(names).toEqual(expect.arrayContaining(['pc_created', 'pc_closed']));
      expect(events.at(-1)).toMatchObject({ type: 'trigger', name: 'remote_trigger' });
      // Cached in localStorage for the next page.
      const cached = await page.evaluate(() =>
        Object.keys(localStorage).filter((key) => key.startsWith('svc:config:')),
      );
      expect(cached).toHaveLength(1);
    } finally {
      await patch({ webrtc: { enabled: false }, recording: { mode: 'always', triggers: [] } });
    }
  }, 30_000);
});

describe('limits', () => {
  it('declares a gap for a chunk the server can never take (an enormous unmasked snapshot), and goes on', async () => {
    await page.goto(harness.pageUrl);
    const sessionId = await sessionIdOf(page);
    await flush(page);
    // Random text does not compress: over the 1 MiB compressed limit, refused with 413.
    await page.evaluate(() => {
      const huge = document.createElement('pre');
      huge.className = 'svc-unmask';
      huge.textContent = Array.from({ length: 1_400_000 }, () =>
        String.fromCharCode(33 + Math.floor(Math.random() * 90)),
      ).join('');
      document.body.append(huge);
    });
    await page.waitForTimeout(300);
    await flush(page);
    await page.evaluate(() => (window as Json).sdk.track('after'));
    await flush(page);
    await until(
      async () => (await harness.stored(sessionId)).events.some((event) => event.name === 'after'),
      15_000,
    );
    const { session, events } = await harness.stored(sessionId);
    expect(session.gaps).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'missing' }),
        expect.objectContaining({ kind: 'sdk', reason: 'overflow' }),
      ]),
    );
    expect(events.some((event) => event.type === 'gap' && event.reason === 'overflow')).toBe(true);
  }, 30_000);
});
