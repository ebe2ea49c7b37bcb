import { CHROMIUM_ARGS } from '@svc-dev/chromium';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHROMIUM, type Harness, type Json, startHarness, until, withOptions } from './harness.ts';

let harness: Harness;
let pageUrl: string;
let context: BrowserContext;
let page: Page;
const read = (path: string) => harness.read(path);
const stored = (sessionId: string) => harness.stored(sessionId);

beforeAll(async () => {
  harness = await startHarness();
  pageUrl = harness.pageUrl;
}, 120_000);

afterAll(async () => {
  await harness?.close();
});

beforeEach(async () => {
  context = await harness.browser.newContext();
  page = await context.newPage();
  await page.goto(pageUrl);
});

afterEach(async () => {
  await context?.close();
});

const trackSteps = (from: number, to: number) =>
  page.evaluate(
    ([start, end]) => {
      for (let index = start as number; index < (end as number); index += 1)
        (window as Json).sdk.track('step', { index });
    },
    [from, to],
  );

const indexes = (events: Json[]) =>
  events.filter((event) => event.type === 'custom').map((event) => event.props.index);

describe('the browser SDK in headless Chromium, against the real server', () => {
  it('delivers a session complete and in order, with its meta', async () => {
    await trackSteps(0, 700);
    await page.evaluate(() => (window as Json).sdk.flush());
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    const { session, events } = await stored(sessionId);
    expect(indexes(events)).toEqual(Array.from({ length: 700 }, (_, index) => index));
    expect(session.chunks.map((chunk: Json) => chunk.seq)).toEqual(
      session.chunks.map((_: Json, index: number) => index),
    );
    expect(session.gaps).toEqual([]);
    expect(session).toMatchObject({
      release: '2.0.0',
      browser: { name: 'Chrome' },
      device: 'desktop',
      url: pageUrl,
    });
  });

  it('loses no chunk when the network is cut mid-session and comes back', async () => {
    await trackSteps(0, 50);
    await page.evaluate(() => (window as Json).sdk.flush());
    await context.setOffline(true);
    await trackSteps(50, 120);
    // Sealed every second while offline: the attempts fail and the chunks wait.
    await page.waitForTimeout(2_500);
    await context.setOffline(false);
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    await until(async () => indexes((await stored(sessionId)).events).length === 120, 30_000);
    const { session, events } = await stored(sessionId);
    expect(indexes(events)).toEqual(Array.from({ length: 120 }, (_, index) => index));
    expect(session.gaps).toEqual([]);
  }, 60_000);

  it('resends the chunks a page left unacknowledged after a reload, in the same session', async () => {
    await trackSteps(0, 10);
    await page.evaluate(() => (window as Json).sdk.flush());
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    // The server becomes unreachable for this page: the next chunks stay in IndexedDB.
    await page.route('**/v1/ingest', (route) => route.abort('connectionrefused'));
    await trackSteps(10, 30);
    await page.waitForTimeout(1_500);
    const waiting = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const open = indexedDB.open('svc-sdk');
          open.onsuccess = () => {
            const all = open.result.transaction('chunks').objectStore('chunks').getAll();
            all.onsuccess = () => resolve(all.result.length);
          };
        }),
    );
    expect(waiting).toBeGreaterThan(0);
    await page.unroute('**/v1/ingest');
    await page.reload();
    expect(await page.evaluate(() => (window as Json).sdk.sessionId)).toBe(sessionId);
    await trackSteps(30, 40);
    await page.evaluate(() => (window as Json).sdk.flush());
    await until(async () => indexes((await stored(sessionId)).events).length === 40, 30_000);
    const { session, events } = await stored(sessionId);
    expect([...indexes(events)].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, index) => index),
    );
    expect(session.chunks.map((chunk: Json) => chunk.seq)).toEqual(
      session.chunks.map((_: Json, index: number) => index),
    );
    expect(session.gaps).toEqual([]);
  }, 60_000);

  it('collects a real two-peer call whose samples and events the server accepts and turns into calls', async () => {
    await page.goto(withOptions(pageUrl, { webrtc: { enabled: true, sampleIntervalSec: 2 } }));
    const sessionId: string = await page.evaluate(() => (window as Json).sdk.sessionId);
    await page.evaluate(async () => {
      // The collector loads on demand: wait until it wraps RTCPeerConnection.
      await (window as Json).sdk.webrtc.list();
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
      const caller = new RTCPeerConnection();
      const callee = new RTCPeerConnection();
      caller.onicecandidate = (event) => event.candidate && callee.addIceCandidate(event.candidate);
      callee.onicecandidate = (event) => event.candidate && caller.addIceCandidate(event.candidate);
      for (const track of stream.getTracks()) caller.addTrack(track, stream);
      await caller.setLocalDescription(await caller.createOffer());
      await callee.setRemoteDescription(caller.localDescription as RTCSessionDescription);
      await callee.setLocalDescription(await callee.createAnswer());
      await caller.setRemoteDescription(callee.localDescription as RTCSessionDescription);
      (window as Json).peers = [caller, callee];
    });
    await page.waitForTimeout(6_500);
    const listed: Json[] = await page.evaluate(() => (window as Json).sdk.webrtc.list());
    expect(listed).toHaveLength(2);
    expect(listed.every((entry) => entry.state === 'connected')).toBe(true);
    expect(Math.max(...listed.map((entry) => entry.fps ?? 0))).toBeGreaterThan(0);
    await page.evaluate(async () => {
      for (const peer of (window as Json).peers) peer.close();
      await (window as Json).sdk.flush();
    });

    const { session, events } = await stored(sessionId);
    expect(session.gaps).toEqual([]);
    const names = events.filter((event) => event.type === 'call.event').map((event) => event.name);
    for (const name of [
      'media_acquired',
      'device_inventory',
      'pc_created',
      'connection_state',
      'candidate_pair_change',
      'track_added',
      'pc_closed',
    ])
      expect(names, name).toContain(name);
    const samples = events.filter((event) => event.type === 'call.sample');
    expect(samples.length).toBeGreaterThanOrEqual(4);
    // No address, port or SDP travels in call data.
    expect(JSON.stringify(events.filter((event) => event.type.startsWith('call.')))).not.toMatch(
      /candidate:|\d+\.\d+\.\d+\.\d+|a=ice-ufrag/,
    );
    // The server processed them into two calls: connected, with a setup time, closed.
    await until(async () => (await read(`/v1/sessions/${sessionId}/calls`)).items.length === 2, 30_000);
    const calls = (await read(`/v1/sessions/${sessionId}/calls`)).items;
    for (const call of calls) {
      expect(call).toMatchObject({
        connected: true,
        failedToConnect: false,
        state: 'closed',
        hasIssue: false,
      });
      expect(call.setupMs).toBeGreaterThanOrEqual(0);
      // A clean loopback call scores high (@svc/quality-score on the device and on the server).
      expect(call.qualityScore).toBeGreaterThanOrEqual(80);
      expect(call.codecs).toEqual(expect.arrayContaining(['audio/opus']));
    }
  }, 60_000);

  it('attaches connections through the module-level webrtc, one of them before init (the call waits for init)', async () => {
    await page.goto(`${withOptions(pageUrl, { webrtc: { enabled: true, sampleIntervalSec: 1 } })}&manual`);
    const result = await page.evaluate(async () => {
      const { webrtc } = (window as Json).SvcSdk;
      // A call set up before the SDK starts: RTCPeerConnection is not instrumented yet.
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
      const caller = new RTCPeerConnection();
      const callee = new RTCPeerConnection();
      caller.onicecandidate = (event) => event.candidate && callee.addIceCandidate(event.candidate);
      callee.onicecandidate = (event) => event.candidate && caller.addIceCandidate(event.candidate);
      for (const track of stream.getTracks()) caller.addTrack(track, stream);
      await caller.setLocalDescription();
      await callee.setRemoteDescription(caller.localDescription as RTCSessionDescription);
      await callee.setLocalDescription();
      await caller.setRemoteDescription(callee.localDescription as RTCSessionDescription);
      // Before init: both calls wait.
      let attachedEarly = false;
      const early = webrtc.attach(caller).then((id: string) => {
        attachedEarly = true;
        return id;
      });
      const listedEarly = webrtc.list();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const waited = !attachedEarly;
      const sdk = (window as Json).initSdk();
      const callerId: string = await early;
      // After init, from code that never saw the client; attaching again changes nothing.
      const calleeId: string = await webrtc.attach(callee);
      const again: string = await webrtc.attach(caller);
      const connected = () =>
        caller.connectionState === 'connected' && callee.connectionState === 'connected';
      while (!connected()) await new Promise((resolve) => setTimeout(resolve, 50));
      // Polled at 1 Hz: the list shows each connection's last second.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const listed = await webrtc.list();
      const fromClient = await sdk.webrtc.list();
      for (const pc of [caller, callee]) pc.close();
      await sdk.flush();
      return {
        waited,
        callerId,
        calleeId,
        again,
        listedEarly: await listedEarly,
        listed,
        fromClient,
        sessionId: sdk.sessionId,
      };
    });
    expect(result.waited).toBe(true);
    expect(result.callerId).toMatch(/^pc_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(result.calleeId).toMatch(/^pc_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(result.calleeId).not.toBe(result.callerId);
    expect(result.again).toBe(result.callerId);
    // The list asked for before init answered once the early attach was done.
    expect(result.listedEarly.map((entry: Json) => entry.pc)).toEqual([result.callerId]);
    expect(result.listed.map((entry: Json) => entry.pc)).toEqual([result.callerId, result.calleeId]);
    for (const entry of result.listed) expect(entry).toMatchObject({ state: 'connected', relayed: false });
    expect(Math.max(...result.listed.map((entry: Json) => entry.fps ?? 0))).toBeGreaterThan(0);
    expect(result.fromClient.map((entry: Json) => entry.pc)).toEqual([result.callerId, result.calleeId]);
    // The server has both connections' events and samples.
    const { events } = await stored(result.sessionId);
    const created = events.filter((event) => event.type === 'call.event' && event.name === 'pc_created');
    expect(created.map((event) => event.pc)).toEqual([result.callerId, result.calleeId]);
    for (const pc of [result.callerId, result.calleeId])
      expect(events.some((event) => event.type === 'call.sample' && event.pc === pc)).toBe(true);
  }, 60_000);

  it("reports the devices the app's own enumerateDevices() sees once permission is granted, and only a change", async () => {
    // No fake-ui flag: devices are hidden (one per kind, no ids) until permission is granted.
    const bare = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
    try {
      const bareContext = await bare.newContext();
      const barePage = await bareContext.newPage();
      await barePage.goto(withOptions(pageUrl, { webrtc: { enabled: true } }));
      const sessionId: string = await barePage.evaluate(() => (window as Json).sdk.sessionId);
      await barePage.evaluate(() => (window as Json).sdk.webrtc.list());
      await bareContext.grantPermissions(['camera', 'microphone']);
      const devices: Array<{ kind: string; label: string }> = await barePage.evaluate(async () => {
        await navigator.mediaDevices.enumerateDevices();
        return (await navigator.mediaDevices.enumerateDevices()).map(({ kind, label }) => ({ kind, label }));
      });
      await barePage.evaluate(() => (window as Json).sdk.flush());
      const { events } = await stored(sessionId);
      const inventories = events.filter(
        (event) => event.type === 'call.event' && event.name === 'device_inventory',
      );
      // The labels as the browser supplies them: none before the grant (empty ones are left out).
      const labels: Record<string, string[]> = {};
      for (const { kind, label } of devices) labels[kind] = [...(labels[kind] ?? []), label];
      expect(devices).toHaveLength(7);
      expect(devices.every((device) => device.label !== '')).toBe(true);
      expect(
        inventories.map(({ audioinput, videoinput, audiooutput, labels }) => ({
          audioinput,
          videoinput,
          audiooutput,
          labels,
        })),
      ).toEqual([
        { audioinput: 1, videoinput: 1, audiooutput: 1, labels: undefined },
        { audioinput: 3, videoinput: 1, audiooutput: 3, labels },
      ]);
    } finally {
      await bare.close();
    }
  }, 60_000);

  it('records a denied camera as media_error permission_denied (no fake-ui flag: a real denial), its on-device finding the trigger of a conditional recording', async () => {
    const strict = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
    try {
      const denied = await (await strict.newContext()).newPage();
      await denied.goto(
        withOptions(pageUrl, {
          webrtc: { enabled: true },
          recording: { mode: 'conditional', triggers: ['webrtc:media_permission_denied'] },
        }),
      );
      const sessionId: string = await denied.evaluate(() => (window as Json).sdk.sessionId);
      await denied.evaluate(async () => {
        await (window as Json).sdk.webrtc.list();
        await (window as Json).sdk.flush();
      });
      // Conditional: nothing stored before the trigger.
      expect((await harness.request('GET', `/v1/sessions/${sessionId}`)).status).toBe(404);
      const error: string = await denied.evaluate(async () => {
        try {
          await navigator.mediaDevices.getUserMedia({ video: true });
          return 'granted';
        } catch (failure) {
          return (failure as Error).name;
        }
      });
      expect(error).toBe('NotAllowedError');
      await denied.evaluate(() => (window as Json).sdk.flush());
      const { events } = await stored(sessionId);
      expect(events.filter((event) => event.type === 'call.event' && event.name === 'media_error')).toEqual([
        expect.objectContaining({ errorName: 'NotAllowedError', class: 'permission_denied', kind: 'video' }),
      ]);
      // The collector's detectors found it on the device: the trigger, after the pre-roll.
      expect(events.filter((event) => event.type === 'trigger')).toEqual([
        expect.objectContaining({ name: 'webrtc:media_permission_denied' }),
      ]);
      // The page load's `nav` (kept while waiting), then the pre-roll from rrweb's Meta.
      expect(events[0]).toMatchObject({ type: 'nav', load: true });
      expect(events.find((event) => event.type === 'rrweb')).toMatchObject({ data: { type: 4 } });
      // The server's detectors agree: a session finding, on the first page of its issues.
      await until(
        async () =>
          (await read(`/v1/sessions/${sessionId}/issues`)).items.some(
            (item: Json) => item.kind === 'finding' && item.name === 'webrtc_media_permission_denied',
          ),
        30_000,
      );
    } finally {
      await strict.close();
    }
  }, 60_000);
});
