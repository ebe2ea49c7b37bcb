import { CHROMIUM, CHROMIUM_ARGS, GRANT_MEDIA } from '@svc-dev/chromium';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCallPage } from '../../../examples/video-call/src/serve.ts';
import { postChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { formatNumber, formatRate } from '../src/calls/statistics.ts';
import type { CallDetail, CallOverview, CallSummary } from '../src/calls/types.ts';
import { type Dashboard, expectAccessible, screenshot, startDashboard } from './harness.ts';

// The calls pages on real calls: a two-peer video call in headless Chromium with the real browser
// SDK (examples/video-call's page, fake camera) whose caller sends no video for 8 s, so the server
// finds one-way media; and the recorded Chromium calls the protocol ships (eight peer connections,
// six of them relayed through TURN), so the list has calls that differ.

/** The page's globals inside `page.evaluate` (examples/video-call/src/page.ts). */
// biome-ignore lint/suspicious/noExplicitAny: the call page's globals
declare const window: any;

let dashboard: Dashboard;
let sessionId: string;
/** The real call's two peer connections, as the API lists them. */
let realCalls: CallSummary[];

async function apiGet<T>(path: string): Promise<T> {
  const answer = await dashboard.test.app.inject({
    method: 'GET',
    url: path,
    headers: dashboard.test.first.headers,
  });
  expect(answer.statusCode, `${path}: ${answer.body}`).toBe(200);
  return answer.json() as T;
}

/** Runs the one-way video call (video only: a direction is one-way when all its tracks stall). */
async function runRealCall(): Promise<string> {
  const callPage = await startCallPage({
    sdk: { projectKey: dashboard.test.first.projectKey, endpoint: dashboard.base, flushIntervalSec: 1 },
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, GRANT_MEDIA] });
  try {
    const page = await browser.newPage();
    await page.goto(callPage.url);
    await page.waitForFunction(() => window.videoCall !== undefined);
    const id: string = await page.evaluate(() => window.videoCall.sdk.sessionId);
    expect(await page.evaluate(() => window.videoCall.start({ audio: false }))).toBe(true);
    await page.waitForTimeout(2_000);
    await page.evaluate(() => window.videoCall.pauseCaller(8_000, ['video']));
    await page.waitForTimeout(1_000);
    await page.evaluate(() => window.videoCall.hangUp());
    return id;
  } finally {
    await browser.close();
    await callPage.close();
  }
}

beforeAll(async () => {
  dashboard = await startDashboard();
  const recorded = await postChunk(
    dashboard.test.app,
    dashboard.test.first.projectKey,
    await validChunkFixture('call'),
  );
  expect(recorded.statusCode).toBe(200);
  sessionId = await runRealCall();
  // The SDK's last chunk (pc_closed) may still be on its way: process until both calls are closed.
  const deadline = Date.now() + 20_000;
  for (;;) {
    await dashboard.test.processingWorker.runUntilIdle();
    const { items } = await apiGet<{ items: CallSummary[] }>(`/v1/sessions/${sessionId}/calls`);
    if (items.length === 2 && items.every((call) => call.state === 'closed')) {
      realCalls = items;
      break;
    }
    if (Date.now() > deadline) throw new Error(`the real call's calls: ${JSON.stringify(items)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
});

/** The ids of the rows the list shows, in order. */
function shownCallIds(page: Page): Promise<string[]> {
  return page
    .locator('tr[data-call-id]')
    .evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.callId as string));
}

/** Numbers of a series (its `null`s and non-numbers left out). */
const numbersOf = (values: unknown[] | undefined) =>
  (values ?? []).filter((value): value is number => typeof value === 'number');

/** The charts a track must have: a metric the track reported → the chart's caption. */
const CHART_OF_METRIC: Record<string, string> = {
  lossPct: 'Packet loss (%)',
  rttMs: 'Round-trip time (ms)',
  jitterMs: 'Jitter (ms)',
  jitterBufferMs: 'Jitter buffer delay (ms)',
  fps: 'Frame rate (fps)',
  h: 'Resolution (px)',
  kbps: 'Bitrate (kbps)',
  concealmentPct: 'Concealment (%)',
  freezeMs: 'Freezes (ms)',
  limitedByBandwidthPct: 'Quality limitation (% of window)',
};

describe('the calls pages', () => {
  it('a real Chromium call: charts per track, the one-way media finding with its evidence, event markers, the replay link', async () => {
    const call = realCalls.find((candidate) =>
      candidate.issues.some((issue) => issue.kind === 'webrtc_one_way_media'),
    );
    expect(call, 'a call with the one-way media finding').toBeDefined();
    const detail = await apiGet<CallDetail>(`/v1/calls/${call?.id}`);
    const session = await apiGet<{ startedAt: string }>(`/v1/sessions/${sessionId}`);

    const { page, errors } = await dashboard.open(`/calls/${detail.id}`, { as: dashboard.people.viewer });
    await page.getByRole('heading', { level: 1, name: /^Call of / }).waitFor();

    // Every track has a section with a chart per metric it reported: a figure whose caption names
    // the metric and sums it up, around a canvas uPlot drew on.
    expect(detail.tracks.length).toBeGreaterThan(0);
    for (const track of detail.tracks) {
      const section = page.locator(`section[data-track-id="${track.id}"]`);
      await section.waitFor();
      const expected = Object.entries(CHART_OF_METRIC)
        .filter(([metric]) => numbersOf(track.series[metric]).length > 0)
        .map(([, caption]) => caption);
      expect(expected.length).toBeGreaterThan(3);
      const captions = await section.locator('figure > figcaption .metric-title').allTextContents();
      expect(captions).toEqual(expect.arrayContaining(expected));
      const fps = numbersOf(track.series.fps);
      const fpsFigure = section.getByRole('figure', { name: /^Frame rate \(fps\)/ });
      await expect
        .poll(() => fpsFigure.locator('figcaption').textContent())
        .toContain(`min ${formatNumber(Math.min(...fps))}, median`);
      expect(await fpsFigure.locator('figcaption').textContent()).toContain(
        `max ${formatNumber(Math.max(...fps))} over ${track.series.t?.length} samples`,
      );
      // The canvas exists, has a size and something drawn on it.
      const painted = await fpsFigure.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
        const context = canvas.getContext('2d');
        if (context === null || canvas.width === 0) return 0;
        const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
        let count = 0;
        for (let index = 3; index < pixels.length; index += 4) if ((pixels[index] as number) > 0) count++;
        return count;
      });
      expect(painted).toBeGreaterThan(100);
    }

    // The finding, with its evidence and its time range.
    const finding = detail.findings.find((each) => each.kind === 'webrtc_one_way_media');
    expect(finding?.evidence.sustainedMs).toBeGreaterThanOrEqual(6_000);
    const item = page
      .getByRole('listitem')
      .filter({ has: page.getByRole('heading', { name: /^One-way media/ }) });
    await expect.poll(() => item.textContent()).toContain('webrtc_one_way_media');
    const text = (await item.textContent()) ?? '';
    expect(text).toContain('critical');
    for (const [name, value] of Object.entries(finding?.evidence ?? {}))
      expect(text, name).toContain(String(value));
    expect(text).toMatch(/From \d+:\d\d to \d+:\d\d into the call/);

    // The event markers: the legend counts each kind from the call's events, and every chart drew
    // one vertical line per marker event.
    const pathChanges = detail.events.filter((event) => event.name === 'candidate_pair_change').length;
    const connectionChanges = detail.events.filter((event) => event.name === 'connection_state').length;
    expect(pathChanges).toBeGreaterThan(0);
    const legend = page.getByRole('list', { name: 'Event markers' });
    expect(await legend.textContent()).toContain(`Path change (candidate pair): ${pathChanges}`);
    expect(await legend.textContent()).toContain(`Connection state change: ${connectionChanges}`);
    const drawn = await page
      .locator('[data-markers-drawn]')
      .evaluateAll((charts) => charts.map((chart) => Number((chart as HTMLElement).dataset.markersDrawn)));
    expect(drawn.length).toBeGreaterThan(detail.tracks.length);
    expect(new Set(drawn)).toEqual(new Set([pathChanges + connectionChanges]));
    expect(await page.locator('table.events tbody tr').count()).toBe(detail.events.length);

    // The replay at the call's start.
    const offset = Date.parse(detail.startedAt) - Date.parse(session.startedAt);
    const replay = page.getByRole('link', { name: /Watch the replay/ });
    const href = new URL((await replay.getAttribute('href')) ?? '', dashboard.base);
    expect(href.pathname).toBe(`/sessions/${sessionId}`);
    expect(href.searchParams.get('t')).toBe(String(offset));
    expect(href.searchParams.get('project')).toBeNull();

    await expectAccessible(page);
    await page
      .getByRole('heading', { name: 'Metrics over time' })
      .evaluate((heading) => heading.scrollIntoView());
    await screenshot(page, 'call');
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('the list: a filter set in the form goes to the URL, the list shows only matching calls, and pages load on demand', async () => {
    const all = await apiGet<{ items: CallSummary[] }>('/v1/calls?limit=200');
    expect(all.items).toHaveLength(10);
    const relayed = await apiGet<{ items: CallSummary[] }>('/v1/calls?relayed=true&limit=200');
    expect(relayed.items.length).toBeGreaterThan(0);
    expect(relayed.items.length).toBeLessThan(all.items.length);

    const { page, errors } = await dashboard.open('/sessions', { as: dashboard.people.viewer });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calls' }).click();
    await page.getByRole('heading', { name: 'Calls', level: 1 }).waitFor();
    await expect.poll(() => shownCallIds(page)).toEqual(all.items.map((call) => call.id));
    await expectAccessible(page);

    await page.getByLabel('Relayed (TURN)').selectOption({ label: 'Yes' });
    await page.waitForURL(/[?&]relayed=true/);
    await expect.poll(() => shownCallIds(page)).toEqual(relayed.items.map((call) => call.id));
    await screenshot(page, 'calls');
    // A reload keeps the filter, in the URL and in the form.
    await page.reload();
    await expect.poll(() => shownCallIds(page)).toEqual(relayed.items.map((call) => call.id));
    expect(await page.getByLabel('Relayed (TURN)').inputValue()).toBe('true');

    // A number filter applies on "Apply filters", with the others kept.
    const best = Math.max(...relayed.items.map((call) => call.qualityScore ?? 0));
    await page.getByLabel('Quality at least').fill(String(best));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`minQuality=${best}`));
    const url = new URL(page.url());
    expect(url.searchParams.get('relayed')).toBe('true');
    const good = await apiGet<{ items: CallSummary[] }>(
      `/v1/calls?relayed=true&minQuality=${best}&limit=200`,
    );
    expect(good.items.length).toBeGreaterThan(0);
    for (const call of good.items) expect(call).toMatchObject({ relayed: true });
    for (const call of good.items) expect(call.qualityScore).toBeGreaterThanOrEqual(best);
    await expect.poll(() => shownCallIds(page)).toEqual(good.items.map((call) => call.id));

    // The real call's calls are direct: "No" shows exactly them and the unrelayed recorded ones.
    await page.getByLabel('Relayed (TURN)').selectOption({ label: 'No' });
    await page.waitForURL(/[?&]relayed=false/);
    const direct = await apiGet<{ items: CallSummary[] }>(
      `/v1/calls?relayed=false&minQuality=${best}&limit=200`,
    );
    await expect.poll(() => shownCallIds(page)).toEqual(direct.items.map((call) => call.id));

    // The start time: from a minute before the real call (the recorded calls are older), in the
    // browser's time zone as the field shows it; the URL holds it as ISO 8601.
    await page.getByRole('link', { name: 'Clear filters' }).click();
    await expect.poll(() => shownCallIds(page)).toHaveLength(all.items.length);
    const minute = Math.floor(Date.parse(realCalls[0]?.startedAt ?? '') / 60_000) * 60_000 - 60_000;
    const local = await page.evaluate((at) => {
      const date = new Date(at - new Date(at).getTimezoneOffset() * 60_000);
      return date.toISOString().slice(0, 16);
    }, minute);
    await page.getByLabel('Started from').fill(local);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]from=/);
    expect(new URL(page.url()).searchParams.get('from')).toBe(new Date(minute).toISOString());
    const recent = await apiGet<{ items: CallSummary[] }>(
      `/v1/calls?from=${new Date(minute).toISOString()}&limit=200`,
    );
    expect(recent.items.map((call) => call.id).sort()).toEqual(realCalls.map((call) => call.id).sort());
    await expect.poll(() => shownCallIds(page)).toEqual(recent.items.map((call) => call.id));
    // A row opens its call.
    await page.locator(`tr[data-call-id="${recent.items[0]?.id}"]`).getByRole('link').click();
    await page.waitForURL(new RegExp(`/calls/${recent.items[0]?.id}$`));
    await page.getByRole('heading', { level: 1, name: /^Call of / }).waitFor();

    // Pages: four at a time, then the next pages by nextCursor until there is none.
    await page.goto('/calls?limit=4');
    await expect.poll(() => shownCallIds(page)).toHaveLength(4);
    const more = page.getByRole('button', { name: 'Load more calls' });
    await more.click();
    await expect.poll(() => shownCallIds(page)).toHaveLength(8);
    await more.click();
    await expect.poll(() => shownCallIds(page)).toEqual(all.items.map((call) => call.id));
    expect(await more.count()).toBe(0);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('the overview: the numbers the API computes for the chosen time range', async () => {
    const { page, errors } = await dashboard.open('/calls/overview', { as: dashboard.people.viewer });
    await page.getByRole('heading', { name: 'Calls overview' }).waitFor();
    const picker = page.getByLabel('Time range');
    expect(await picker.inputValue()).toBe('7d');
    await page.locator('[data-stat="calls"]').waitFor();

    // "Last 24 hours": the page asks for its own `from`; the same question to the API answers the same.
    const asked = page.waitForResponse((response) => response.url().includes('/v1/calls/overview'));
    await picker.selectOption({ label: 'Last 24 hours' });
    await page.waitForURL(/[?&]range=24h/);
    const request = new URL((await asked).url());
    expect(request.searchParams.get('from')).not.toBeNull();
    const lastDay = await apiGet<CallOverview>(`/v1/calls/overview${request.search}`);
    await expect.poll(() => page.locator('[data-stat="calls"]').textContent()).toBe(String(lastDay.calls));
    expect(lastDay.calls).toBeGreaterThanOrEqual(realCalls.length);

    await picker.selectOption({ label: 'All time' });
    await page.waitForURL(/[?&]range=all/);
    const overview = await apiGet<CallOverview>('/v1/calls/overview');
    expect(overview.calls).toBe(10);
    await expect.poll(() => page.locator('[data-stat="calls"]').textContent()).toBe(String(overview.calls));
    expect(await page.locator('[data-stat="relay-rate"]').textContent()).toBe(formatRate(overview.relayRate));
    expect(await page.locator('[data-stat="connect-failure-rate"]').textContent()).toBe(
      formatRate(overview.connectFailureRate),
    );
    expect(await page.locator('[data-stat="setup-p50"]').textContent()).toBe(
      `${formatNumber(overview.setupMs.p50 ?? Number.NaN)} ms`,
    );
    const buckets = await page
      .locator('table[data-table="quality"] tbody tr td:first-of-type')
      .allTextContents();
    expect(buckets).toEqual(overview.qualityDistribution.map((bucket) => String(bucket.calls)));
    for (const [name, rows] of Object.entries(overview.breakdowns)) {
      const shown = await page
        .locator(`table[data-breakdown="${name}"] tbody tr`)
        .evaluateAll((rows) =>
          rows.map((row) => [...row.children].slice(0, 3).map((cell) => cell.textContent)),
        );
      expect(shown, name).toEqual(
        rows.map((row) => [row.key ?? 'not reported', String(row.calls), String(row.failedToConnect)]),
      );
    }
    // A reload keeps the range.
    await page.reload();
    await expect.poll(() => page.getByLabel('Time range').inputValue()).toBe('all');
    await expectAccessible(page);
    await screenshot(page, 'calls-overview');
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);
});
