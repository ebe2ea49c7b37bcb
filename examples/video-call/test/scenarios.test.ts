import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ReceivedDelivery, startNodeReceiver, type WebhookReceiver } from '@example/webhook-receiver';
import { type RunningServer, startServer } from '@svc/api/src/server.ts';
import { withMigratedStore } from '@svc/api/test/test-database.ts';
import { CHROMIUM, CHROMIUM_ARGS, GRANT_MEDIA } from '@svc-dev/chromium';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallOptions } from '../src/config.ts';
import { type CallPage, startCallPage } from '../src/serve.ts';
import {
  dropPackets,
  droppedPackets,
  restoreNetwork,
  squeeze,
  startTurn,
  type Turn,
  unreachablePort,
} from './network.ts';

// The product on real WebRTC, the way a user meets it: the example call page (browser SDK with
// its collector) in headless Chromium, the real server on its embedded store, coturn on
// 127.0.0.1, loss and bandwidth from nftables and tc, and examples/webhook-receiver verifying
// what the notification rule sends. Each scenario asserts the findings the server computed and
// the signed webhook the receiver verified.

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, and the page's globals
type Json = any;
/** The page's globals inside `page.evaluate` (src/page.ts declares them for the page). */
declare const window: Json;

let directory: string;
let api: RunningServer;
let token: string;
let receiver: WebhookReceiver;
let turn: Turn;
let callPage: CallPage;
let browser: Browser;

async function request(method: string, path: string, body?: unknown): Promise<Json> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = await response.json();
  expect(response.ok, `${method} ${path}: ${JSON.stringify(answer)}`).toBe(true);
  return answer;
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  await restoreNetwork();
  // An empty store at the latest schema (a copy of the run's migrated template): the server's
  // first start creates the project and owner on it, without creating and migrating a store.
  directory = await withMigratedStore(await mkdtemp(join(tmpdir(), 'svc-video-call-')));
  api = await startServer(
    {
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_DATA_DIR: directory,
      SVC_LOG_LEVEL: 'silent',
      SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    },
    { output: () => {} },
  );
  if (api.credentials === null) throw new Error('expected first-start credentials');
  token = api.credentials.apiToken;
  // The receiver learns its secret from the channel, as a team would.
  receiver = await startNodeReceiver({ secrets: 'whsec_not_yet' });
  const { channel, secret } = await request('POST', '/v1/notifications/channels', {
    type: 'webhook',
    name: 'scenarios',
    url: receiver.url,
  });
  receiver.setSecrets(secret);
  await request('POST', '/v1/notifications/rules', {
    name: 'every new problem',
    channelIds: [channel.id],
    source: { type: 'cluster', events: ['cluster.created'] },
  });
  turn = await startTurn();
  callPage = await startCallPage({
    sdk: { projectKey: api.credentials.projectKey, endpoint: api.url, release: '3.1.0', flushIntervalSec: 1 },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, GRANT_MEDIA],
  });
}, 120_000);

afterEach(async () => {
  await restoreNetwork();
});

afterAll(async () => {
  await restoreNetwork();
  await browser?.close();
  await callPage?.close();
  await turn?.stop();
  await receiver?.close();
  await api?.close();
  await rm(directory, { recursive: true, force: true });
});

interface Scenario {
  /** SDK options over the page's (`?options=`). */
  sdk?: Json;
  call?: CallOptions;
  /** What happens during the call (the call is connected, or failed to). */
  during?: (page: Page) => Promise<void>;
  /** Another browser (e.g. one that denies the camera). */
  in?: Browser;
}

interface Outcome {
  sessionId: string;
  connected: boolean | string;
  /** The session's calls as `GET /v1/sessions/{id}/calls` lists them, once processed and closed. */
  calls: Json[];
  /** Each call's detail (`GET /v1/calls/{id}`), in the same order. */
  details: Json[];
  /** Every finding kind of the session's calls. */
  kinds: string[];
}

/** Opens the call page, starts the call, runs `during`, hangs up, and reads what the server made of it. */
async function runCall(scenario: Scenario): Promise<Outcome> {
  const context = await (scenario.in ?? browser).newContext();
  try {
    const page = await context.newPage();
    await page.goto(
      `${callPage.url}?options=${encodeURIComponent(JSON.stringify({ sdk: scenario.sdk ?? {} }))}`,
    );
    await page.waitForFunction(() => window.videoCall !== undefined);
    const sessionId: string = await page.evaluate(() => window.videoCall.sdk.sessionId);
    const connected = await page.evaluate(
      (options) => window.videoCall.start(options).catch((error: Error) => error.name),
      scenario.call ?? {},
    );
    await scenario.during?.(page);
    await page.evaluate(() => window.videoCall.hangUp());
    if (connected === 'NotAllowedError') return { sessionId, connected, calls: [], details: [], kinds: [] };
    const calls = await until(
      async () => {
        const answer = await request('GET', `/v1/sessions/${sessionId}/calls`);
        return answer.items.length === 2 && answer.items.every((call: Json) => call.state === 'closed')
          ? (answer.items as Json[])
          : undefined;
      },
      30_000,
      'the two calls, processed and closed',
    );
    const details = await Promise.all(calls.map((call) => request('GET', `/v1/calls/${call.id}`)));
    const kinds = [
      ...new Set(details.flatMap((detail) => detail.findings.map((finding: Json) => finding.kind))),
    ];
    return { sessionId, connected, calls, details, kinds };
  } finally {
    await context.close();
  }
}

/** The verified `cluster.created` webhook of `kind` that links to the session. */
function webhookFor(kind: string, sessionId: string, type = 'cluster.created'): Promise<ReceivedDelivery> {
  return receiver.waitFor(
    (delivery) =>
      delivery.event.type === type &&
      'cluster' in delivery.event.data &&
      delivery.event.data.cluster.kind === kind &&
      String(delivery.event.data.links.session).endsWith(`/sessions/${sessionId}`),
    30_000,
  );
}

const wait = (page: Page, ms: number) => page.waitForTimeout(ms);
const relayOnly = (): CallOptions => ({
  iceServers: [{ urls: turn.url, username: turn.username, credential: turn.credential }],
  iceTransportPolicy: 'relay',
});

describe('real calls in headless Chromium, end to end', () => {
  let cleanScore = 0;

  it('a clean call: connected, score ≥ 80, setup time recorded, no critical or high finding, no webhook', async () => {
    const outcome = await runCall({ during: (page) => wait(page, 7_000) });
    expect(outcome.connected).toBe(true);
    for (const call of outcome.calls) {
      expect(call).toMatchObject({ connected: true, failedToConnect: false, relayed: false });
      expect(call.setupMs).toBeGreaterThanOrEqual(0);
      expect(call.qualityScore).toBeGreaterThanOrEqual(80);
      expect(call.issues.filter((issue: Json) => ['critical', 'high'].includes(issue.severity))).toEqual([]);
    }
    cleanScore = Math.min(...outcome.calls.map((call) => call.qualityScore));
    // Nothing to notify: no delivery links to this session.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(
      receiver.deliveries.filter((delivery) => JSON.stringify(delivery.event).includes(outcome.sessionId)),
    ).toEqual([]);
  }, 60_000);

  it('camera permission denied (a browser without the fake-ui flag): webrtc_media_permission_denied', async () => {
    const denying = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
    try {
      const outcome = await runCall({ in: denying });
      expect(outcome.connected).toBe('NotAllowedError');
      const issues = await until(
        async () => {
          const answer = await request('GET', `/v1/sessions/${outcome.sessionId}/issues`);
          return answer.items.some((item: Json) => item.name === 'webrtc_media_permission_denied')
            ? answer.items
            : undefined;
        },
        30_000,
        'the permission finding',
      );
      expect(issues).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'finding', name: 'webrtc_media_permission_denied' }),
        ]),
      );
      const webhook = await webhookFor('webrtc_media_permission_denied', outcome.sessionId);
      expect(webhook.event.data.severity).toBe('high');
    } finally {
      await denying.close();
    }
  }, 60_000);

  it("the caller's video replaced by nothing for 8 s: webrtc_one_way_media", async () => {
    const outcome = await runCall({
      // Video only: a direction is one-way when every one of its live tracks stalls.
      call: { audio: false },
      during: async (page) => {
        await wait(page, 2_000);
        await page.evaluate(() => window.videoCall.pauseCaller(8_000, ['video']));
        await wait(page, 1_000);
      },
    });
    expect(outcome.connected).toBe(true);
    expect(outcome.kinds).toContain('webrtc_one_way_media');
    const finding = outcome.details
      .flatMap((detail) => detail.findings)
      .find((each: Json) => each.kind === 'webrtc_one_way_media');
    expect(finding.evidence.sustainedMs).toBeGreaterThanOrEqual(6_000);
    await webhookFor('webrtc_one_way_media', outcome.sessionId);
  }, 60_000);

  it('TURN relay through coturn with iceTransportPolicy relay: webrtc_relay_fallback, the call marked relayed', async () => {
    const outcome = await runCall({ call: relayOnly(), during: (page) => wait(page, 6_000) });
    expect(outcome.connected).toBe(true);
    for (const call of outcome.calls) expect(call).toMatchObject({ connected: true, relayed: true });
    expect(outcome.kinds).toContain('webrtc_relay_fallback');
    const webhook = await webhookFor('webrtc_relay_fallback', outcome.sessionId);
    expect(webhook.event.data.severity).toBe('info');
  }, 60_000);

  it('~10 % packet loss on the TURN port (nftables): webrtc_packet_loss and a lower score', async () => {
    const outcome = await runCall({
      call: relayOnly(),
      during: async (page) => {
        await wait(page, 2_000);
        await dropPackets(turn.port, 10);
        await wait(page, 16_000);
        expect(await droppedPackets()).toBeGreaterThan(0);
      },
    });
    expect(outcome.connected).toBe(true);
    expect(outcome.kinds).toContain('webrtc_packet_loss');
    const loss = outcome.details
      .flatMap((detail) => detail.findings)
      .find((each: Json) => each.kind === 'webrtc_packet_loss');
    expect(loss.evidence.lossPct).toBeGreaterThan(5);
    expect(Math.min(...outcome.calls.map((call) => call.qualityScore))).toBeLessThan(cleanScore);
    await webhookFor('webrtc_packet_loss', outcome.sessionId);
  }, 60_000);

  it('bandwidth squeezed to 300 kbit/s (tc htb on the TURN port): freezes or low resolution, as the stats show', async () => {
    const outcome = await runCall({
      call: relayOnly(),
      during: async (page) => {
        await wait(page, 3_000);
        await squeeze(turn.port, 300);
        await wait(page, 24_000);
      },
    });
    expect(outcome.connected).toBe(true);
    const degraded = outcome.kinds.filter(
      (kind) => kind === 'webrtc_freeze' || kind === 'webrtc_low_resolution',
    );
    expect(degraded.length).toBeGreaterThan(0);
    // What the stats showed agrees with the finding: inbound video froze, or fell under 240 px.
    const inboundVideo = outcome.details.flatMap((detail) =>
      detail.tracks.filter((track: Json) => track.kind === 'video' && track.dir === 'in'),
    );
    const values = (track: Json, metric: string): number[] =>
      (track.series[metric] ?? []).filter((value: unknown) => typeof value === 'number');
    const froze = inboundVideo.some((track: Json) =>
      ['freezes', 'freezeMs', 'maxFreezeMs'].some((metric) =>
        values(track, metric).some((value) => value > 0),
      ),
    );
    const lowRes = inboundVideo.some((track: Json) => values(track, 'h').some((value) => value < 240));
    if (degraded.includes('webrtc_freeze')) expect(froze).toBe(true);
    if (degraded.includes('webrtc_low_resolution')) expect(lowRes).toBe(true);
    await webhookFor(degraded[0] as string, outcome.sessionId);
  }, 90_000);

  it('ICE pointed at an unreachable TURN server, relay only: webrtc_connect_failure and ice_candidate_error', {
    timeout: 90_000,
  }, async () => {
    const port = await unreachablePort();
    const outcome = await runCall({
      call: {
        iceServers: [{ urls: `turn:127.0.0.1:${port}`, username: 'test', credential: 'test' }],
        iceTransportPolicy: 'relay',
      },
      // The page gives up after 20 s, past the detectors' 15 s connect timeout (it sent chunks all
      // along, so the server knows that time passed); Chromium reports the TURN server's silence
      // (701) when its allocation request times out, about 40 s in.
      during: (page) =>
        page
          .waitForFunction(() => window.videoCall.iceErrors().length > 0, undefined, { timeout: 45_000 })
          .then(() => {}),
    });
    expect(outcome.connected).toBe(false);
    for (const call of outcome.calls) expect(call).toMatchObject({ connected: false, failedToConnect: true });
    expect(outcome.kinds).toContain('webrtc_connect_failure');
    const markers = outcome.details.flatMap((detail) => detail.events.map((event: Json) => event.name));
    expect(markers).toContain('ice_candidate_error');
    const error = outcome.details
      .flatMap((detail) => detail.events)
      .find((event: Json) => event.name === 'ice_candidate_error');
    expect(error.errorCode).toBe(701);
    // Never the server's address (PROTOCOL.md §3 privacy).
    expect(JSON.stringify(error)).not.toContain('127.0.0.1');
    await webhookFor('webrtc_connect_failure', outcome.sessionId);
  });

  it('conditional recording with the trigger webrtc:one_way_media: stored only after it, with the pre-roll', async () => {
    // This kind has a cluster already: a threshold rule on its next occurrence notifies.
    const issues = await request('GET', '/v1/issues?kind=webrtc_one_way_media');
    const count = issues.items[0]?.count24h ?? 0;
    const channels = await request('GET', '/v1/notifications/channels');
    await request('POST', '/v1/notifications/rules', {
      name: 'one-way media again',
      channelIds: [channels.items[0].id],
      source: {
        type: 'cluster',
        events: ['cluster.threshold'],
        kinds: ['webrtc_one_way_media'],
        threshold: count + 1,
      },
    });
    let before = 0;
    let sessionId = '';
    const outcome = await runCall({
      sdk: { recording: { mode: 'conditional', triggers: ['webrtc:one_way_media'], checkoutIntervalSec: 2 } },
      call: { audio: false },
      during: async (page) => {
        sessionId = await page.evaluate(() => window.videoCall.sdk.sessionId);
        await wait(page, 4_000);
        await page.evaluate(() => window.videoCall.sdk.flush());
        before = (
          await fetch(`${api.url}/v1/sessions/${sessionId}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).status;
        await page.evaluate(() => window.videoCall.pauseCaller(8_000, ['video']));
        await wait(page, 1_000);
      },
    });
    // Nothing was stored before the trigger.
    expect(before).toBe(404);
    expect(outcome.kinds).toContain('webrtc_one_way_media');
    const session = await request('GET', `/v1/sessions/${outcome.sessionId}`);
    expect(session.recording).toEqual({ mode: 'conditional' });
    const events: Json[] = [];
    for (const chunk of session.chunks)
      events.push(...(await request('GET', `/v1/sessions/${outcome.sessionId}/chunks/${chunk.seq}`)).events);
    const trigger = events.find((event) => event.type === 'trigger');
    expect(trigger).toMatchObject({ name: 'webrtc:one_way_media' });
    // The replay's pre-roll starts at a full snapshot at least one checkout interval before the
    // trigger; the call's lifecycle events from before it were kept.
    const replay = events.filter((event) => event.type === 'rrweb');
    expect(replay[0]).toMatchObject({ data: { type: 4 } });
    expect(replay[0].t).toBeLessThanOrEqual(trigger.t - 2_000);
    expect(events.filter((event) => event.type === 'call.event' && event.name === 'pc_created')).toHaveLength(
      2,
    );
    await webhookFor('webrtc_one_way_media', outcome.sessionId, 'cluster.threshold');
  }, 60_000);
});
