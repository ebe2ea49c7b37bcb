import type { BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type Json, startHarness, until, withOptions } from './harness.ts';

// An organization's monthly cap, from the SDK in headless Chromium against the real server: once
// the cap of sessions is reached, a session in progress goes on to the end, a new page starts no
// session (`/v1/config` says `recording.paused`), and an SDK that did not ask (`remoteConfig:
// false`) stops at the first 429 with `X-Service-Quota` instead of retrying.

let harness: Harness;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  harness = await startHarness();
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await harness?.close();
});

/** A new browser context (its own storage and cache) on the test page. */
async function open(url: string): Promise<{ page: Page; ingests: Request[] }> {
  const context = await harness.browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  const ingests: Request[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/v1/ingest') && request.method() === 'POST') ingests.push(request);
  });
  await page.goto(url);
  return { page, ingests };
}

const track = (page: Page, from: number, to: number) =>
  page.evaluate(
    ([start, end]) => {
      for (let index = start as number; index < (end as number); index += 1)
        (window as Json).sdk.track('step', { index });
    },
    [from, to],
  );

/** Signs the owner the first start created in with its one-time link: the cookie and CSRF token. */
async function signInOwner(): Promise<{ cookie: string; csrf: string; orgId: string }> {
  const owner = harness.api.owner;
  if (owner?.signInLink === undefined) throw new Error('expected the owner account');
  const response = await fetch(`${harness.api.url}/auth/magic-link`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: new URL(owner.signInLink).searchParams.get('token') }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { csrfToken: string };
  return {
    cookie: (response.headers.get('set-cookie') ?? '').split(';')[0] as string,
    csrf: body.csrfToken,
    orgId: owner.organization.id,
  };
}

describe('monthly caps in headless Chromium, against the real server', () => {
  it('a session in progress finishes; a new page starts none; a 429 of the cap stops the SDK', async () => {
    const first = await open(harness.pageUrl);
    await track(first.page, 0, 10);
    await first.page.evaluate(() => (window as Json).sdk.flush());
    const inProgress: string = await first.page.evaluate(() => (window as Json).sdk.sessionId);
    expect((await harness.stored(inProgress)).events.length).toBeGreaterThan(0);

    // The owner caps sessions at what is used: the cap is reached.
    const owner = await signInOwner();
    const usage = await fetch(`${harness.api.url}/v1/orgs/${owner.orgId}/usage`, {
      headers: { cookie: owner.cookie },
    });
    const used = ((await usage.json()) as Json).month.usage.sessions.used as number;
    expect(used).toBeGreaterThanOrEqual(1);
    const capped = await fetch(`${harness.api.url}/v1/orgs/${owner.orgId}/billing/caps`, {
      method: 'PATCH',
      headers: { cookie: owner.cookie, 'x-service-csrf': owner.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ sessions: used }),
    });
    expect(capped.status).toBe(200);
    expect(((await capped.json()) as Json).recordingPaused).toBe(true);

    // The session in progress goes on to the end.
    await track(first.page, 10, 20);
    await first.page.evaluate(() => (window as Json).sdk.flush());
    await until(async () => {
      const { events } = await harness.stored(inProgress);
      return events.filter((event: Json) => event.type === 'custom').length === 20;
    }, 20_000);

    // A new page (its own storage): the configuration says paused, no session starts.
    const second = await open(harness.pageUrl);
    await track(second.page, 0, 10);
    await second.page.evaluate(() => (window as Json).sdk.flush());
    await second.page.waitForTimeout(1_500);
    expect(second.ingests).toHaveLength(0);
    const notStarted: string = await second.page.evaluate(() => (window as Json).sdk.sessionId);
    expect((await harness.request('GET', `/v1/sessions/${notStarted}`)).status).toBe(404);

    // An SDK that does not read the configuration: refused once with 429, then it stops.
    const third = await open(withOptions(harness.pageUrl, { remoteConfig: false }));
    await track(third.page, 0, 10);
    await third.page.evaluate(() => (window as Json).sdk.flush());
    await until(() => third.ingests.length >= 1, 10_000);
    const answer = await third.ingests[0]?.response();
    expect(answer?.status()).toBe(429);
    expect(await answer?.headerValue('x-service-quota')).toBe('sessions');
    // No retry, although Retry-After is at most an hour and the transport's backoff starts at 1 s.
    await track(third.page, 10, 20);
    await third.page.waitForTimeout(4_000);
    expect(third.ingests).toHaveLength(1);
    const refused: string = await third.page.evaluate(() => (window as Json).sdk.sessionId);
    expect((await harness.request('GET', `/v1/sessions/${refused}`)).status).toBe(404);

    // The cap raised: a new page records again.
    const raised = await fetch(`${harness.api.url}/v1/orgs/${owner.orgId}/billing/caps`, {
      method: 'PATCH',
      headers: { cookie: owner.cookie, 'x-service-csrf': owner.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ sessions: null }),
    });
    expect(((await raised.json()) as Json).recordingPaused).toBe(false);
    const fourth = await open(harness.pageUrl);
    await track(fourth.page, 0, 5);
    await fourth.page.evaluate(() => (window as Json).sdk.flush());
    const resumed: string = await fourth.page.evaluate(() => (window as Json).sdk.sessionId);
    await until(async () => (await harness.request('GET', `/v1/sessions/${resumed}`)).status === 200, 20_000);
  }, 90_000);
});
