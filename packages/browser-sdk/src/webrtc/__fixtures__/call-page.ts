/**
 * The page the Chromium tests (`collector.chromium.test.ts`) and the poll-cost benchmark
 * (`bench/poll-cost.ts`) load, bundled with the collector by `bench/chromium.ts`: it runs one
 * collector, records what it emits, and sets up loopback calls between peer connections of the
 * page (fake camera and microphone). Everything is on `window.callPage`, for `page.evaluate`.
 */

import type { Finding } from '@svc/detectors';
import { type Collector, type CollectorOptions, createCollector } from '../index.ts';

/** An emitted `call.event` or `call.sample`, as plain data. */
export type Emitted = Record<string, unknown> & { type: string; name?: string; pc?: string };

export interface CallOptions {
  audio?: boolean;
  /** `true` for the fake camera's default (640×480 at 20 fps), or constraints. */
  video?: boolean | MediaTrackConstraints;
  /** Send these tracks rather than a new camera and microphone stream. */
  send?: MediaStreamTrack[];
  /** The callee sends its own audio and video back (the caller's stream). Default false. */
  bothWays?: boolean;
  /** The caller's ICE servers. */
  iceServers?: RTCIceServer[];
  /** Gather every candidate before the offer goes out, so descriptions carry `a=candidate` lines. */
  gatherFirst?: boolean;
  /** Open a data channel with this label from the caller. */
  dataChannel?: string;
}

/** A loopback call: `caller` sends to `callee`, both in this page. */
export interface Call {
  caller: RTCPeerConnection;
  callee: RTCPeerConnection;
  stream: MediaStream;
  /** The caller's data channel (`dataChannel` option) and the callee's end of it, once open. */
  channels: RTCDataChannel[];
  /** What the page itself saw: candidates, ICE errors, raw descriptions, data-channel messages. */
  seen: {
    candidates: string[];
    iceErrors: Array<Record<string, unknown>>;
    descriptions: string[];
    messages: string[];
  };
}

const emitted: Emitted[] = [];
const found: Finding[] = [];
const calls: Call[] = [];
let collector: Collector | undefined;

/** Polling is driven by the tests and the benchmark (`poll()`), so the timer never fires. */
const NEVER_MS = 2 ** 31 - 1;

function start(options: Omit<CollectorOptions, 'emit'> & { instrument?: boolean } = {}): void {
  collector?.stop();
  emitted.length = 0;
  found.length = 0;
  const { instrument = true, ...rest } = options;
  collector = createCollector({
    pollMs: NEVER_MS,
    ...rest,
    emit: (event) => emitted.push(event as unknown as Emitted),
    onFinding: (finding) => found.push(finding),
  });
  if (instrument) collector.instrument();
}

function running(): Collector {
  if (collector === undefined) throw new Error('start() the collector first');
  return collector;
}

function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const look = () => {
      if (check()) resolve();
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${check}`));
      else setTimeout(look, 20);
    };
    look();
  });
}

/** How a renegotiation goes: which end offers (default the caller), and the offer's options. */
export interface NegotiateOptions {
  offerer?: 'caller' | 'callee';
  /** Passed to `createOffer` (e.g. `{ iceRestart: true }`); without, `setLocalDescription()` makes the offer. */
  offer?: RTCOfferOptions;
}

/** Offer and answer between the two ends (trickled candidates, or all gathered first). */
async function negotiate(call: Call, gatherFirst = false, options: NegotiateOptions = {}): Promise<void> {
  const { seen } = call;
  const [offerer, answerer] =
    options.offerer === 'callee' ? [call.callee, call.caller] : [call.caller, call.callee];
  await offerer.setLocalDescription(
    options.offer === undefined ? undefined : await offerer.createOffer(options.offer),
  );
  if (gatherFirst) await until(() => offerer.iceGatheringState === 'complete');
  const offer = offerer.localDescription as RTCSessionDescription;
  seen.descriptions.push(offer.sdp);
  await answerer.setRemoteDescription(offer);
  await answerer.setLocalDescription();
  const answer = answerer.localDescription as RTCSessionDescription;
  seen.descriptions.push(answer.sdp);
  await offerer.setRemoteDescription(answer);
}

/** Starts a call and waits until both ends are connected; returns its index. */
async function call(options: CallOptions = {}): Promise<number> {
  const { audio = true, video = true } = options;
  const stream =
    options.send === undefined
      ? await navigator.mediaDevices.getUserMedia({ audio, video })
      : new MediaStream(options.send);
  const caller = new RTCPeerConnection({ iceServers: options.iceServers ?? [] });
  const callee = new RTCPeerConnection();
  const seen: Call['seen'] = { candidates: [], iceErrors: [], descriptions: [], messages: [] };
  const entry: Call = { caller, callee, stream, channels: [], seen };
  for (const [from, to] of [
    [caller, callee],
    [callee, caller],
  ] as const) {
    from.addEventListener('icecandidate', ({ candidate }) => {
      if (candidate === null) return;
      seen.candidates.push(candidate.candidate, candidate.address ?? '');
      if (!options.gatherFirst || from === callee) void to.addIceCandidate(candidate).catch(() => {});
    });
    from.addEventListener('icecandidateerror', (error) => {
      const { errorCode, errorText, url, address, port } = error as RTCPeerConnectionIceErrorEvent;
      seen.iceErrors.push({ errorCode, errorText, url, address, port });
    });
  }
  for (const track of stream.getTracks()) caller.addTrack(track, stream);
  if (options.bothWays) for (const track of stream.getTracks()) callee.addTrack(track, stream);
  const listen = (channel: RTCDataChannel) => {
    entry.channels.push(channel);
    channel.addEventListener('message', ({ data }) => seen.messages.push(String(data)));
  };
  if (options.dataChannel !== undefined) {
    listen(caller.createDataChannel(options.dataChannel));
    callee.addEventListener('datachannel', ({ channel }) => listen(channel));
  }
  await negotiate(entry, options.gatherFirst);
  await until(() => caller.connectionState === 'connected' && callee.connectionState === 'connected');
  return calls.push(entry) - 1;
}

/** The `pc_` ids the collector gave a call's two ends (from their `pc_created`, in creation order). */
function ids(): string[] {
  return emitted.filter((event) => event.name === 'pc_created').map((event) => event.pc as string);
}

/** Every candidate address of a call's two ends in their stats (local and remote candidates). */
async function statsAddresses(index: number): Promise<string[]> {
  const found: string[] = [];
  const { caller, callee } = calls[index] as Call;
  for (const pc of [caller, callee]) {
    for (const stats of (await pc.getStats()).values()) {
      if (stats.type !== 'local-candidate' && stats.type !== 'remote-candidate') continue;
      for (const field of ['address', 'ip', 'url', 'relatedAddress'])
        if (typeof stats[field] === 'string' && stats[field] !== '') found.push(stats[field]);
    }
  }
  return found;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls every 100 ms until `count` tracks are followed (`track_added`): a stream shows in the
 * stats only once its first packet went out or came in, a moment after `connected`.
 */
async function follow(count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (emitted.filter((event) => event.name === 'track_added').length < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} tracks followed`);
    await running().poll();
    await wait(100);
  }
}

/**
 * One collector poll over the tracked connections, its cost split for the poll-cost benchmark:
 * the wall time of their `getStats()` calls (made together, as the collector makes them), then
 * the collector's own work on those same reports: its poll with `getStats()` already resolved,
 * so what it measures is main-thread work only: reading the reports (Chromium makes each stats
 * object on first access), differencing, track following, detectors, scoring and emitting.
 */
async function measurePoll(pcs: RTCPeerConnection[]): Promise<{ statsMs: number; collectorMs: number }> {
  const started = performance.now();
  const reports = await Promise.all(pcs.map((pc) => pc.getStats()));
  const fetched = performance.now();
  for (const [index, pc] of pcs.entries())
    pc.getStats = () => Promise.resolve(reports[index] as RTCStatsReport);
  await running().poll();
  const processed = performance.now();
  for (const pc of pcs) Reflect.deleteProperty(pc, 'getStats');
  return { statsMs: fetched - started, collectorMs: processed - fetched };
}

const callPage = {
  start,
  call,
  ids,
  statsAddresses,
  /** The calls of the page, by index (their peer connections stay in the page). */
  calls,
  negotiate: (index: number, options?: NegotiateOptions) => negotiate(calls[index] as Call, false, options),
  poll: () => running().poll(),
  follow,
  measurePoll,
  attach: (pc: RTCPeerConnection) => running().attach(pc),
  configure: (configuration: Parameters<Collector['configure']>[0]) => running().configure(configuration),
  /** The findings of the collector's on-device detectors so far (its `onFinding`). */
  findings: (): Finding[] => structuredClone(found),
  /** What the collector emitted so far (copies), optionally only the call events of one name. */
  emitted: (name?: string): Emitted[] =>
    structuredClone(name === undefined ? emitted : emitted.filter((event) => event.name === name)),
  until,
  wait,
};

export type CallPage = typeof callPage;

declare global {
  interface Window {
    callPage: CallPage;
  }
}

window.callPage = callPage;
