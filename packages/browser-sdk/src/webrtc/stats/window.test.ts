import { type CallSample, callSampleSchema } from '@svc/protocol';
import { scoreSample } from '@svc/quality-score';
import { describe, expect, it } from 'vitest';
import {
  advance,
  DUMPS,
  type Dump,
  dumpNamed,
  findStats,
  type PeerConnectionName,
  snapshotOf,
  strip,
} from './__fixtures__/dumps.ts';
import { type StatsSnapshot, type StatsWindow, statsWindow, toSnapshot, type WindowTrack } from './index.ts';

// Second snapshots are built with `advance` (see __fixtures__/dumps.ts): a deep copy of a real
// snapshot taken `elapsedMs` later, with counters advanced by the deltas given here, so every
// expected value below is computed by hand from those deltas.

const PEER_CONNECTIONS: readonly PeerConnectionName[] = ['pc1', 'pc2'];

/** The metrics a first poll may report: gauges, never a counter difference. */
const GAUGES = new Set([
  'key',
  'kind',
  'dir',
  'rttMs',
  'jitterMs',
  'audioLevel',
  'fps',
  'w',
  'h',
  'availableOutgoingKbps',
  'availableIncomingKbps',
  'qualityLimitation',
  'codec',
]);

function trackOf(window: StatsWindow, kind: 'audio' | 'video', dir: 'in' | 'out'): WindowTrack {
  const found = window.tracks.filter((track) => track.kind === kind && track.dir === dir);
  expect(found).toHaveLength(1);
  return found[0] as WindowTrack;
}

/** What the caller does with a window: `conn.state` from the peer connection, ids for keys, the score. */
function toSample(window: StatsWindow, state: CallSample['conn']['state'] = 'connected'): CallSample {
  const sample: CallSample = {
    t: 1_795_303_195_000,
    type: 'call.sample',
    pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
    windowMs: window.windowMs,
    conn: { state, ...window.conn },
    tracks: window.tracks.map(({ key, ...metrics }, index) => ({ id: `trk_${index}`, ...metrics })),
  };
  const score = scoreSample(sample);
  return score === null ? sample : { ...sample, score };
}

describe('statsWindow: the first poll of each recorded dump', () => {
  const cases = DUMPS.flatMap((dump) => PEER_CONNECTIONS.map((pc) => [dump.name, pc, dump] as const));

  it.each(cases)('%s %s: the selected path, gauges only', (name, pc, dump: Dump) => {
    const window = statsWindow(undefined, snapshotOf(dump, pc));
    const { local, remote } = dump.selected[pc];
    const turn = name.includes('turn');
    expect(local.candidateType).toBe(turn ? 'relay' : 'host');
    expect(window.windowMs).toBe(0);
    expect(window.conn).toEqual({
      localType: local.candidateType,
      remoteType: remote.candidateType,
      protocol: 'udp',
      relayed: turn,
      // The selected local candidate's networkType in the dump.
      network: turn ? 'ethernet' : 'unknown',
    });
    expect(window.tracks.map((track) => `${track.kind}:${track.dir}`).sort()).toEqual(
      pc === 'pc1' ? ['audio:out', 'video:out'] : ['audio:in', 'video:in'],
    );
    for (const track of window.tracks) {
      expect(Object.keys(track).filter((metric) => !GAUGES.has(metric))).toEqual([]);
      expect(track.codec).toBe(track.kind === 'audio' ? 'audio/opus' : 'video/VP8');
      expect(track.rttMs).toBeTypeOf('number');
    }
  });

  it('reads every gauge of the TURN dump exactly', () => {
    const dump = dumpNamed('chromium156-turn-relay');
    const sender = statsWindow(undefined, snapshotOf(dump, 'pc1'));
    // Selected pair: currentRoundTripTime 0.002 s, availableOutgoingBitrate 3586857 bit/s.
    // remote-inbound-rtp jitter 0.002875 s (audio), 0.002377 s (video); media-source audioLevel 0.24998.
    expect(sender.tracks).toEqual([
      {
        key: 'audio:out:1718519449',
        kind: 'audio',
        dir: 'out',
        rttMs: 2,
        jitterMs: 2.9,
        audioLevel: 0.25,
        availableOutgoingKbps: 3586.9,
        codec: 'audio/opus',
      },
      {
        key: 'video:out:1320146287',
        kind: 'video',
        dir: 'out',
        rttMs: 2,
        jitterMs: 2.4,
        fps: 20,
        w: 640,
        h: 480,
        availableOutgoingKbps: 3586.9,
        qualityLimitation: 'none',
        codec: 'video/VP8',
      },
    ]);
    const receiver = statsWindow(undefined, snapshotOf(dump, 'pc2'));
    // The receiver's pair reports no availableIncomingBitrate (Chromium never does): omitted.
    expect(receiver.tracks).toEqual([
      {
        key: 'audio:in:1718519449',
        kind: 'audio',
        dir: 'in',
        rttMs: 3,
        jitterMs: 1,
        audioLevel: 0,
        codec: 'audio/opus',
      },
      {
        key: 'video:in:1320146287',
        kind: 'video',
        dir: 'in',
        rttMs: 3,
        jitterMs: 1,
        fps: 20,
        w: 640,
        h: 480,
        codec: 'video/VP8',
      },
    ]);
  });
});

describe('statsWindow: counter metrics over a window', () => {
  const dump = dumpNamed('chromium156-turn-relay');

  it('computes the receiver metrics from the counter differences', () => {
    const first = snapshotOf(dump, 'pc2');
    const video = findStats(first, 'inbound-rtp', 'video');
    const audio = findStats(first, 'inbound-rtp', 'audio');
    const second = advance(first, 5000, {
      add: {
        [video.id]: {
          packetsReceived: 500,
          packetsLost: 5, // 5 / (500 + 5) = 0.990 %
          bytesReceived: 625_000, // 625000 × 8 / 5000 ms = 1000 kbit/s
          jitterBufferDelay: 1.5,
          jitterBufferEmittedCount: 150, // 1.5 s / 150 = 10 ms
          framesReceived: 150,
          framesDecoded: 148,
          framesDropped: 3, // 3 / 150 = 2 %
          freezeCount: 2,
          totalFreezesDuration: 0.75, // 750 ms in 2 freezes: the longest is unknown
          nackCount: 4,
          pliCount: 1,
          keyFramesDecoded: 1,
        },
        [audio.id]: {
          packetsReceived: 250,
          bytesReceived: 20_000, // 32 kbit/s
          jitterBufferDelay: 9600,
          jitterBufferEmittedCount: 240_000, // 9600 s / 240000 samples = 40 ms
          concealedSamples: 2400,
          totalSamplesReceived: 240_000, // 1 %
        },
      },
      set: { [video.id]: { framesPerSecond: 29.6, jitter: 0.0125 }, [audio.id]: { audioLevel: 0.1234 } },
    });
    const window = statsWindow(first, second);
    expect(window.windowMs).toBe(5000);
    expect(window.tracks).toEqual([
      {
        key: 'audio:in:1718519449',
        kind: 'audio',
        dir: 'in',
        lossPct: 0,
        rttMs: 3,
        jitterMs: 1,
        jitterBufferMs: 40,
        concealmentPct: 1,
        audioLevel: 0.123,
        kbps: 32,
        codec: 'audio/opus',
        stalled: false,
      },
      {
        key: 'video:in:1320146287',
        kind: 'video',
        dir: 'in',
        lossPct: 0.99,
        rttMs: 3,
        jitterMs: 12.5,
        jitterBufferMs: 10,
        freezes: 2,
        freezeMs: 750,
        frameDropPct: 2,
        fps: 29.6,
        w: 640,
        h: 480,
        kbps: 1000,
        nackCount: 4,
        pliCount: 1,
        keyFrames: 1,
        codec: 'video/VP8',
        stalled: false,
      },
    ]);
  });

  it('computes the sender metrics, loss from a fresh remote report only', () => {
    const first = snapshotOf(dump, 'pc1');
    const video = findStats(first, 'outbound-rtp', 'video');
    const audio = findStats(first, 'outbound-rtp', 'audio');
    const remoteVideo = findStats(first, 'remote-inbound-rtp', 'video');
    const remoteAudio = findStats(first, 'remote-inbound-rtp', 'audio');
    const pair = 'CP03fwZxYB_kuBbmSIi'; // the transport's selectedCandidatePairId
    const second = advance(first, 5000, {
      add: {
        [video.id]: {
          packetsSent: 520,
          bytesSent: 750_000, // 1200 kbit/s
          framesSent: 150, // 30 fps (framesPerSecond deleted below)
          framesEncoded: 150,
          nackCount: 6,
          pliCount: 2,
          keyFramesEncoded: 1,
          qualityLimitationDurations: { cpu: 1, bandwidth: 2, none: 2 }, // 20 % cpu, 40 % bandwidth
        },
        [audio.id]: { packetsSent: 250, bytesSent: 20_000 },
        [remoteVideo.id]: { packetsLost: 20 },
      },
      set: {
        [video.id]: { framesPerSecond: undefined, qualityLimitationReason: 'bandwidth' },
        [remoteVideo.id]: { fractionLost: 10 / 256 }, // 3.90625 %
        // No new receiver report for audio in the window: its fractionLost is stale.
        [remoteAudio.id]: { timestamp: remoteAudio.timestamp, fractionLost: 0.5 },
        [pair]: { availableOutgoingBitrate: 2_500_000, currentRoundTripTime: 0.0456 },
      },
    });
    const window = statsWindow(first, second);
    expect(window.tracks).toEqual([
      {
        key: 'audio:out:1718519449',
        kind: 'audio',
        dir: 'out',
        rttMs: 45.6,
        jitterMs: 2.9,
        audioLevel: 0.25,
        kbps: 32,
        availableOutgoingKbps: 2500,
        nackCount: 0,
        codec: 'audio/opus',
        stalled: false,
      },
      {
        key: 'video:out:1320146287',
        kind: 'video',
        dir: 'out',
        lossPct: 3.91,
        rttMs: 45.6,
        jitterMs: 2.4,
        fps: 30,
        w: 640,
        h: 480,
        kbps: 1200,
        availableOutgoingKbps: 2500,
        qualityLimitation: 'bandwidth',
        limitedByCpuPct: 20,
        limitedByBandwidthPct: 40,
        nackCount: 6,
        pliCount: 2,
        keyFrames: 1,
        codec: 'video/VP8',
        stalled: false,
      },
    ]);
  });

  it('takes the sender loss from the remote counters where the browser reports packetsReceived', () => {
    const first = snapshotOf(dump, 'pc1');
    const remoteVideo = findStats(first, 'remote-inbound-rtp', 'video');
    const before = advance(first, 0, { set: { [remoteVideo.id]: { packetsReceived: 1000 } } });
    const after = advance(before, 1000, {
      add: { [remoteVideo.id]: { packetsReceived: 190, packetsLost: 10 } },
    });
    expect(trackOf(statsWindow(before, after), 'video', 'out').lossPct).toBe(5);
  });

  it('omits a metric whose counter went backwards (a reset) and every counter of a new object', () => {
    const first = snapshotOf(dump, 'pc2');
    const video = findStats(first, 'inbound-rtp', 'video');
    const reset = advance(first, 1000, {
      add: { [video.id]: { packetsReceived: -400, bytesReceived: -1000, packetsLost: 3, framesDecoded: 30 } },
    });
    const track = trackOf(statsWindow(first, reset), 'video', 'in');
    expect(track).not.toHaveProperty('lossPct');
    expect(track).not.toHaveProperty('kbps');
    expect(track).not.toHaveProperty('stalled');
    expect(track.freezes).toBe(0); // freezeCount did not move: still a value

    // The stream is new in the second snapshot (absent from the first): a first poll of its counters.
    const withoutVideo = toSnapshot(
      [...first.stats.values()].filter((stats) => stats.id !== video.id),
      first.takenAt,
    );
    const fresh = trackOf(statsWindow(withoutVideo, advance(first, 1000)), 'video', 'in');
    expect(Object.keys(fresh).filter((metric) => !GAUGES.has(metric))).toEqual([]);

    // Same id, new ssrc (renegotiation): also new.
    const renegotiated = advance(first, 1000, {
      add: { [video.id]: { packetsReceived: 10 } },
      set: { [video.id]: { ssrc: 7 } },
    });
    const moved = trackOf(statsWindow(first, renegotiated), 'video', 'in');
    expect(moved.key).toBe('video:in:7');
    expect(Object.keys(moved).filter((metric) => !GAUGES.has(metric))).toEqual([]);
  });

  it('makes a first poll of a previous snapshot that is not older', () => {
    const first = snapshotOf(dump, 'pc2');
    expect(statsWindow(first, first).windowMs).toBe(0);
    expect(statsWindow(advance(first, 10), first)).toEqual(statsWindow(undefined, first));
  });
});

describe('statsWindow: fields the browser does not report are omitted', () => {
  it('omits each metric whose field is stripped, and falls back where PROTOCOL allows', () => {
    const dump = dumpNamed('chromium156-turn-relay');
    let first = snapshotOf(dump, 'pc2');
    const video = findStats(first, 'inbound-rtp', 'video');
    const audio = findStats(first, 'inbound-rtp', 'audio');
    const missing = [
      'jitter',
      'frameWidth',
      'frameHeight',
      'framesPerSecond',
      'codecId',
      'jitterBufferEmittedCount',
      'packetsLost',
      'framesDropped',
      'nackCount',
    ];
    first = strip(first, video.id, missing);
    first = strip(first, audio.id, ['audioLevel', 'concealedSamples', 'bytesReceived']);
    first = strip(first, 'CP2UqSo18A_A0Fi8fgp', ['currentRoundTripTime']);
    first = strip(first, 'I2UqSo18A', ['networkType']);
    const second = advance(first, 2000, {
      add: {
        [video.id]: { packetsReceived: 100, framesReceived: 60, framesDecoded: 59, bytesReceived: 100_000 },
        [audio.id]: { packetsReceived: 100, totalSamplesReceived: 96_000 },
      },
    });
    const window = statsWindow(first, second);
    expect(window.conn).toEqual({ localType: 'relay', remoteType: 'relay', protocol: 'udp', relayed: true });
    expect(window.tracks).toEqual([
      {
        key: 'audio:in:1718519449',
        kind: 'audio',
        dir: 'in',
        // No rttMs: no pair RTT, and the remote-outbound-rtp carries no roundTripTime.
        lossPct: 0,
        jitterMs: 1,
        // jitterBufferDelay and its count did not move: no value rather than 0 / 0.
        codec: 'audio/opus',
        stalled: false,
      },
      {
        key: 'video:in:1320146287',
        kind: 'video',
        dir: 'in',
        freezes: 0,
        freezeMs: 0,
        fps: 29.5, // no framesPerSecond: 59 frames decoded / 2 s
        kbps: 400,
        pliCount: 0,
        keyFrames: 0,
        stalled: false,
      },
    ]);
  });

  it('omits conn when no candidate pair is selected, and skips streams of other kinds', () => {
    const dump = dumpNamed('chromium156-host-loopback');
    const snapshot = snapshotOf(dump, 'pc1');
    const transport = findStats(snapshot, 'transport');
    const pair = findStats(snapshot, 'candidate-pair');
    const audio = findStats(snapshot, 'outbound-rtp', 'audio');
    const changed = advance(snapshot, 0, {
      set: {
        [transport.id]: { selectedCandidatePairId: undefined },
        [pair.id]: { nominated: false },
        [audio.id]: { kind: 'data', mediaType: undefined },
      },
    });
    const window = statsWindow(undefined, changed);
    expect(window).not.toHaveProperty('conn');
    expect(window.tracks.map((track) => track.kind)).toEqual(['video']);
    // No pair: the remote-inbound-rtp's roundTripTime (0.001495 s) stands in.
    expect(window.tracks[0]?.rttMs).toBe(1.5);
  });
});

describe('statsWindow: the selected candidate pair', () => {
  // pc1 of the 300 kbit/s dump has three nominated, succeeded pairs; the transport names one.
  const dump = dumpNamed('chromium156-turn-relay-300kbit');
  const selectedRtt = (window: StatsWindow) => trackOf(window, 'video', 'out').rttMs;

  it('follows transport.selectedCandidatePairId', () => {
    const window = statsWindow(undefined, snapshotOf(dump, 'pc1'));
    expect(selectedRtt(window)).toBe(10); // CPocHC2Ag2_AXc4iXmd: 0.01 s (the others: 407 and 666 ms)
    expect(trackOf(window, 'video', 'out').availableOutgoingKbps).toBe(108.2);
  });

  it('else takes the nominated, succeeded pair that moved the most bytes, or one marked selected', () => {
    const snapshot = snapshotOf(dump, 'pc1');
    const transport = findStats(snapshot, 'transport');
    const unnamed = advance(snapshot, 0, { set: { [transport.id]: { selectedCandidatePairId: undefined } } });
    expect(selectedRtt(statsWindow(undefined, unnamed))).toBe(10);
    const marked = advance(unnamed, 0, { set: { 'CPv41xC/La_AXc4iXmd': { selected: true } } });
    expect(selectedRtt(statsWindow(undefined, marked))).toBe(666);
  });

  it('reports the TURN leg protocol for a relayed local candidate', () => {
    const snapshot = snapshotOf(dump, 'pc1');
    const tls = advance(snapshot, 0, { set: { IocHC2Ag2: { relayProtocol: 'tls', networkType: 'wimax' } } });
    expect(statsWindow(undefined, tls).conn).toEqual({
      localType: 'relay',
      remoteType: 'relay',
      protocol: 'tls',
      relayed: true,
      network: 'unknown',
    });
  });
});

describe('statsWindow: freezes', () => {
  const dump = dumpNamed('chromium156-turn-relay');
  const first = snapshotOf(dump, 'pc2');
  const video = findStats(first, 'inbound-rtp', 'video');

  it('gives maxFreezeMs when exactly one freeze ended in the window', () => {
    const second = advance(first, 5000, {
      add: {
        [video.id]: { packetsReceived: 300, framesDecoded: 100, freezeCount: 1, totalFreezesDuration: 2.345 },
      },
    });
    expect(trackOf(statsWindow(first, second), 'video', 'in')).toMatchObject({
      freezes: 1,
      freezeMs: 2345,
      maxFreezeMs: 2345,
    });
  });

  describe('without freezeCount (derived from frame counters)', () => {
    const bare = strip(first, video.id, ['freezeCount', 'totalFreezesDuration']);
    const window = (add: Record<string, number>) =>
      trackOf(statsWindow(bare, advance(bare, 5000, { add: { [video.id]: add } })), 'video', 'in');
    const freezeMetrics = (track: WindowTrack) => ({
      freezes: track.freezes,
      freezeMs: track.freezeMs,
      maxFreezeMs: track.maxFreezeMs,
      stalled: track.stalled,
    });

    it('counts a window where packets arrived but no frame was decoded as frozen throughout', () => {
      expect(freezeMetrics(window({ packetsReceived: 100, framesReceived: 0, framesDecoded: 0 }))).toEqual({
        freezes: 1,
        freezeMs: 5000,
        maxFreezeMs: 5000,
        stalled: false,
      });
    });

    it('reports no freeze while frames are decoded', () => {
      expect(freezeMetrics(window({ packetsReceived: 500, framesDecoded: 150 }))).toEqual({
        freezes: 0,
        freezeMs: 0,
        maxFreezeMs: undefined,
        stalled: false,
      });
    });

    it('reports no freeze metric when nothing arrived (the track is stalled)', () => {
      expect(freezeMetrics(window({}))).toEqual({
        freezes: undefined,
        freezeMs: undefined,
        maxFreezeMs: undefined,
        stalled: true,
      });
    });
  });
});

describe('statsWindow: stalled', () => {
  const dump = dumpNamed('chromium156-host-loopback');

  it('marks inbound and outbound streams that moved no packets in the window', () => {
    const receiver = snapshotOf(dump, 'pc2');
    const audioIn = findStats(receiver, 'inbound-rtp', 'audio');
    const received = statsWindow(
      receiver,
      advance(receiver, 1000, { add: { [audioIn.id]: { packetsReceived: 50 } } }),
    );
    expect(trackOf(received, 'audio', 'in').stalled).toBe(false);
    expect(trackOf(received, 'video', 'in').stalled).toBe(true);

    const sender = snapshotOf(dump, 'pc1');
    const videoOut = findStats(sender, 'outbound-rtp', 'video');
    const sent = statsWindow(sender, advance(sender, 1000, { add: { [videoOut.id]: { packetsSent: 90 } } }));
    expect(trackOf(sent, 'video', 'out').stalled).toBe(false);
    expect(trackOf(sent, 'audio', 'out').stalled).toBe(true);
  });

  it('says nothing without a previous snapshot, without packet counters, or for a paused sender', () => {
    const sender = snapshotOf(dump, 'pc1');
    const audioOut = findStats(sender, 'outbound-rtp', 'audio');
    const videoOut = findStats(sender, 'outbound-rtp', 'video');
    expect(statsWindow(undefined, sender).tracks.every((track) => track.stalled === undefined)).toBe(true);
    const before = strip(sender, audioOut.id, ['packetsSent']);
    const after = advance(before, 1000, { set: { [videoOut.id]: { active: false } } });
    const window = statsWindow(before, after);
    expect(trackOf(window, 'audio', 'out')).not.toHaveProperty('stalled');
    expect(trackOf(window, 'video', 'out')).not.toHaveProperty('stalled');
  });
});

describe('statsWindow: call samples', () => {
  /** Every stream of a dump advanced by plausible amounts: a steady second window. */
  function steadyWindow(dump: Dump, pc: PeerConnectionName): [StatsSnapshot, StatsSnapshot] {
    const first = snapshotOf(dump, pc);
    const add: Record<string, Record<string, number>> = {};
    for (const stats of first.stats.values()) {
      if (stats.type === 'inbound-rtp') {
        add[stats.id] =
          stats.kind === 'video'
            ? {
                packetsReceived: 400,
                packetsLost: 2,
                bytesReceived: 400_000,
                framesReceived: 100,
                framesDecoded: 100,
              }
            : { packetsReceived: 250, packetsLost: 1, bytesReceived: 20_000, totalSamplesReceived: 240_000 };
      } else if (stats.type === 'outbound-rtp') {
        add[stats.id] = { packetsSent: 300, bytesSent: 300_000 };
      }
    }
    return [first, advance(first, 5000, { add })];
  }

  const cases = DUMPS.flatMap((dump) => PEER_CONNECTIONS.map((pc) => [dump.name, pc, dump] as const));

  it.each(cases)('%s %s: a window plus state and score passes callSampleSchema', (_name, pc, dump: Dump) => {
    const [first, second] = steadyWindow(dump, pc);
    const sample = toSample(statsWindow(first, second));
    expect(sample.score).toBeTypeOf('number');
    expect(callSampleSchema.parse(sample)).toEqual(sample);
  });

  it('scores the impaired 300 kbit/s receiver lower than the clean loopback one', () => {
    const [cleanFirst, cleanSecond] = steadyWindow(dumpNamed('chromium156-host-loopback'), 'pc2');
    const first = snapshotOf(dumpNamed('chromium156-turn-relay-300kbit'), 'pc2');
    const video = findStats(first, 'inbound-rtp', 'video');
    const audio = findStats(first, 'inbound-rtp', 'audio');
    const second = advance(first, 5000, {
      add: {
        [video.id]: {
          packetsReceived: 60,
          packetsLost: 15,
          framesDecoded: 20,
          freezeCount: 1,
          totalFreezesDuration: 2.5,
        },
        [audio.id]: { packetsReceived: 250, totalSamplesReceived: 240_000 },
      },
    });
    const impaired = toSample(statsWindow(first, second));
    expect(callSampleSchema.parse(impaired)).toEqual(impaired);
    expect(impaired.score).toBeLessThan(toSample(statsWindow(cleanFirst, cleanSecond)).score ?? 0);
  });
});
