import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../api/src/platform/secrets.ts';
import { newSessionId, postChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { formatClock } from '../src/ui/format.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';
import {
  ingestSynthetic,
  type Json,
  type RecordedPage,
  type Recording,
  recordSession,
  serveRecordedPage,
  storedChunks,
} from './recorded-page.ts';
import { CHECKOUT_MS, CHUNK_MS, syntheticChunks } from './synthetic-session.ts';

// The session page and the share view against the real server, with a session recorded by the
// real browser SDK in Chromium: the replayed DOM, masking, markers, ?t=, gaps, skip inactivity,
// the event list, sharing and the expired link.

let dashboard: Dashboard;
let recordedPage: RecordedPage;
let recording: Recording;
let startedAt: number;
let chunks: Json[];

const TIMEOUT = 60_000;

beforeAll(async () => {
  dashboard = await startDashboard();
  // A rule on new errors, so the recorded error's notification (in the inbox) links to its replay.
  const headers = dashboard.test.first.headers;
  const channel = await dashboard.test.app.inject({
    method: 'POST',
    url: '/v1/notifications/channels',
    headers,
    payload: { type: 'webhook', name: 'Receiver', url: 'https://hooks.example.com/svc' },
  });
  expect(channel.statusCode, channel.body).toBe(201);
  const rule = await dashboard.test.app.inject({
    method: 'POST',
    url: '/v1/notifications/rules',
    headers,
    payload: {
      name: 'New errors',
      channelIds: [channel.json().channel.id],
      source: { type: 'cluster', events: ['error.new'] },
    },
  });
  expect(rule.statusCode, rule.body).toBe(201);
  recordedPage = await serveRecordedPage(dashboard);
  recording = await recordSession(dashboard.browser, recordedPage);
  await dashboard.test.processingWorker.runUntilIdle();
  chunks = await storedChunks(dashboard, recording.sessionId);
  startedAt = chunks[0].meta.startedAt;
}, 180_000);

afterAll(async () => {
  await recordedPage?.close();
  await dashboard?.close();
});

/**
 * axe-core on a page with the player: no serious or critical violation in our page. The replayed
 * page (the customer's recording, in rrweb's sandboxed iframe, where no script may run, axe's
 * included) is left out: it is what their users saw, not our interface.
 */
function expectPlayerAccessible(page: Page): Promise<void> {
  return expectAccessible(page, { exclude: '.player-screen' });
}

/** The replayed page: rrweb's iframe inside the player. */
const replayed = (page: Page) => page.frameLocator('.player-screen iframe');

/** The player's current time, in ms from the session's start. */
async function currentOffset(page: Page): Promise<number> {
  return Number(await page.getByLabel('Current time').getAttribute('data-offset-ms'));
}

describe('the session page', () => {
  it(
    'replays the recorded page with its controls; typed text stays masked',
    async () => {
      const { page, errors } = await dashboard.open(`/sessions/${recording.sessionId}`, {
        as: dashboard.people.member,
      });
      await page.getByRole('heading', { name: /^Session/ }).waitFor();
      // The first frame: the recorded page, rebuilt from its full snapshot.
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      expect(await replayed(page).locator('#result').textContent()).toBe('');
      // rrweb's iframe runs no script of the recording; the recording's own CSS applies (its
      // <style> element and style attribute: the CSP's style-src allows them, README, Replay).
      expect(await page.locator('.player-screen iframe').getAttribute('sandbox')).toBe('allow-same-origin');
      // (Read from the app's page: no script may run in the sandboxed frame, Playwright's neither.)
      const style = await page.evaluate(() => {
        const frame = document.querySelector<HTMLIFrameElement>('.player-screen iframe');
        const save = frame?.contentDocument?.querySelector('#save');
        if (save === null || save === undefined) return undefined;
        const computed = getComputedStyle(save);
        return { color: computed.color, marginLeft: computed.marginLeft };
      });
      expect(style).toEqual({ color: 'rgb(200, 0, 0)', marginLeft: '7px' });
      // Play and pause: the buttons, and Space outside the controls, as in other players.
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      const paused = await currentOffset(page);
      await page.waitForTimeout(500);
      expect(await currentOffset(page)).toBe(paused);
      await page.getByRole('heading', { name: 'Events' }).click();
      await page.keyboard.press('Space');
      await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
      await page.keyboard.press('Space');
      await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
      // At 4×, on to the end: the click's effect appears in the replayed DOM.
      await page.getByLabel('Speed').selectOption('4');
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect
        .poll(() => replayed(page).locator('#result').textContent(), { timeout: 20_000 })
        .not.toBe('');
      await page.getByRole('button', { name: 'Play', exact: true }).waitFor({ timeout: 20_000 });
      const duration = Number(await page.getByRole('slider', { name: 'Seek' }).getAttribute('max'));
      expect(await currentOffset(page)).toBeGreaterThan(duration - 1500);

      const body = (await replayed(page).locator('body').innerHTML()) as string;
      // The password typed in the page never reaches the replay; text is masked by the SDK.
      expect(body).not.toContain('hunter2');
      expect(body).not.toContain('Private note');
      expect(await replayed(page).locator('#note').textContent()).toMatch(/^\*+( \*+)+$/);
      expect(await replayed(page).locator('#password').inputValue()).not.toContain('hunter2');
      await expectPlayerAccessible(page);
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );

  it(
    'puts the click, error and custom event markers at their times; ?t= opens there; the event list follows and seeks',
    async () => {
      const events = chunks.flatMap((chunk) => chunk.events as Json[]);
      const offsetOf = (found: Json) => found.t - startedAt;
      const custom = events.find((event) => event.type === 'custom' && event.name === 'checkout_failed');
      const error = events.find((event) => event.type === 'error' && event.message === 'Replay test failure');
      const clicks = events.filter(
        (event) =>
          event.type === 'rrweb' &&
          event.data.type === 3 &&
          event.data.data.source === 2 &&
          event.data.data.type === 2,
      );
      expect(custom).toBeDefined();
      expect(error).toBeDefined();
      expect(clicks).toHaveLength(2);
      // The events are where the test acted (measured in the page).
      expect(Math.abs(offsetOf(custom) - (recording.trackAt - startedAt))).toBeLessThan(100);
      expect(Math.abs(offsetOf(error) - (recording.errorAt - startedAt))).toBeLessThan(1000);
      expect(Math.abs(offsetOf(clicks[0]) - (recording.clickAt - startedAt))).toBeLessThan(1000);

      const t = Math.round(offsetOf(error));
      const { page, errors } = await dashboard.open(`/sessions/${recording.sessionId}?t=${t}`, {
        as: dashboard.people.viewer,
      });
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      // ?t= opens at that offset, paused: the click happened before it.
      await expect.poll(() => currentOffset(page)).toBe(t);
      expect(await page.getByLabel('Current time').textContent()).toBe(formatClock(t));
      expect(await replayed(page).locator('#result').textContent()).toMatch(/^\*+ \*+$/);

      const duration = Number(await page.getByRole('slider', { name: 'Seek' }).getAttribute('max'));
      const track = await page.locator('.timeline-track').boundingBox();
      if (track === null) throw new Error('no timeline');
      for (const [kind, event] of [
        ['click', clicks[0]],
        ['error', error],
        ['custom', custom],
      ] as const) {
        const marker = page.locator(`.timeline-marker[data-marker-kind="${kind}"]`).first();
        expect(Number(await marker.getAttribute('data-offset')), kind).toBe(Math.round(offsetOf(event)));
        const box = await marker.boundingBox();
        if (box === null) throw new Error(`no ${kind} marker`);
        const position = (box.x + box.width / 2 - track.x) / track.width;
        expect(Math.abs(position - offsetOf(event) / duration), kind).toBeLessThan(0.01);
      }
      // The save's request to the missing API: a failed request, without its query string.
      const failed = page.locator('.timeline-marker[data-marker-kind="failed_request"]');
      expect(await failed.count()).toBe(1);
      expect(await failed.getAttribute('aria-label')).toMatch(
        new RegExp(
          `^Failed request at .*: POST ${new URL(recordedPage.url).origin}/api/orders → 404 in \\d+ ms$`,
        ),
      );
      expect(
        Math.abs(Number(await failed.getAttribute('data-offset')) - (recording.clickAt - startedAt)),
      ).toBeLessThan(1000);
      // The event list's current row is the error at ?t=.
      const currentRow = page.locator('.event-row[aria-current="true"]');
      expect(await currentRow.getAttribute('data-offset')).toBe(String(t));
      expect(await currentRow.textContent()).toContain('Replay test failure');

      // A click on a row seeks there.
      await page.locator('.event-row', { hasText: 'checkout_failed' }).click();
      await expect.poll(() => currentOffset(page)).toBe(Math.round(offsetOf(custom)));
      expect(await currentRow.textContent()).toContain('checkout_failed');

      // Playing from the start, the current row follows playback to the error.
      await page.locator('.event-row').first().click();
      await page.getByLabel('Speed').selectOption('4');
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect.poll(() => currentRow.textContent(), { timeout: 20_000 }).toContain('Replay test failure');
      // Viewers may not share (sessions:write).
      expect(await page.getByRole('button', { name: 'Share' }).count()).toBe(0);
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );

  it(
    'draws a missing chunk and an SDK gap as not recorded, and playback jumps over them visibly',
    async () => {
      const events: Json[] = chunks.flatMap((chunk) => chunk.events as Json[]);
      const last = events.at(-1).t;
      // An SDK-reported gap at the end: the tab was in the background for 5 s.
      const withGap = [
        ...events,
        { t: last + 5000, type: 'gap', fromT: last, toT: last + 5000, reason: 'hidden' },
      ];
      const perChunk = Math.ceil(withGap.length / 4);
      const sessionId = await ingestSynthetic(dashboard, chunks[0], withGap, {
        perChunk,
        keep: (seq) => seq !== 1,
      });
      await dashboard.test.processingWorker.runUntilIdle();
      const { page, errors } = await dashboard.open(`/sessions/${sessionId}`, {
        as: dashboard.people.member,
      });
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      const notRecorded = page.getByRole('list', { name: 'Not recorded' });
      await expect
        .poll(() => notRecorded.textContent())
        .toContain('Not recorded: chunk 1 of the recording never arrived');
      expect(await notRecorded.textContent()).toContain('Not recorded: the tab was in the background');
      const missing = page.locator(
        '.timeline-gap[title="Not recorded: chunk 1 of the recording never arrived"]',
      );
      expect(await missing.count()).toBe(1);
      const from = Number(await missing.getAttribute('data-gap-from'));
      const to = Number(await missing.getAttribute('data-gap-to'));
      expect(from).toBe(Math.round(events[perChunk - 1].t - events[0].t));
      expect(to).toBe(Math.round(events[2 * perChunk].t - events[0].t));
      expect((await missing.boundingBox())?.width).toBeGreaterThan(0);

      // Playing into the gap jumps to its end and says so (inactivity skipping off, so it is
      // the gap that is skipped).
      await page.getByRole('checkbox', { name: 'Skip inactivity' }).uncheck();
      await page.getByRole('slider', { name: 'Seek' }).fill(String(Math.max(0, from - 300)));
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect
        .poll(() => page.getByRole('status').filter({ hasText: 'Skipped' }).textContent(), {
          timeout: 15_000,
        })
        .toContain('that was not recorded: chunk 1 of the recording never arrived');
      expect(await currentOffset(page)).toBeGreaterThanOrEqual(to);
      await expectPlayerAccessible(page);
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );

  it(
    'skips inactivity when the toggle is on, and not when it is off (?skipInactivity=0)',
    async () => {
      // The same recording with 40 s of inactivity between the typing and the click.
      const events: Json[] = chunks.flatMap((chunk) => chunk.events as Json[]);
      const shifted = events.map((event) =>
        event.t < recording.clickAt ? shiftEvent(event, -40_000) : event,
      );
      const sessionId = await ingestSynthetic(dashboard, chunks[0], shifted);
      const { page, errors } = await dashboard.open(`/sessions/${sessionId}`, {
        as: dashboard.people.member,
      });
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      expect(await page.getByRole('checkbox', { name: 'Skip inactivity' }).isChecked()).toBe(true);
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      // The 40 s are skipped, visibly.
      await expect.poll(() => currentOffset(page), { timeout: 15_000 }).toBeGreaterThan(40_000);
      expect(await page.getByRole('status').filter({ hasText: 'Skipped' }).textContent()).toMatch(
        /^Skipped \d+ s of inactivity$/,
      );
      await page.getByRole('button', { name: 'Pause', exact: true }).click();

      await page.goto(`/sessions/${sessionId}?skipInactivity=0`);
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      const toggle = page.getByRole('checkbox', { name: 'Skip inactivity' });
      expect(await toggle.isChecked()).toBe(false);
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await page.waitForTimeout(4000);
      const offset = await currentOffset(page);
      expect(offset).toBeGreaterThan(2000);
      expect(offset).toBeLessThan(6000);
      // Turned on while playing, it skips the rest.
      await toggle.check();
      await expect.poll(() => currentOffset(page), { timeout: 15_000 }).toBeGreaterThan(40_000);
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );
});

describe('call markers', () => {
  it(
    'marks call events and detector findings on the timeline and in the event list',
    async () => {
      // The protocol's recording fixture with its call fixture moved to start 0.5 s in.
      const [first, second, call] = await Promise.all([
        validChunkFixture('recording-seq-0'),
        validChunkFixture('recording-seq-1'),
        validChunkFixture('call'),
      ]).then((files) => files.map((file) => JSON.parse(file.toString('utf8')) as Json));
      const recorded: Json[] = [...first.events, ...second.events].filter((event) => event.type !== 'gap');
      const shift = recorded[0].t + 500 - Math.min(...call.events.map((event: Json) => event.t));
      const callEvents = call.events.map((event: Json) => ({ ...event, t: event.t + shift }));
      const events = [...recorded, ...callEvents].sort((left, right) => left.t - right.t);
      const sessionId = await ingestSynthetic(dashboard, first, events, { perChunk: 40 });
      await dashboard.test.processingWorker.runUntilIdle();
      const issues = await dashboard.test.app.inject({
        url: `/v1/sessions/${sessionId}/issues?limit=1000`,
        headers: dashboard.test.first.headers,
      });
      const findings = (issues.json().items as Json[]).filter((issue) => issue.kind === 'finding');
      expect(findings.length).toBeGreaterThan(0);

      const { page, errors } = await dashboard.open(`/sessions/${sessionId}`, {
        as: dashboard.people.member,
      });
      const callMarkers = page.locator('.timeline-marker[data-marker-kind="call"]');
      await expect
        .poll(() => callMarkers.count())
        .toBe(callEvents.filter((event: Json) => event.type === 'call.event').length);
      expect(await page.locator('.timeline-marker[data-marker-kind="finding"]').count()).toBe(
        findings.length,
      );
      const created = callEvents.find(
        (event: Json) => event.type === 'call.event' && event.name === 'pc_created',
      );
      const row = page.locator('.event-row', { hasText: 'pc_created' }).first();
      expect(await row.getAttribute('data-offset')).toBe(String(Math.round(created.t - recorded[0].t)));
      for (const finding of findings)
        expect(await page.locator('.event-row', { hasText: finding.name }).count()).toBeGreaterThan(0);
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );
});

describe('links to a replay', () => {
  it(
    'opens the notifications’ links.replay at its time, in whichever project holds the session',
    async () => {
      // The error's notification (inbox, as its webhook) links to the replay at the error.
      const inbox = await dashboard.test.app.inject({
        url: '/v1/inbox?limit=100',
        headers: dashboard.test.first.headers,
      });
      expect(inbox.statusCode).toBe(200);
      const links = (inbox.json().items as Json[])
        .map((item) => item.data?.links?.replay as string | undefined)
        .filter((link): link is string => link?.includes(recording.sessionId) === true);
      expect(links.length).toBeGreaterThan(0);
      const link = new URL(links[0] ?? '');
      expect(link.origin).toBe(dashboard.base);
      const t = Number(link.searchParams.get('t'));
      expect(t).toBeGreaterThan(0);
      const opened = await dashboard.open(`${link.pathname}${link.search}`, { as: dashboard.people.member });
      await replayed(opened.page).locator('#save').waitFor({ timeout: 20_000 });
      await expect.poll(() => currentOffset(opened.page)).toBe(t);
      expect(await opened.page.locator('.event-row[aria-current="true"]').textContent()).toContain(
        'Replay test failure',
      );
      expect(opened.errors).toEqual([]);
      await opened.context.close();

      // A session of another project of the person's: the link names no project, the page finds it.
      const other = await dashboard.test.createProject('Second');
      await dashboard.test.database.database
        .insertInto('organization_members')
        .values({
          organization_id: other.project.organization_id,
          user_id: dashboard.people.member.id,
          role: 'member',
        })
        .execute();
      const events: Json[] = chunks.flatMap((chunk) => chunk.events as Json[]);
      const elsewhere = await ingestSynthetic(dashboard, chunks[0], events, { projectKey: other.projectKey });
      const { page, errors } = await dashboard.open(`/sessions/${elsewhere}?t=1500`, {
        as: dashboard.people.member,
        allow: [`404 /v1/sessions/${elsewhere}`],
      });
      await expect
        .poll(() => new URL(page.url()).searchParams.get('project'), { timeout: 20_000 })
        .toBe(other.project.id);
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      await expect.poll(() => currentOffset(page)).toBe(1500);
      expect(await page.getByRole('combobox', { name: 'Project', exact: true }).inputValue()).toBe(
        other.project.id,
      );
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );
});

describe('a long session', () => {
  it(
    'loads only the chunks around the playhead, and more as it plays',
    async () => {
      // 10 minutes: 120 chunks of 5 s, a checkout every 30 s.
      const sessionId = newSessionId();
      const start = Date.now() - 15 * 60_000;
      for (const chunk of syntheticChunks(sessionId, start, 10 * 60_000)) {
        const answer = await postChunk(
          dashboard.test.app,
          dashboard.test.first.projectKey,
          Buffer.from(JSON.stringify(chunk)),
        );
        expect(answer.statusCode).toBe(200);
      }
      const chunkPath = new RegExp(`/v1/sessions/${sessionId}/chunks/(\\d+)$`);
      const requested = (page: Page) => {
        const seqs: number[] = [];
        page.on('request', (request) => {
          const match = chunkPath.exec(new URL(request.url()).pathname);
          if (match !== null) seqs.push(Number(match[1]));
        });
        return seqs;
      };

      // ?t= at 8 minutes: the chunk there, back to its checkout, and a few ahead.
      const t = 8 * 60_000 + 12_000;
      const opened = await dashboard.open(`/sessions/${sessionId}?t=${t}`, { as: dashboard.people.member });
      const atEight = requested(opened.page);
      await opened.page.locator('.player-screen iframe').waitFor();
      await expect.poll(() => currentOffset(opened.page)).toBe(t);
      await expect.poll(() => replayed(opened.page).locator('body').innerHTML()).not.toBe('');
      const seqAtT = Math.floor(t / CHUNK_MS);
      const checkoutSeq = Math.floor(t / CHECKOUT_MS) * (CHECKOUT_MS / CHUNK_MS);
      expect(Math.min(...atEight)).toBe(checkoutSeq);
      expect(Math.max(...atEight)).toBeLessThanOrEqual(seqAtT + 3);
      expect(atEight.length).toBeLessThanOrEqual(8);
      expect(opened.errors).toEqual([]);
      await opened.context.close();

      // From the start, at 16×: more chunks arrive as it plays, and playback goes on past them.
      const { page, errors } = await dashboard.open(`/sessions/${sessionId}`, {
        as: dashboard.people.member,
      });
      const seqs = requested(page);
      await page.locator('.player-screen iframe').waitFor();
      await expect.poll(() => replayed(page).locator('body').innerHTML()).not.toBe('');
      expect(Math.max(...seqs)).toBeLessThanOrEqual(4);
      await page.getByLabel('Speed').selectOption('16');
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect.poll(() => currentOffset(page), { timeout: 20_000 }).toBeGreaterThan(90_000);
      expect(Math.max(...seqs)).toBeGreaterThan(18);
      expect(Math.max(...seqs)).toBeLessThan(60);
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      expect(errors).toEqual([]);
      await page.context().close();

      // On a slow network playback outruns the chunks: it waits for them, then goes on.
      const slow = await dashboard.open(`/sessions/${sessionId}`, { as: dashboard.people.member });
      await slow.page.locator('.player-screen iframe').waitFor();
      await expect.poll(() => replayed(slow.page).locator('body').innerHTML()).not.toBe('');
      await slow.page.route(chunkPath, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        await route.continue();
      });
      await slow.page.getByLabel('Speed').selectOption('16');
      await slow.page.getByRole('button', { name: 'Play', exact: true }).click();
      await slow.page.getByText('Loading the recording…').waitFor({ timeout: 15_000 });
      await expect.poll(() => currentOffset(slow.page), { timeout: 20_000 }).toBeGreaterThan(60_000);
      expect(await slow.page.getByRole('button', { name: 'Pause', exact: true }).count()).toBe(1);
      expect(slow.errors).toEqual([]);
      await slow.context.close();
    },
    TIMEOUT,
  );
});

/** An event moved by `delta` ms (its rrweb timestamp too). */
function shiftEvent(event: Json, delta: number): Json {
  const moved = { ...event, t: event.t + delta };
  if (event.type === 'rrweb') moved.data = { ...event.data, timestamp: event.data.timestamp + delta };
  return moved;
}

describe('the share view', () => {
  it(
    'creates a link on the session page; it plays signed out; once expired it says so and the API 404s',
    async () => {
      const { page, errors } = await dashboard.open(`/sessions/${recording.sessionId}`, {
        as: dashboard.people.member,
      });
      await replayed(page).locator('#save').waitFor({ timeout: 20_000 });
      // Mid-playback, for the README.
      // At 0.5×, so that the session (about 6 s) does not end before the pause.
      await page.getByLabel('Speed').selectOption('0.5');
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect.poll(() => currentOffset(page), { timeout: 10_000 }).toBeGreaterThan(2200);
      await screenshot(page, 'session');
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      await expect.poll(() => page.getByRole('button', { name: 'Play', exact: true }).count()).toBe(1);

      const pausedAt = await currentOffset(page);
      await page.getByRole('button', { name: 'Share', exact: true }).click();
      await page.getByLabel('Expires after').selectOption({ label: '1 hour' });
      await page.getByRole('button', { name: 'Create link' }).click();
      const plain = await page.getByLabel('Share link').inputValue();
      expect(plain).toMatch(new RegExp(`^${dashboard.base}/share/[0-9a-z]+$`));
      const token = plain.split('/').at(-1) ?? '';
      // The link can open where the player is, and without skipping inactivity.
      await page.getByRole('checkbox', { name: `Start at ${formatClock(pausedAt)}` }).check();
      await page.locator('.share-panel').getByRole('checkbox', { name: 'Skip inactivity' }).uncheck();
      const link = await page.getByLabel('Share link').inputValue();
      expect(link).toBe(`${plain}?t=${pausedAt}&skipInactivity=0`);
      expect(errors).toEqual([]);
      await page.context().close();

      // Signed out: a new context without the cookie.
      const shared = await dashboard.open(new URL(link).pathname + new URL(link).search);
      await shared.page.getByRole('heading', { name: /^Shared session/ }).waitFor();
      await replayed(shared.page).locator('#save').waitFor({ timeout: 20_000 });
      await expect.poll(() => currentOffset(shared.page)).toBe(pausedAt);
      expect(await shared.page.getByRole('checkbox', { name: 'Skip inactivity' }).isChecked()).toBe(false);
      await shared.page.getByRole('button', { name: 'Play', exact: true }).click();
      await expect
        .poll(() => currentOffset(shared.page), { timeout: 10_000 })
        .toBeGreaterThan(pausedAt + 500);
      expect(await replayed(shared.page).locator('body').innerHTML()).not.toContain('hunter2');
      // Read-only: no sharing, no navigation of the app.
      expect(await shared.page.getByRole('button', { name: 'Share' }).count()).toBe(0);
      expect(await shared.page.getByRole('navigation', { name: 'Main' }).count()).toBe(0);
      await expectPlayerAccessible(shared.page);
      expect(shared.errors).toEqual([]);
      await shared.context.close();

      await dashboard.test.database.database
        .updateTable('share_links')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('token_hash', '=', hashSecret(token))
        .execute();
      const api = await fetch(link, { headers: { accept: 'application/json' } });
      expect(api.status).toBe(404);
      const expired = await dashboard.open(new URL(link).pathname, { allow: [`404 /share/${token}`] });
      await expect
        .poll(() => expired.page.getByRole('alert').textContent())
        .toBe('This link has expired or does not exist.');
      expect(await expired.page.locator('.player-screen').count()).toBe(0);
      await expectAccessible(expired.page);
      expect(expired.errors).toEqual([]);
      await expired.context.close();
    },
    TIMEOUT,
  );
});
