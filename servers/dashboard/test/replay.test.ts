import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../api/src/platform/secrets.ts';
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
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
      await page.getByLabel('Speed').selectOption('4');
      // Playing on: the click's effect appears in the replayed DOM.
      await expect
        .poll(() => replayed(page).locator('#result').textContent(), { timeout: 20_000 })
        .not.toBe('');
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      const paused = await currentOffset(page);
      await page.waitForTimeout(500);
      expect(await currentOffset(page)).toBe(paused);

      const body = (await replayed(page).locator('body').innerHTML()) as string;
      // The password typed in the page never reaches the replay; text is masked by the SDK.
      expect(body).not.toContain('hunter2');
      expect(body).not.toContain('Private note');
      expect(await replayed(page).locator('#note').textContent()).toMatch(/^\*+( \*+)+$/);
      expect(await replayed(page).locator('#password').inputValue()).not.toContain('hunter2');
      expect(errors).toEqual([]);
      await page.context().close();
    },
    TIMEOUT,
  );
});
