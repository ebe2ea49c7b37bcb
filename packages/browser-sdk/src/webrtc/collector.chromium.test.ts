import { createHash } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { callEventSchema } from '@svc/protocol';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Call,
  type CollectorBrowser,
  type Emitted,
  launchCollectorBrowser,
} from '../../bench/chromium.ts';

// The collector in headless Chromium (fake camera and microphone, peers of one page over
// loopback), where what it reports is browser-driven: track lifecycle and the privacy rules of
// PROTOCOL.md §3. The page drives the polls (`collector.poll()`), so no test waits on a timer.

let chromium: CollectorBrowser;
let page: Page;
let requests: string[];

beforeAll(async () => {
  chromium = await launchCollectorBrowser();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
});

beforeEach(async () => {
  ({ page, requests } = await chromium.open());
});

afterEach(async () => {
  await page?.context().close();
});

const named = (events: Emitted[], name: string, pc?: string) =>
  events.filter((event) => event.name === name && (pc === undefined || event.pc === pc));

/** The track_* events of one connection, without `t` and `pc`. */
const trackEvents = (events: Emitted[], pc: string) =>
  events
    .filter((event) => event.pc === pc && /^track_(muted|unmuted|ended)$/.test(event.name ?? ''))
    .map(({ t, pc: _pc, type, ...rest }) => rest);

/** Every call event is valid under `@svc/protocol` (PROTOCOL.md §3), the new fields included. */
function expectValidEvents(events: Emitted[]) {
  for (const event of events.filter((each) => each.type === 'call.event'))
    expect(callEventSchema.safeParse(event).error?.issues, JSON.stringify(event)).toBeUndefined();
}

/** The id `track_added` gave a connection's track of this kind and direction. */
function addedId(events: Emitted[], pc: string, kind: string, dir: string): string {
  const added = named(events, 'track_added', pc).filter((event) => event.kind === kind && event.dir === dir);
  expect(added).toHaveLength(1);
  return added[0]?.track as string;
}

describe('track events in Chromium', () => {
  it("reports a remote track muted and unmuted by its sender's direction, with how long, under its samples' id", async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start({ sampleIntervalSec: 1 });
      const index = await callPage.call();
      const { caller, callee } = callPage.calls[index] as Call;
      // Every track followed, then a poll a second later: a sample goes out.
      await callPage.follow(4);
      await callPage.wait(1_100);
      await callPage.poll();
      const remote = callee.getReceivers().find((receiver) => receiver.track.kind === 'video')?.track;
      const video = caller
        .getTransceivers()
        .find((transceiver) => transceiver.sender.track?.kind === 'video');
      if (remote === undefined || video === undefined) throw new Error('no video');
      const seen: number[] = [];
      remote.addEventListener('mute', () => seen.push(Date.now()));
      remote.addEventListener('unmute', () => seen.push(Date.now()));
      video.direction = 'inactive';
      await callPage.negotiate(index);
      await callPage.until(() => remote.muted);
      await callPage.wait(700);
      video.direction = 'sendrecv';
      await callPage.negotiate(index);
      await callPage.until(() => !remote.muted);
      return { ids: callPage.ids(), seen, events: callPage.emitted() };
    });
    const [, callee] = result.ids as [string, string];
    const id = addedId(result.events, callee, 'video', 'in');
    // The samples name the same track.
    const sampled = result.events
      .filter((event) => event.type === 'call.sample' && event.pc === callee)
      .flatMap((sample) => sample.tracks as Array<{ id: string; kind: string; dir: string }>);
    expect(sampled).toContainEqual(expect.objectContaining({ id, kind: 'video', dir: 'in' }));
    const [mutedAt, unmutedAt] = result.seen as [number, number];
    const events = trackEvents(result.events, callee);
    expect(events).toEqual([
      { name: 'track_muted', track: id, kind: 'video', dir: 'in' },
      { name: 'track_unmuted', track: id, kind: 'video', dir: 'in', freezeMs: expect.any(Number) },
    ]);
    // freezeMs is how long the track was muted, as the page's own listeners saw it (their
    // listeners and the collector's run in the same dispatch; a loaded machine may pause between
    // them, so within 50 ms of the 700 ms or more).
    expect(unmutedAt - mutedAt).toBeGreaterThanOrEqual(700);
    expect(Math.abs((events[1]?.freezeMs as number) - (unmutedAt - mutedAt))).toBeLessThanOrEqual(50);
    expect(trackEvents(result.events, result.ids[0] as string)).toEqual([]);
  });

  it('says nothing when the sender disables its track or sends nothing (Chromium does not mute the remote track)', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start();
      const index = await callPage.call();
      const { caller, callee, stream } = callPage.calls[index] as Call;
      await callPage.follow(4);
      const remote = callee.getReceivers().map((receiver) => receiver.track);
      const local = stream.getVideoTracks()[0] as MediaStreamTrack;
      const sender = caller.getSenders().find((candidate) => candidate.track === local) as RTCRtpSender;
      local.enabled = false;
      await callPage.wait(1_000);
      await callPage.poll();
      const mutedWhenDisabled = remote.map((track) => track.muted);
      local.enabled = true;
      await sender.replaceTrack(null);
      await callPage.wait(1_500);
      await callPage.poll();
      const mutedWhenReplaced = remote.map((track) => track.muted);
      return { mutedWhenDisabled, mutedWhenReplaced, events: callPage.emitted() };
    });
    expect(result.mutedWhenDisabled).toEqual([false, false]);
    expect(result.mutedWhenReplaced).toEqual([false, false]);
    expect(result.events.filter((event) => /^track_(muted|unmuted|ended)$/.test(event.name ?? ''))).toEqual(
      [],
    );
  });

  it('reports a local track muted and unmuted (a forwarded remote track) as dir out, and nothing once it is no longer sent', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start();
      const first = await callPage.call();
      const { caller, callee } = callPage.calls[first] as Call;
      const remote = callee.getReceivers().find((receiver) => receiver.track.kind === 'video')?.track;
      if (remote === undefined) throw new Error('no video');
      // The callee's remote video, sent on by a second call: a local track that mutes.
      const second = await callPage.call({ send: [remote] });
      // Two calls: 4 tracks, and the forwarded video out and in.
      await callPage.follow(6);
      const video = caller
        .getTransceivers()
        .find((transceiver) => transceiver.sender.track?.kind === 'video');
      if (video === undefined) throw new Error('no video');
      const toggle = async (direction: RTCRtpTransceiverDirection) => {
        video.direction = direction;
        await callPage.negotiate(first);
        await callPage.until(() => remote.muted === (direction === 'inactive'));
      };
      await toggle('inactive');
      await callPage.wait(300);
      await toggle('sendrecv');
      // The forwarder stops sending it: its mute is the callee's alone.
      await (callPage.calls[second] as Call).caller.getSenders()[0]?.replaceTrack(null);
      await toggle('inactive');
      return { ids: callPage.ids(), events: callPage.emitted() };
    });
    const [, callee, forwarder] = result.ids as [string, string, string];
    const out = addedId(result.events, forwarder, 'video', 'out');
    const events = trackEvents(result.events, forwarder);
    expect(events).toEqual([
      { name: 'track_muted', track: out, kind: 'video', dir: 'out' },
      { name: 'track_unmuted', track: out, kind: 'video', dir: 'out', freezeMs: expect.any(Number) },
    ]);
    expect(events[1]?.freezeMs).toBeGreaterThanOrEqual(300);
    // The same track, received by the callee.
    expect(trackEvents(result.events, callee).map((event) => [event.name, event.dir])).toEqual([
      ['track_muted', 'in'],
      ['track_unmuted', 'in'],
      ['track_muted', 'in'],
    ]);
  });

  it("reports a local track's stop() and a remote track whose transceiver stopped as ended; a replaced track and a closed connection say nothing", async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start();
      const index = await callPage.call();
      const { caller, callee, stream } = callPage.calls[index] as Call;
      await callPage.follow(4);
      // A camera switch: the sender goes on with a new track, the old one is stopped.
      const camera = stream.getVideoTracks()[0] as MediaStreamTrack;
      const video = caller.getTransceivers().find((transceiver) => transceiver.sender.track === camera);
      if (video === undefined) throw new Error('no video');
      await video.sender.replaceTrack(camera.clone());
      camera.stop();
      await callPage.poll();
      const afterSwitch = callPage.emitted().length;
      // stop() fires no `ended`: the next poll finds it.
      (stream.getAudioTracks()[0] as MediaStreamTrack).stop();
      await callPage.poll();
      await callPage.poll();
      // The callee's video ends with its transceiver (Chromium fires `ended`).
      video.stop();
      await callPage.negotiate(index);
      await callPage.until(() => callee.getReceivers().every((receiver) => receiver.track.kind === 'audio'));
      // Closing ends the callee's audio too; pc_closed says so.
      callee.close();
      await callPage.wait(200);
      return { ids: callPage.ids(), afterSwitch, events: callPage.emitted() };
    });
    const [caller, callee] = result.ids as [string, string];
    expect(trackEvents(result.events.slice(0, result.afterSwitch), caller)).toEqual([]);
    expect(trackEvents(result.events, caller)).toEqual([
      {
        name: 'track_ended',
        track: addedId(result.events, caller, 'audio', 'out'),
        kind: 'audio',
        dir: 'out',
      },
    ]);
    expect(trackEvents(result.events, callee)).toEqual([
      { name: 'track_ended', track: addedId(result.events, callee, 'video', 'in'), kind: 'video', dir: 'in' },
    ]);
    const closed = result.events.findIndex((event) => event.name === 'pc_closed' && event.pc === callee);
    expect(closed).toBeGreaterThan(0);
    expect(trackEvents(result.events.slice(closed), callee)).toEqual([]);
  });
});

/** The ICE ufrag of a description (its first `a=ice-ufrag` line). */
const ufragOf = (sdp: string) => /a=ice-ufrag:(\S+)/.exec(sdp)?.[1];

describe('ICE restarts in Chromium', () => {
  it.each([
    ['restartIce() on the caller', { restart: 'caller' }],
    ['createOffer({ iceRestart: true }) on the caller', { offer: { iceRestart: true } }],
    ['started by the remote peer: the callee restarts and offers, the caller answers', { restart: 'callee' }],
  ] as const)('reports %s once on each end, and no renegotiation without one', async (_, how) => {
    const result = await page.evaluate(async (how) => {
      const { callPage } = window;
      callPage.start();
      const index = await callPage.call();
      const call = callPage.calls[index] as Call;
      const { caller, callee } = call;
      const connected = () =>
        caller.connectionState === 'connected' && callee.connectionState === 'connected';
      const before = callPage.emitted('ice_restart').length;
      // A renegotiation that restarts nothing (a new transceiver).
      caller.addTransceiver('audio', { direction: 'recvonly' });
      await callPage.negotiate(index);
      await callPage.until(connected);
      const afterRenegotiation = callPage.emitted('ice_restart').length;
      const restarter = 'restart' in how ? call[how.restart] : caller;
      if ('restart' in how) restarter.restartIce();
      await callPage.negotiate(index, {
        offerer: 'restart' in how ? how.restart : 'caller',
        ...('offer' in how ? { offer: how.offer } : {}),
      });
      await callPage.until(connected);
      // Media flows again on the new credentials.
      await callPage.follow(4);
      return { ids: callPage.ids(), before, afterRenegotiation, seen: call.seen, events: callPage.emitted() };
    }, how);
    expect(result.before).toBe(0);
    expect(result.afterRenegotiation).toBe(0);
    // Offers and answers: the initial pair, the renegotiation's, then the restart's with new ufrags.
    const ufrags = result.seen.descriptions.map(ufragOf);
    expect(ufrags).toHaveLength(6);
    expect(ufrags[2]).toBe(ufrags[0]);
    expect(ufrags[3]).toBe(ufrags[1]);
    expect(new Set(ufrags.slice(4)).size).toBe(2);
    for (const ufrag of ufrags.slice(4)) expect(ufrags.slice(0, 4)).not.toContain(ufrag);
    const restarts = named(result.events, 'ice_restart');
    expect(restarts.map(({ pc }) => pc).sort()).toEqual([...result.ids].sort());
    for (const restart of restarts) expect(Object.keys(restart).sort()).toEqual(['name', 'pc', 't', 'type']);
    expectAbsent(result.events, ufrags);
    expectValidEvents(result.events);
  });

  it('reports each of two restarts in a row, and nothing for an offer rolled back to the credentials in use', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start();
      const index = await callPage.call();
      const { caller, callee } = callPage.calls[index] as Call;
      const connected = () =>
        caller.connectionState === 'connected' && callee.connectionState === 'connected';
      const counts: number[] = [];
      const count = () => counts.push(callPage.emitted('ice_restart').length);
      caller.restartIce();
      await callPage.negotiate(index);
      await callPage.until(connected);
      count();
      await callPage.negotiate(index, { offerer: 'callee', offer: { iceRestart: true } });
      await callPage.until(connected);
      count();
      // An offer made and rolled back: the restart it began counts, the way back does not.
      await caller.setLocalDescription(await caller.createOffer({ iceRestart: true }));
      count();
      await caller.setLocalDescription({ type: 'rollback' });
      await callPage.negotiate(index);
      count();
      return { ids: callPage.ids(), counts, events: callPage.emitted('ice_restart') };
    });
    const [caller] = result.ids as [string, string];
    expect(result.counts).toEqual([2, 4, 5, 5]);
    expect(result.events.filter((event) => event.pc === caller)).toHaveLength(3);
  });
});

describe('data channels in Chromium', () => {
  it("reports channels created here and the remote peer's, each state change once, never a payload", async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start();
      const index = await callPage.call({ dataChannel: 'chat' });
      const { caller, callee, channels, seen } = callPage.calls[index] as Call;
      // Negotiated on both ends (no datachannel event on either): each end's own creation.
      const sync = [caller, callee].map((pc) => pc.createDataChannel('sync', { negotiated: true, id: 7 }));
      // The callee's end of chat arrives with its datachannel event, which may come after the
      // call connected: list the channels only once both ends of chat are there.
      await callPage.until(() => channels.length === 2);
      const all = [...channels, ...sync];
      await callPage.until(() => all.every((channel) => channel.readyState === 'open'));
      for (const channel of all) channel.send('secret payload 4111 1111 1111 1111');
      await callPage.until(() => seen.messages.length === 2);
      // The caller closes its chat channel (the callee's end follows), the callee its sync one.
      (channels[0] as RTCDataChannel).close();
      (sync[1] as RTCDataChannel).close();
      await callPage.until(() => all.every((channel) => channel.readyState === 'closed'));
      await callPage.wait(200);
      // A channel on a connection that never connects stays `connecting`.
      const lonely = new RTCPeerConnection();
      lonely.createDataChannel('lonely');
      await callPage.wait(200);
      lonely.close();
      return { ids: callPage.ids(), events: callPage.emitted() };
    });
    const [caller, callee, lonely] = result.ids as [string, string, string];
    const states = (pc: string, label: string) =>
      named(result.events, 'data_channel', pc)
        .filter((event) => event.label === label)
        .map((event) => event.state);
    expect(states(caller, 'chat')).toEqual(['connecting', 'open', 'closing', 'closed']);
    expect(states(callee, 'chat')).toEqual(['open', 'closing', 'closed']);
    expect(states(caller, 'sync')).toEqual(['connecting', 'open', 'closing', 'closed']);
    expect(states(callee, 'sync')).toEqual(['connecting', 'open', 'closing', 'closed']);
    // Closing the connection closes its channel; nothing is said after pc_closed.
    expect(states(lonely, 'lonely')).toEqual(['connecting']);
    for (const event of named(result.events, 'data_channel'))
      expect(Object.keys(event).sort()).toEqual(['label', 'name', 'pc', 'state', 't', 'type']);
    expectAbsent(result.events, ['secret payload', '4111']);
    expectValidEvents(result.events);
  }, 20_000);
});

describe('the configuration applied live', () => {
  /** A connection that never connects (an offer nobody answers). */
  const unanswered = () =>
    page.evaluate(async () => {
      const pc = new RTCPeerConnection();
      pc.createDataChannel('waiting');
      await pc.setLocalDescription();
    });

  it('holds what the detectors are fed until configure, then judges it all with the thresholds it brings', async () => {
    await page.evaluate(() => window.callPage.start({ awaitConfiguration: true }));
    await unanswered();
    const held = await page.evaluate(async () => {
      const { callPage } = window;
      await callPage.wait(1_300);
      await callPage.poll();
      const findings = callPage.findings();
      callPage.configure({ thresholds: { connectTimeoutMs: 1_000 } });
      await callPage.poll();
      return { findings, after: callPage.findings(), created: callPage.emitted('pc_created') };
    });
    expect(held.findings).toEqual([]);
    expect(held.after).toEqual([
      expect.objectContaining({
        kind: 'webrtc_connect_failure',
        pc: held.created[0]?.pc,
        t: (held.created[0]?.t as number) + 1_000,
        evidence: expect.objectContaining({ reason: 'timeout' }),
      }),
    ]);
    // Without the project's threshold, the default (15 s) has not passed.
    await page.evaluate(() => window.callPage.start());
    await unanswered();
    const unconfigured = await page.evaluate(async () => {
      const { callPage } = window;
      await callPage.wait(1_300);
      await callPage.poll();
      return callPage.findings();
    });
    expect(unconfigured).toEqual([]);
  }, 20_000);

  it('applies the sample interval and maxPeerConnections from the moment they arrive', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start({ sampleIntervalSec: 5 });
      await callPage.call();
      await callPage.follow(2);
      callPage.configure({ sampleIntervalSec: 1, maxPeerConnections: 3 });
      const from = callPage.emitted().length;
      for (let second = 0; second < 3; second += 1) {
        await callPage.wait(1_000);
        await callPage.poll();
      }
      // A second call: its caller is the third connection, its callee one too many.
      await callPage.call();
      return { from, events: callPage.emitted() };
    });
    const windows = result.events
      .slice(result.from)
      .filter((event) => event.type === 'call.sample')
      .map((event) => event.windowMs as number);
    expect(windows.length).toBeGreaterThanOrEqual(4);
    // 1 s windows, far below the default 5 s (a page's timers run late under load).
    for (const windowMs of windows) expect(windowMs).toBeLessThan(2_500);
    expect(named(result.events, 'pc_created').map((event) => event.tracked)).toEqual([
      true,
      true,
      true,
      false,
    ]);
  }, 20_000);
});

/**
 * A STUN server on 127.0.0.1 that refuses every request with 403 and a reason phrase naming
 * itself, so the page gets `icecandidateerror` events at once (an unreachable server takes 40 s).
 */
async function startRefusingStunServer(): Promise<{ socket: Socket; port: number; reason: string }> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  const reason = `Forbidden by 127.0.0.1:${port} (stun:127.0.0.1:${port})`;
  socket.on('message', (request, from) => {
    const phrase = Buffer.from(reason);
    // ERROR-CODE (0x0009): 2 reserved bytes, class 4, number 3, the phrase padded to 4 bytes.
    const attribute = Buffer.alloc(8 + Math.ceil(phrase.length / 4) * 4);
    attribute.writeUInt16BE(0x0009, 0);
    attribute.writeUInt16BE(4 + phrase.length, 2);
    attribute.writeUInt8(4, 6);
    attribute.writeUInt8(3, 7);
    phrase.copy(attribute, 8);
    // The error response of the request's method, with its magic cookie and transaction id.
    const header = Buffer.alloc(20);
    header.writeUInt16BE((request.readUInt16BE(0) & 0x3eef) | 0x0110, 0);
    header.writeUInt16BE(attribute.length, 2);
    request.copy(header, 4, 4, 20);
    socket.send(Buffer.concat([header, attribute]), from.port, from.address);
  });
  return { socket, port, reason };
}

/** What a test asserts never appears in anything the collector emitted. */
function expectAbsent(events: Emitted[], secrets: Array<string | undefined>) {
  const json = JSON.stringify(events);
  for (const secret of secrets) if (secret) expect(json, secret).not.toContain(secret);
}

const SDP_LINE = /(^|\\r\\n|\\n)(v=0|o=|a=|m=|c=)/;

describe('privacy rules (PROTOCOL.md §3) in Chromium', () => {
  it('ICE candidate addresses: none from the stats, icecandidate or icecandidateerror events reaches an event', async () => {
    const stun = await startRefusingStunServer();
    try {
      const result = await page.evaluate(async (port) => {
        const { callPage } = window;
        callPage.start({ sampleIntervalSec: 1 });
        const index = await callPage.call({ iceServers: [{ urls: `stun:127.0.0.1:${port}` }] });
        await callPage.follow(4);
        await callPage.wait(1_100);
        await callPage.poll();
        const { seen } = callPage.calls[index] as Call;
        await callPage.until(() => seen.iceErrors.length > 0);
        return { seen, stats: await callPage.statsAddresses(index), events: callPage.emitted() };
      }, stun.port);
      // The page saw addresses, an error naming the server, and the stats' candidates.
      expect(result.seen.candidates.join(' ')).toMatch(/\d+\.\d+\.\d+\.\d+/);
      expect(result.stats).toContain('127.0.0.1');
      const [error] = result.seen.iceErrors;
      expect(error).toMatchObject({ url: `stun:127.0.0.1:${stun.port}`, errorText: stun.reason });
      // The collector read them: an error event (its code only: the text is the server's) and
      // samples with the selected path's types.
      const errors = named(result.events, 'ice_candidate_error');
      expect(errors.length).toBeGreaterThan(0);
      for (const event of errors)
        expect(Object.keys(event).sort()).toEqual(['errorCode', 'name', 'pc', 't', 'type']);
      expect(errors[0]?.errorCode).toBe(error?.errorCode);
      const samples = result.events.filter((event) => event.type === 'call.sample');
      expect(samples.map((sample) => (sample.conn as { localType?: string }).localType)).toContain('host');
      expectAbsent(result.events, [
        ...result.seen.candidates,
        ...result.stats,
        ...result.seen.iceErrors.flatMap((seen) => [seen.url, seen.address, seen.errorText] as string[]),
        `:${stun.port}`,
      ]);
      const json = JSON.stringify(result.events);
      expect(json).not.toMatch(/\d+\.\d+\.\d+\.\d+|candidate:|stun:|typ host/);
    } finally {
      stun.socket.close();
    }
  });

  it.each([
    ['off by default (no sdp event, no description text, the redaction module not even fetched)', {}],
    ['never in strict privacy mode, even with captureSdp', { captureSdp: true, strictPrivacy: true }],
  ])('SDP: %s', async (_, options) => {
    const events = await page.evaluate(async (startOptions) => {
      const { callPage } = window;
      callPage.start(startOptions);
      await callPage.call({ gatherFirst: true });
      await callPage.follow(4);
      return callPage.emitted();
    }, options);
    expect(named(events, 'pc_created')).toHaveLength(2);
    expect(named(events, 'sdp')).toEqual([]);
    expect(JSON.stringify(events)).not.toMatch(SDP_LINE);
    expect(requests).not.toContain(`/${chromium.sdpChunk}`);
  });

  it('SDP: with captureSdp, each description applied, redacted (no candidate, c=, ufrag or pwd line, no address)', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start({ captureSdp: true });
      // Candidates gathered first: the offer carries a=candidate lines and a real c= address.
      const index = await callPage.call({ gatherFirst: true });
      await callPage.until(() => callPage.emitted('sdp').length === 4);
      return { ids: callPage.ids(), seen: (callPage.calls[index] as Call).seen, events: callPage.emitted() };
    });
    const [caller, callee] = result.ids as [string, string];
    const [offer, answer] = result.seen.descriptions as [string, string];
    expect(offer).toMatch(/^a=candidate:.* typ host/m);
    expect(offer).toMatch(/^c=IN IP4 \d+\.\d+\.\d+\.\d+/m);
    expect(offer).toMatch(/^m=audio [1-9]\d{3,4} /m);
    const sdps = named(result.events, 'sdp');
    expect(sdps.map(({ pc, side, sdpType }) => [pc, side, sdpType]).sort()).toEqual(
      [
        [caller, 'local', 'offer'],
        [callee, 'remote', 'offer'],
        [callee, 'local', 'answer'],
        [caller, 'remote', 'answer'],
      ].sort(),
    );
    expect(requests).toContain(`/${chromium.sdpChunk}`);
    for (const { sdp } of sdps) {
      expect(sdp).toMatch(/^v=0\r\n/);
      // The default candidate's port goes with its address (the offer had the candidate's).
      expect(sdp).toMatch(/^m=audio 9 UDP\/TLS\/RTP\/SAVPF /m);
      expect(sdp).toMatch(/^m=video 9 UDP\/TLS\/RTP\/SAVPF /m);
      expect(sdp).toMatch(/^a=fingerprint:sha-256 /m);
      expect(sdp).not.toMatch(/^(a=candidate|c=|a=ice-ufrag|a=ice-pwd)/m);
      // The o= line keeps its session id, not its address.
      expect(sdp).toMatch(/^o=- \d+ \d+ IN IP4 \[redacted\]$/m);
      expect(sdp).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
    }
    const sessionIds = [offer, answer].map((sdp) => /^o=- (\d+) /m.exec(sdp)?.[1]);
    for (const id of sessionIds) expect(JSON.stringify(sdps)).toContain(`o=- ${id} `);
    const credentials = [offer, answer].flatMap((sdp) =>
      [...sdp.matchAll(/^a=ice-(?:ufrag|pwd):(.+)$/gm)].map((match) => (match[1] as string).trim()),
    );
    expect(credentials.length).toBeGreaterThanOrEqual(4);
    expectAbsent(result.events, [...credentials, ...result.seen.candidates]);
  });

  it('deviceId: always a salted hash, never the id, another per salt', async () => {
    const acquire = (salt: string) =>
      page.evaluate(async (salt) => {
        const { callPage } = window;
        callPage.start({ salt });
        const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
        await callPage.until(() => callPage.emitted('media_acquired').length === 2);
        const devices = stream.getTracks().map((track) => [track.kind, track.getSettings().deviceId]);
        return { devices: Object.fromEntries(devices) as Record<string, string>, events: callPage.emitted() };
      }, salt);
    const first = await acquire('salt-one');
    const second = await acquire('salt-two');
    expect(second.devices).toEqual(first.devices);
    for (const [salt, run] of [
      ['salt-one', first],
      ['salt-two', second],
    ] as const) {
      const acquired = named(run.events, 'media_acquired');
      for (const kind of ['audio', 'video']) {
        const deviceId = run.devices[kind] as string;
        // Chromium's fake devices: 'default' (audio) and a 64-digit hex id (video).
        expect(deviceId).not.toBe('');
        const hash = createHash('sha256').update(`${salt}:${deviceId}`).digest('hex').slice(0, 16);
        expect(acquired.find((event) => event.kind === kind)?.deviceId).toBe(hash);
      }
      expectAbsent(run.events, Object.values(run.devices));
    }
    const hashes = (run: typeof first) => named(run.events, 'media_acquired').map((event) => event.deviceId);
    for (const hash of hashes(first)) expect(hashes(second)).not.toContain(hash);
  });

  it.each([
    ['recorded as the browser supplies them', {}],
    ['left out in strict privacy mode', { strictPrivacy: true }],
  ])(
    'device labels: %s (media_acquired, device_inventory, device_change), never device ids',
    async (_, options) => {
      const result = await page.evaluate(async (startOptions) => {
        const { callPage } = window;
        callPage.start(startOptions);
        await callPage.until(() => callPage.emitted('device_inventory').length === 1);
        const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
        await callPage.until(() => callPage.emitted('media_acquired').length === 2);
        // After the grant the app lists the devices again (labels now), and a device change.
        const devices = await navigator.mediaDevices.enumerateDevices();
        navigator.mediaDevices.dispatchEvent(new Event('devicechange'));
        await callPage.until(() => callPage.emitted('device_change').length === 1);
        await callPage.wait(100);
        return {
          tracks: stream.getTracks().map((track) => ({ kind: track.kind, label: track.label })),
          devices: devices.map(({ kind, label, deviceId, groupId }) => ({ kind, label, deviceId, groupId })),
          events: callPage.emitted(),
        };
      }, options);
      const strict = 'strictPrivacy' in options;
      // Chromium's fake devices have labels once media is granted.
      expect(result.tracks.every((track) => track.label !== '')).toBe(true);
      const acquired = named(result.events, 'media_acquired');
      expect(
        acquired
          .map(({ kind, label }) => ({ kind: kind as string, label }))
          .sort((a, b) => a.kind.localeCompare(b.kind)),
      ).toEqual(
        result.tracks
          .map(({ kind, label }) => ({ kind, label: strict ? undefined : label }))
          .sort((a, b) => a.kind.localeCompare(b.kind)),
      );
      const labels: Record<string, string[]> = {};
      for (const { kind, label } of result.devices)
        if (label !== '') labels[kind] = [...(labels[kind] ?? []), label];
      expect(Object.keys(labels).length).toBeGreaterThan(0);
      const counts = { audioinput: 0, videoinput: 0, audiooutput: 0 } as Record<string, number>;
      for (const { kind } of result.devices) counts[kind] = (counts[kind] ?? 0) + 1;
      const inventories = [
        ...named(result.events, 'device_inventory'),
        ...named(result.events, 'device_change'),
      ];
      const fieldsOf = ({ t, type, name, pc, ...fields }: Emitted) => fields;
      if (strict) {
        // No labels, so the app's own listing changed nothing: one inventory, then the change.
        expect(inventories.map(fieldsOf)).toEqual([counts, counts]);
        expect(JSON.stringify(result.events)).not.toMatch(/"labels?"/);
      } else {
        // Media is granted from the start here (the labels before a grant: test/browser.test.ts).
        expect(inventories.map(fieldsOf)).toEqual([
          { ...counts, labels },
          { ...counts, labels },
        ]);
      }
      expectAbsent(
        result.events,
        result.devices.flatMap(({ deviceId, groupId }) => [deviceId, groupId]).filter((id) => id.length > 8),
      );
      expectValidEvents(result.events);
    },
  );

  it('device labels: wait for the privacy mode when the configuration is awaited, and follow it', async () => {
    const acquire = (strictPrivacy: boolean) =>
      page.evaluate(async (strictPrivacy) => {
        const { callPage } = window;
        callPage.start({ awaitConfiguration: true });
        await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
        await callPage.wait(300);
        const before = callPage
          .emitted()
          .filter((event) => /^(media_acquired|device_)/.test(event.name ?? ''));
        callPage.configure({ strictPrivacy });
        await callPage.until(() => callPage.emitted('media_acquired').length === 2);
        return { before, events: callPage.emitted() };
      }, strictPrivacy);
    const open = await acquire(false);
    expect(open.before).toEqual([]);
    expect(named(open.events, 'media_acquired').every((event) => typeof event.label === 'string')).toBe(true);
    expect(named(open.events, 'device_inventory')[0]?.labels).toBeDefined();
    const strict = await acquire(true);
    expect(strict.before).toEqual([]);
    expect(named(strict.events, 'media_acquired')).toHaveLength(2);
    expect(JSON.stringify(strict.events)).not.toMatch(/"labels?"/);
  });

  it('data channels: label and state only, never a payload', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      callPage.start();
      const index = await callPage.call({ dataChannel: 'chat' });
      const { channels, seen } = callPage.calls[index] as Call;
      await callPage.until(
        () => channels.length === 2 && channels.every((channel) => channel.readyState === 'open'),
      );
      for (const [number, channel] of channels.entries())
        channel.send(`secret payload ${number} 4111 1111 1111 1111`);
      await callPage.until(() => seen.messages.length === 2);
      await callPage.follow(2);
      return { ids: callPage.ids(), messages: seen.messages, events: callPage.emitted() };
    });
    expect(result.messages.sort()).toEqual([
      'secret payload 0 4111 1111 1111 1111',
      'secret payload 1 4111 1111 1111 1111',
    ]);
    const channels = named(result.events, 'data_channel');
    expect(channels.map(({ pc, label, state }) => [pc, label, state])).toEqual(
      expect.arrayContaining([
        [result.ids[0], 'chat', 'connecting'],
        [result.ids[0], 'chat', 'open'],
        [result.ids[1], 'chat', 'open'],
      ]),
    );
    expect(channels).toHaveLength(3);
    for (const channel of channels)
      expect(Object.keys(channel).sort()).toEqual(['label', 'name', 'pc', 'state', 't', 'type']);
    expectAbsent(result.events, ['secret payload', '4111']);
  });

  it('ICE servers: counted, never recorded (no URL, username or credential)', async () => {
    const events = await page.evaluate(async () => {
      const { callPage } = window;
      const configuration: RTCConfiguration = {
        iceServers: [
          {
            urls: ['stun:198.51.100.7:3478', 'turn:198.51.100.8:3478?transport=udp'],
            username: 'alice-user',
            credential: 's3cret-credential',
          },
          { urls: 'turns:turn.example.test:5349', username: 'bob-user', credential: 'other-credential' },
        ],
      };
      // A connection created before the collector, attached (its configuration read back), and
      // one the instrumented constructor sees.
      const before = new RTCPeerConnection(configuration);
      callPage.start();
      callPage.attach(before);
      const after = new RTCPeerConnection(configuration);
      for (const pc of [before, after]) {
        pc.createDataChannel('gather');
        await pc.setLocalDescription();
      }
      await callPage.wait(500);
      for (const pc of [before, after]) pc.close();
      return callPage.emitted();
    });
    expect(named(events, 'pc_created').map((event) => event.iceServers)).toEqual([2, 2]);
    expectAbsent(events, [
      '198.51.100',
      'example.test',
      'alice-user',
      's3cret-credential',
      'bob-user',
      'other-credential',
      'stun:',
      'turn:',
      'turns:',
    ]);
  });

  it('frames: never read (no canvas, recorder, track processor or audio graph), and events are small plain data', async () => {
    const result = await page.evaluate(async () => {
      const { callPage } = window;
      // Count every way a script could get at frames or samples.
      const used: Record<string, number> = {};
      const count = (name: string) => {
        used[name] = (used[name] ?? 0) + 1;
      };
      const spy = (target: object, property: string, name: string) => {
        const original = Reflect.get(target, property) as (...args: unknown[]) => unknown;
        Reflect.set(target, property, function (this: unknown, ...args: unknown[]) {
          count(name);
          return original.apply(this, args);
        });
      };
      spy(HTMLCanvasElement.prototype, 'getContext', 'canvas.getContext');
      spy(HTMLCanvasElement.prototype, 'captureStream', 'canvas.captureStream');
      spy(OffscreenCanvas.prototype, 'getContext', 'OffscreenCanvas.getContext');
      spy(AudioContext.prototype, 'createMediaStreamSource', 'createMediaStreamSource');
      spy(AudioContext.prototype, 'createMediaStreamTrackSource', 'createMediaStreamTrackSource');
      spy(MediaStreamTrack.prototype, 'clone', 'track.clone');
      spy(window, 'createImageBitmap', 'createImageBitmap');
      const media = Object.getOwnPropertyDescriptor(HTMLMediaElement.prototype, 'srcObject');
      Object.defineProperty(HTMLMediaElement.prototype, 'srcObject', {
        ...media,
        set(value) {
          count('srcObject');
          media?.set?.call(this, value);
        },
      });
      for (const name of [
        'MediaRecorder',
        'ImageCapture',
        'MediaStreamTrackProcessor',
        'VideoFrame',
        'AudioData',
      ]) {
        const Original = Reflect.get(window, name) as (new (...args: unknown[]) => object) | undefined;
        if (Original !== undefined)
          Reflect.set(
            window,
            name,
            class extends Original {
              constructor(...args: unknown[]) {
                count(name);
                super(...args);
              }
            },
          );
      }
      callPage.start({ sampleIntervalSec: 1 });
      await callPage.call({ bothWays: true, dataChannel: 'chat' });
      await callPage.follow(8);
      await callPage.wait(1_100);
      await callPage.poll();
      const events = callPage.emitted();
      // Plain data: what JSON gives back is the same (no buffer, typed array, blob or frame).
      const plain = events.every(
        (event) => JSON.stringify(JSON.parse(JSON.stringify(event))) === JSON.stringify(event),
      );
      const strings: string[] = [];
      const walk = (value: unknown): void => {
        if (typeof value === 'string') strings.push(value);
        else if (typeof value === 'object' && value !== null)
          for (const item of Object.values(value)) walk(item);
      };
      walk(events);
      const buffers = events.some((event) =>
        Object.values(event).some(
          (value) => ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Blob,
        ),
      );
      return { used, plain, buffers, longest: Math.max(...strings.map((text) => text.length)), events };
    });
    expect(result.used).toEqual({});
    expect(result.plain).toBe(true);
    expect(result.buffers).toBe(false);
    // The longest string is an id or a codec, not a frame (one 320×240 frame is ~100 KB of base64).
    expect(result.longest).toBeLessThanOrEqual(64);
    expect(result.events.filter((event) => event.type === 'call.sample').length).toBeGreaterThan(0);
  });
});
