/**
 * Derives a protocol v1 call chunk from the real Chromium `getStats()` dumps in
 * `dev-packages/fixtures/getstats` (see its README): per peer connection, the call events a
 * collector would have emitted and one `call.sample` whose window is `[call start, snapshot]`
 * (the counters start at zero when the call starts, so one snapshot is one honest window).
 *
 * Derivations (the same a collector makes from two polls, the first being all zeros):
 * - call start = snapshot − `opts.durationMs` − `connectMs` (the harness's createOffer);
 *   the `log` entries (state changes, in order) are spread evenly over `connectMs`.
 * - `connection_state` from the `log`; `ice_state` mirrors it (`connecting` ↔ `checking`).
 * - `candidate_pair_change` from `selected` (types and protocol only: addresses are dropped);
 *   `relayed` when either side is a relay candidate; `network` from the local candidate.
 * - track entries: `lossPct` = lost / (received + lost) (outbound: the remote-inbound-rtp's lost /
 *   sent); `jitterMs`; `jitterBufferMs` = jitterBufferDelay / jitterBufferEmittedCount; `freezes`,
 *   `freezeMs` (and `maxFreezeMs` when there was at most one freeze) from freezeCount /
 *   totalFreezesDuration; `frameDropPct` = dropped / decoded; `concealmentPct` = concealedSamples /
 *   totalSamplesReceived; `fps` = frames over the window; `kbps` = bytes over the window;
 *   `qualityLimitation` and `limitedBy...Pct` from qualityLimitationDurations; `rttMs` = the
 *   selected pair's totalRoundTripTime / responsesReceived; `availableOutgoingKbps` from the pair;
 *   `codec` = the codec's mimeType via codecId; `stalled` = no packets moved.
 * - `score` = `scoreSample` of `@svc/quality-score` over the sample, as the SDK sends it.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { scoreSample } from '@svc/quality-score';
import { trackSampleSchema } from '../src/index.ts';

type Stats = Record<string, unknown> & { id: string; type: string; timestamp: number };

/** The part of a dump this builder reads. */
export interface GetStatsDump {
  userAgent: string;
  browserVersion: string;
  tracks: Array<{ kind: string; label: string }>;
  connectMs: number;
  connectionState: string[];
  log: string[];
  selected: Record<
    string,
    { pairId: string; local: { candidateType: string; protocol: string }; remote: { candidateType: string } }
  >;
  opts: { durationMs: number; iceServers: unknown[] };
  stats: Record<string, Stats[]>;
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A deterministic ULID: the 48-bit time of `t`, 80 "random" bits from a hash of `seed`. */
export function deterministicUlid(t: number, seed: string): string {
  let time = '';
  let remaining = t;
  for (let index = 0; index < 10; index += 1) {
    time = crockford.charAt(remaining % 32) + time;
    remaining = Math.floor(remaining / 32);
  }
  const digest = createHash('sha256').update(seed).digest();
  let random = '';
  for (let index = 0; index < 16; index += 1) random += crockford.charAt((digest[index] ?? 0) % 32);
  return time + random;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));
const number = (stats: Stats | undefined, key: string) =>
  typeof stats?.[key] === 'number' ? (stats[key] as number) : undefined;
const text = (stats: Stats | undefined, key: string) =>
  typeof stats?.[key] === 'string' ? (stats[key] as string) : undefined;
const percentage = (part: number | undefined, whole: number | undefined) =>
  part === undefined || whole === undefined || whole <= 0
    ? undefined
    : round(Math.min(100, (part / whole) * 100), 2);

const networkTypes = new Set(['wifi', 'cellular', 'ethernet', 'vpn', 'unknown']);

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

interface PeerConnectionContext {
  name: string;
  dumpName: string;
  stats: Stats[];
  windowMs: number;
}

function byId(context: PeerConnectionContext, id: string | undefined): Stats | undefined {
  return id === undefined ? undefined : context.stats.find((stats) => stats.id === id);
}

function selectedPair(context: PeerConnectionContext): Stats | undefined {
  const transport = context.stats.find((stats) => stats.type === 'transport');
  return byId(context, text(transport, 'selectedCandidatePairId'));
}

function trackId(
  context: PeerConnectionContext,
  trackIdentifier: string | undefined,
  fallback: string,
): string {
  const digest = createHash('sha256')
    .update(`${context.dumpName}/${context.name}/${trackIdentifier ?? fallback}`)
    .digest('hex');
  return `trk_${digest.slice(0, 8)}`;
}

function commonMetrics(context: PeerConnectionContext, rtp: Stats, bytesKey: string) {
  const pair = selectedPair(context);
  const responses = number(pair, 'responsesReceived');
  const totalRoundTrip = number(pair, 'totalRoundTripTime');
  const currentRoundTrip = number(pair, 'currentRoundTripTime');
  const rttMs =
    responses !== undefined && responses > 0 && totalRoundTrip !== undefined
      ? round((totalRoundTrip / responses) * 1000, 1)
      : currentRoundTrip === undefined
        ? undefined
        : round(currentRoundTrip * 1000, 1);
  const bytes = number(rtp, bytesKey);
  return {
    rttMs,
    kbps: bytes === undefined ? undefined : round((bytes * 8) / context.windowMs, 1),
    codec: text(byId(context, text(rtp, 'codecId')), 'mimeType'),
  };
}

function inboundTrack(context: PeerConnectionContext, rtp: Stats): Record<string, unknown> {
  const kind = text(rtp, 'kind');
  const lost = number(rtp, 'packetsLost');
  const received = number(rtp, 'packetsReceived');
  const jitter = number(rtp, 'jitter');
  const bufferDelay = number(rtp, 'jitterBufferDelay');
  const emitted = number(rtp, 'jitterBufferEmittedCount');
  const freezes = number(rtp, 'freezeCount');
  const freezeSeconds = number(rtp, 'totalFreezesDuration');
  const freezeMs = freezeSeconds === undefined ? undefined : Math.round(freezeSeconds * 1000);
  const decoded = number(rtp, 'framesDecoded');
  const { rttMs, kbps, codec } = commonMetrics(context, rtp, 'bytesReceived');
  return withoutUndefined({
    id: trackId(context, text(rtp, 'trackIdentifier'), rtp.id),
    kind,
    dir: 'in',
    lossPct: percentage(lost, lost === undefined || received === undefined ? undefined : lost + received),
    rttMs,
    jitterMs: jitter === undefined ? undefined : round(jitter * 1000, 1),
    jitterBufferMs:
      bufferDelay === undefined || emitted === undefined || emitted <= 0
        ? undefined
        : round((bufferDelay / emitted) * 1000, 1),
    freezes,
    freezeMs,
    maxFreezeMs: freezes === 0 ? 0 : freezes === 1 ? freezeMs : undefined,
    frameDropPct: percentage(number(rtp, 'framesDropped'), decoded),
    concealmentPct: percentage(number(rtp, 'concealedSamples'), number(rtp, 'totalSamplesReceived')),
    audioLevel: kind === 'audio' ? number(rtp, 'audioLevel') : undefined,
    fps: decoded === undefined ? undefined : round(decoded / (context.windowMs / 1000), 1),
    w: number(rtp, 'frameWidth'),
    h: number(rtp, 'frameHeight'),
    kbps,
    availableIncomingKbps: ((value) => (value === undefined ? undefined : round(value / 1000, 1)))(
      number(selectedPair(context), 'availableIncomingBitrate'),
    ),
    nackCount: number(rtp, 'nackCount'),
    pliCount: number(rtp, 'pliCount'),
    keyFrames: number(rtp, 'keyFramesDecoded'),
    codec,
    stalled: received === undefined ? undefined : received === 0,
  });
}

function outboundTrack(context: PeerConnectionContext, rtp: Stats): Record<string, unknown> {
  const kind = text(rtp, 'kind');
  const remote = byId(context, text(rtp, 'remoteId'));
  const source = byId(context, text(rtp, 'mediaSourceId'));
  const sent = number(rtp, 'packetsSent');
  const jitter = number(remote, 'jitter');
  const framesSent = number(rtp, 'framesSent');
  const durations = rtp.qualityLimitationDurations as Record<string, number> | undefined;
  const limitedTotal =
    durations === undefined ? undefined : Object.values(durations).reduce((sum, value) => sum + value, 0);
  const reason = text(rtp, 'qualityLimitationReason');
  const available = number(selectedPair(context), 'availableOutgoingBitrate');
  const { rttMs, kbps, codec } = commonMetrics(context, rtp, 'bytesSent');
  return withoutUndefined({
    id: trackId(context, text(source, 'trackIdentifier'), rtp.id),
    kind,
    dir: 'out',
    lossPct: percentage(number(remote, 'packetsLost'), sent),
    rttMs,
    jitterMs: jitter === undefined ? undefined : round(jitter * 1000, 1),
    audioLevel: kind === 'audio' ? number(source, 'audioLevel') : undefined,
    fps: framesSent === undefined ? undefined : round(framesSent / (context.windowMs / 1000), 1),
    w: number(rtp, 'frameWidth'),
    h: number(rtp, 'frameHeight'),
    kbps,
    availableOutgoingKbps: available === undefined ? undefined : round(available / 1000, 1),
    qualityLimitation:
      reason === undefined ? undefined : ['none', 'cpu', 'bandwidth'].includes(reason) ? reason : 'other',
    limitedByCpuPct: durations === undefined ? undefined : percentage(durations.cpu ?? 0, limitedTotal),
    limitedByBandwidthPct:
      durations === undefined ? undefined : percentage(durations.bandwidth ?? 0, limitedTotal),
    nackCount: number(rtp, 'nackCount'),
    pliCount: number(rtp, 'pliCount'),
    keyFrames: number(rtp, 'keyFramesEncoded'),
    codec,
    stalled: sent === undefined ? undefined : sent === 0,
  });
}

const byKindThenDirection = (left: Record<string, unknown>, right: Record<string, unknown>) =>
  String(left.kind).localeCompare(String(right.kind));

/** The events of one dump (two peer connections), in emission order. */
export function callEventsOfDump(dumpName: string, dump: GetStatsDump): Array<Record<string, unknown>> {
  const peerConnectionNames = Object.keys(dump.stats).sort();
  const snapshotOf = (name: string) =>
    Math.round(Math.max(...(dump.stats[name] ?? []).map((stats) => stats.timestamp)));
  const callStart = Math.min(...peerConnectionNames.map(snapshotOf)) - dump.opts.durationMs - dump.connectMs;
  const events: Array<Record<string, unknown>> = [];
  const video = dump.tracks.find((track) => track.kind === 'video');
  const sender = dump.stats.pc1 ?? [];
  const videoSource = sender.find((stats) => stats.type === 'media-source' && stats.kind === 'video');
  for (const track of dump.tracks) {
    events.push(
      withoutUndefined({
        t: callStart,
        type: 'call.event',
        name: 'media_acquired',
        kind: track.kind,
        w: track === video ? number(videoSource, 'width') : undefined,
        h: track === video ? number(videoSource, 'height') : undefined,
        label: track.label,
      }),
    );
  }
  const pcIds = new Map(
    peerConnectionNames.map((name) => [name, `pc_${deterministicUlid(callStart, `${dumpName}/${name}`)}`]),
  );
  const stateTimes = dump.log.map(
    (_, index) => callStart + Math.round((dump.connectMs * (index + 1)) / dump.log.length),
  );
  for (const name of peerConnectionNames) {
    events.push({
      t: callStart,
      type: 'call.event',
      pc: pcIds.get(name),
      name: 'pc_created',
      state: 'new',
      iceServers: dump.opts.iceServers.length,
      tracked: true,
    });
  }
  for (const [name, stats] of Object.entries(dump.stats).sort(([left], [right]) =>
    left.localeCompare(right),
  )) {
    const pc = pcIds.get(name);
    const context: PeerConnectionContext = { name, dumpName, stats, windowMs: snapshotOf(name) - callStart };
    const outbound = stats.filter((entry) => entry.type === 'outbound-rtp');
    const inbound = stats.filter((entry) => entry.type === 'inbound-rtp');
    const tracks = [
      ...outbound.map((rtp) => outboundTrack(context, rtp)),
      ...inbound.map((rtp) => inboundTrack(context, rtp)),
    ].sort(byKindThenDirection);
    const logOfPc = dump.log
      .map((entry, index) => ({ entry, t: stateTimes[index] ?? callStart }))
      .filter(({ entry }) => entry.startsWith(`${name} `));
    const firstChange = logOfPc[0]?.t ?? callStart;
    for (const track of tracks) {
      events.push({
        t: track.dir === 'out' ? callStart : firstChange,
        type: 'call.event',
        pc,
        name: 'track_added',
        track: track.id,
        kind: track.kind,
        dir: track.dir,
      });
    }
    let previousState = 'new';
    let previousIceState = 'new';
    let previousT = callStart;
    for (const { entry, t } of logOfPc) {
      const state = entry.slice(name.length + 1);
      const iceState = state === 'connecting' ? 'checking' : state;
      events.push({
        t,
        type: 'call.event',
        pc,
        name: 'connection_state',
        state,
        prev: previousState,
        prevMs: t - previousT,
      });
      events.push({
        t,
        type: 'call.event',
        pc,
        name: 'ice_state',
        state: iceState,
        prev: previousIceState,
        prevMs: t - previousT,
      });
      if (state === 'connected') {
        const selected = dump.selected[name];
        const pair = byId(context, selected?.pairId);
        const localNetwork = text(byId(context, text(pair, 'localCandidateId')), 'networkType');
        if (selected !== undefined) {
          events.push(
            withoutUndefined({
              t,
              type: 'call.event',
              pc,
              name: 'candidate_pair_change',
              localType: selected.local.candidateType,
              remoteType: selected.remote.candidateType,
              protocol: selected.local.protocol,
              relayed: selected.local.candidateType === 'relay' || selected.remote.candidateType === 'relay',
              network:
                localNetwork === undefined
                  ? undefined
                  : networkTypes.has(localNetwork)
                    ? localNetwork
                    : 'unknown',
              initial: true,
            }),
          );
        }
      }
      previousState = state;
      previousIceState = iceState;
      previousT = t;
    }
    const snapshot = snapshotOf(name);
    const connect = events.findLast((event) => event.pc === pc && event.name === 'candidate_pair_change');
    const index = peerConnectionNames.indexOf(name);
    // The SDK sends each sample with its score (PROTOCOL.md §2); compute it the same way.
    const score = scoreSample({
      windowMs: context.windowMs,
      tracks: trackSampleSchema.array().parse(tracks),
    });
    events.push({
      t: snapshot,
      type: 'call.sample',
      pc,
      windowMs: context.windowMs,
      conn: withoutUndefined({
        state: dump.connectionState[index] ?? previousState,
        localType: connect?.localType,
        remoteType: connect?.remoteType,
        protocol: connect?.protocol,
        relayed: connect?.relayed,
        network: connect?.network,
      }),
      tracks,
      ...(score === null ? {} : { score }),
    });
    events.push({ t: snapshot, type: 'call.event', pc, name: 'pc_closed', durationMs: snapshot - callStart });
  }
  return events;
}

/** One chunk (seq 0, with meta) holding the calls of every dump as separate peer connections. */
export function buildCallChunk(dumps: ReadonlyArray<[string, GetStatsDump]>): Record<string, unknown> {
  const events = dumps
    .flatMap(([name, dump]) => callEventsOfDump(name, dump))
    .map((event, index) => ({ event, index }))
    .sort((left, right) => (left.event.t as number) - (right.event.t as number) || left.index - right.index)
    .map(({ event }) => event);
  const first = events[0]?.t as number;
  const last = events.at(-1)?.t as number;
  const [, firstDump] = dumps[0] ?? [];
  if (firstDump === undefined) throw new Error('no dumps');
  return {
    v: 1,
    sessionId: `ses_${deterministicUlid(first, 'call-session')}`,
    seq: 0,
    sentAt: last + 250,
    meta: {
      sdk: { name: '@svc/browser-sdk', version: '0.1.0' },
      startedAt: first,
      url: 'https://app.example.com/call',
      userAgent: firstDump.userAgent,
      browser: { name: 'Chrome', version: firstDump.browserVersion },
      os: { name: 'Linux', version: 'x86_64' },
      device: 'desktop',
      viewport: { w: 800, h: 600 },
      environment: 'test',
      recording: { mode: 'always' },
    },
    events,
  };
}

/** The Chromium dumps, sorted by file name. */
export const dumpDirectory = new URL('../../../dev-packages/fixtures/getstats/', import.meta.url);

/** Reads every dump of {@link dumpDirectory}, sorted by file name. */
export function readDumps(): Array<[string, GetStatsDump]> {
  return readdirSync(dumpDirectory)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file): [string, GetStatsDump] => [
      file.replace(/\.json$/, ''),
      JSON.parse(readFileSync(new URL(file, dumpDirectory), 'utf8')) as GetStatsDump,
    ]);
}

/** The text of `fixtures/valid/Chunk/call.json`: the chunk of every dump, 2-space JSON. */
export function renderCallChunk(): string {
  return `${JSON.stringify(buildCallChunk(readDumps()), null, 2)}\n`;
}
