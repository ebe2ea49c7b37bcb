import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAssetWorker } from '../../api/src/modules/assets/index.ts';
import {
  createDestinationPolicy,
  parseAllowedHosts,
} from '../../api/src/platform/http/destination-policy.ts';
import { newSessionId, postChunk, rewriteChunk, validChunkFixture } from '../../api/test/ingest-helpers.ts';
import { type Dashboard, expectAccessible, startDashboard } from './harness.ts';

// Archived assets in the replay: a session whose page linked the site's stylesheet (from another
// origin, so rrweb could not read it while recording and kept only its URL) is archived, the
// site then changes the stylesheet and deletes it, and the replay still shows the page in the
// original style: the player rewrote the link through the session's asset map.

const TIMEOUT = 60_000;

let dashboard: Dashboard;
let site: Server;
let siteOrigin: string;
let stylesheet: string | undefined;

beforeAll(async () => {
  dashboard = await startDashboard();
  site = createServer((request, response) => {
    if (request.url === '/site.css' && stylesheet !== undefined)
      response.writeHead(200, { 'content-type': 'text/css' }).end(stylesheet);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('gone');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const patched = await dashboard.test.app.inject({
    method: 'PATCH',
    url: `/v1/projects/${dashboard.test.first.project.id}`,
    headers: { ...dashboard.test.first.headers, 'content-type': 'application/json' },
    payload: JSON.stringify({ settings: { allowedOrigins: [siteOrigin] } }),
  });
  expect(patched.statusCode, patched.body).toBe(200);
}, 180_000);

afterAll(async () => {
  await new Promise((resolve) => site?.close(resolve));
  await dashboard?.close();
});

/** A session recorded through ingest: a page whose `<h1 id="title">` the site's stylesheet colours. */
async function recordSession(): Promise<string> {
  const sessionId = newSessionId();
  const fixture = JSON.parse((await validChunkFixture('recording-seq-0')).toString('utf8')) as {
    meta: Record<string, unknown>;
    sentAt: number;
  };
  const t = fixture.sentAt - 2000;
  const node = {
    type: 0,
    id: 1,
    childNodes: [
      { type: 1, name: 'html', publicId: '', systemId: '', id: 2 },
      {
        type: 2,
        tagName: 'html',
        attributes: { lang: 'en' },
        id: 3,
        childNodes: [
          {
            type: 2,
            tagName: 'head',
            attributes: {},
            id: 4,
            childNodes: [
              {
                type: 2,
                tagName: 'title',
                attributes: {},
                id: 5,
                childNodes: [{ type: 3, textContent: 'Shop', id: 6 }],
              },
              {
                type: 2,
                tagName: 'link',
                attributes: { rel: 'stylesheet', href: `${siteOrigin}/site.css` },
                id: 7,
                childNodes: [],
              },
            ],
          },
          {
            type: 2,
            tagName: 'body',
            attributes: {},
            id: 8,
            childNodes: [
              {
                type: 2,
                tagName: 'h1',
                attributes: { id: 'title' },
                id: 9,
                childNodes: [{ type: 3, textContent: 'Shop', id: 10 }],
              },
            ],
          },
        ],
      },
    ],
  };
  const chunk = rewriteChunk(await validChunkFixture('recording-seq-0'), {
    sessionId,
    seq: 0,
    meta: { ...fixture.meta, startedAt: t, url: `${siteOrigin}/shop` },
    events: [
      { t, type: 'nav', url: `${siteOrigin}/shop` },
      {
        t: t + 1,
        type: 'rrweb',
        data: { type: 4, data: { href: `${siteOrigin}/shop`, width: 800, height: 600 }, timestamp: t + 1 },
      },
      {
        t: t + 2,
        type: 'rrweb',
        data: { type: 2, data: { node, initialOffset: { top: 0, left: 0 } }, timestamp: t + 2 },
      },
      {
        t: t + 1500,
        type: 'rrweb',
        data: {
          type: 3,
          data: { source: 1, positions: [{ x: 10, y: 10, id: 9, timeOffset: 0 }] },
          timestamp: t + 1500,
        },
      },
    ],
  });
  const answer = await postChunk(dashboard.test.app, dashboard.test.first.projectKey, chunk);
  expect(answer.statusCode, answer.body).toBe(200);
  return sessionId;
}

/** The computed colour of the replayed `#title` (read from the app's page: no script runs in rrweb's frame). */
async function titleColor(page: Page): Promise<string | undefined> {
  await page.frameLocator('.player-screen iframe').locator('#title').waitFor({ timeout: 20_000 });
  return page.evaluate(() => {
    const frame = document.querySelector<HTMLIFrameElement>('.player-screen iframe');
    const title = frame?.contentDocument?.querySelector('#title');
    return title === null || title === undefined ? undefined : getComputedStyle(title).color;
  });
}

describe('archived assets in the replay', () => {
  it(
    'replays the page in its original style after the site changed and deleted its stylesheet',
    async () => {
      stylesheet = '#title { color: rgb(200, 0, 0); }';
      const sessionId = await recordSession();
      const worker = createAssetWorker({
        ...dashboard.test.processingDependencies,
        policy: createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed),
      });
      await worker.runUntilIdle();
      expect(worker.stats()).toMatchObject({ jobs: 1, failures: 0, fetched: 1 });

      // The site changes its stylesheet: a replay that loaded it now would show blue.
      stylesheet = '#title { color: rgb(0, 0, 255); }';
      const changed = await dashboard.open(`/sessions/${sessionId}`, { as: dashboard.people.member });
      await expect.poll(() => titleColor(changed.page), { timeout: 20_000 }).toBe('rgb(200, 0, 0)');
      await changed.context.close();

      // Then deletes it.
      stylesheet = undefined;
      expect((await fetch(`${siteOrigin}/site.css`)).status).toBe(404);
      const { page, errors } = await dashboard.open(`/sessions/${sessionId}`, {
        as: dashboard.people.member,
      });
      await expect.poll(() => titleColor(page), { timeout: 20_000 }).toBe('rgb(200, 0, 0)');
      // The archived stylesheet was inlined: the replay asked the site for nothing.
      expect(errors).toEqual([]);
      await expectAccessible(page, { exclude: '.player-screen' });

      // The share view replays it the same way, without signing in.
      const share = await dashboard.test.app.inject({
        method: 'POST',
        url: `/v1/sessions/${sessionId}/share`,
        headers: { ...dashboard.test.first.headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ expiresInHours: 1 }),
      });
      expect(share.statusCode, share.body).toBe(201);
      const shared = await dashboard.open(`/share/${share.json().token}`);
      await expect.poll(() => titleColor(shared.page), { timeout: 20_000 }).toBe('rgb(200, 0, 0)');
      expect(shared.errors).toEqual([]);
    },
    TIMEOUT,
  );
});
