/**
 * The known-answer vectors of `vectors/detectors-v1.json`: timelines with their expected
 * findings, for native ports. `build-vectors.ts` writes the file; the tests check it is up to
 * date and run every case. Each case also states which kinds fire at which time offset; the
 * generator refuses to write a case whose computed findings disagree, so a vector can only
 * change together with its intention.
 */
import stableStringify from 'fast-json-stable-stringify';
import { detect } from '../src/detector.ts';
import type { DetectorKind } from '../src/kinds.ts';
import type { Thresholds } from '../src/thresholds.ts';
import type { DetectorItem, Finding, TrackSample } from '../src/types.ts';
import {
  audioIn,
  audioOut,
  closed,
  connected,
  connectionState,
  created,
  iceRestart,
  mediaError,
  opening,
  PC_A,
  PC_B,
  pairChange,
  sample,
  samples,
  T0,
  trackEvent,
  videoIn,
  videoOut,
} from './timeline.ts';

export interface VectorCase {
  name: string;
  description: string;
  options?: { thresholds?: Partial<Thresholds>; now?: number };
  items: DetectorItem[];
  expected: Finding[];
}

export interface VectorFile {
  version: 1;
  description: string;
  cases: VectorCase[];
}

interface CaseInput extends Omit<VectorCase, 'expected'> {
  /** What must fire: kind and `t - T0`, in canonical order. */
  fires: [DetectorKind, number][];
}

const DESCRIPTION =
  'Known-answer vectors of @svc/detectors (PROTOCOL.md §5). For each case run detect(items, options) ' +
  '(equivalently: push every item in order, then advance(options.now, or the last t when absent)) and ' +
  'compare with expected, in canonical order: by t, then kind, then pc (absent first), then track ' +
  '(absent first), strings by code unit. A finding is { kind, severity, t, pc?, track?, evidence }; ' +
  'absent fields are omitted, never null. Thresholds not in options.thresholds take their defaults.';

const relayedConn = {
  state: 'connected',
  localType: 'relay',
  remoteType: 'srflx',
  protocol: 'udp',
  relayed: true,
};

const stalledInbound = [
  audioIn({ stalled: true, lossPct: 0 }),
  videoIn({ stalled: true, lossPct: 0 }),
  audioOut({ stalled: false }),
  videoOut({ stalled: false }),
];
const withOpening = (...items: DetectorItem[][]): DetectorItem[] => [
  ...opening(T0 - 1000, PC_A),
  ...items.flat(),
];
const one = (metrics: Omit<TrackSample, 'id' | 'kind' | 'dir'>, make = audioIn) => [make(metrics)];

function caseInputs(): CaseInput[] {
  return [
    // webrtc_connect_failure
    {
      name: 'connect_failure: timeout, known from a later item of another pc',
      description: 'pc A never connects; an item of pc B at +16 s shows the deadline (+15 s) passed.',
      items: [created(T0, PC_A), ...opening(T0 + 1000, PC_B), iceRestart(T0 + 16_000, PC_B)],
      fires: [['webrtc_connect_failure', 15_000]],
    },
    {
      name: 'connect_failure: timeout, known from now',
      description: 'No later item; options.now at exactly the deadline fires it.',
      options: { now: T0 + 15_000 },
      items: [created(T0, PC_A)],
      fires: [['webrtc_connect_failure', 15_000]],
    },
    {
      name: 'connect_failure near miss: not yet known',
      description: 'Without a later item or now, the deadline is not known to have passed.',
      items: [created(T0, PC_A), connectionState(T0 + 200, PC_A, 'connecting', 'new', 200)],
      fires: [],
    },
    {
      name: 'connect_failure near miss: connected exactly at the deadline',
      description: 'connected at pc_created + connectTimeoutMs is within it.',
      options: { now: T0 + 60_000 },
      items: [created(T0, PC_A), connected(T0 + 15_000, PC_A)],
      fires: [],
    },
    {
      name: 'connect_failure: failed after having connected',
      description:
        'connection_state failed fires at its t with everConnected true; a second failure adds nothing.',
      items: [
        ...opening(T0, PC_A),
        connectionState(T0 + 40_000, PC_A, 'failed', 'disconnected', 8000),
        connectionState(T0 + 50_000, PC_A, 'failed', 'connecting', 2000),
      ],
      fires: [['webrtc_connect_failure', 40_000]],
    },
    {
      name: 'connect_failure near miss: closed before the deadline, or not tracked',
      description:
        'A pc closed before its deadline never times out; neither does one created with tracked false.',
      options: { now: T0 + 120_000 },
      items: [created(T0, PC_A), closed(T0 + 4000, PC_A, 4000), created(T0, PC_B, false)],
      fires: [],
    },
    {
      name: 'connect_failure: connectTimeoutMs override',
      description: 'connectTimeoutMs 5000: the connection at +6 s is late.',
      options: { thresholds: { connectTimeoutMs: 5000 } },
      items: [created(T0, PC_A), connected(T0 + 6000, PC_A)],
      fires: [['webrtc_connect_failure', 5000]],
    },
    // webrtc_one_way_media
    {
      name: 'one_way_media: inbound stalled, 1 s windows',
      description:
        'Both inbound tracks stalled while outbound moves: fires at run start + oneWayMs; two tracks, so no track is named.',
      items: withOpening(samples(PC_A, T0, 1000, 8, () => stalledInbound)),
      fires: [['webrtc_one_way_media', 6000]],
    },
    {
      name: 'one_way_media: inbound stalled, 5 s windows',
      description: 'The same condition in 5 s windows gives the same t (the evidence covers 10 s).',
      items: withOpening(samples(PC_A, T0, 5000, 2, () => stalledInbound)),
      fires: [['webrtc_one_way_media', 6000]],
    },
    {
      name: 'one_way_media: outbound audio stalled names the track',
      description: 'Audio-only call whose single outbound track is stalled while inbound audio moves.',
      items: withOpening(
        samples(PC_A, T0, 1000, 7, () => [audioIn({ stalled: false }), audioOut({ stalled: true })]),
      ),
      fires: [['webrtc_one_way_media', 6000]],
    },
    {
      name: 'one_way_media near miss: one stalled window every five',
      description: 'A spike is not sustained.',
      items: withOpening(
        samples(PC_A, T0, 1000, 20, (index) =>
          index % 5 === 0 ? stalledInbound : [audioIn({ stalled: false }), audioOut({ stalled: false })],
        ),
      ),
      fires: [],
    },
    {
      name: 'one_way_media near miss: the stalled inbound video is muted',
      description: 'A muted track is not live; the live inbound audio moves.',
      items: withOpening(
        [trackEvent(T0, PC_A, 'track_muted', videoIn())],
        samples(PC_A, T0, 1000, 10, () => [
          audioIn({ stalled: false }),
          videoIn({ stalled: true }),
          audioOut({ stalled: false }),
        ]),
      ),
      fires: [],
    },
    {
      name: 'one_way_media near miss: no inbound video at all',
      description:
        'We send audio and video, the other side sends audio only: an audio-only reception is not one-way media.',
      items: withOpening(
        samples(PC_A, T0, 1000, 10, () => [
          audioIn({ stalled: false }),
          audioOut({ stalled: false }),
          videoOut({ stalled: false }),
        ]),
      ),
      fires: [],
    },
    {
      name: 'one_way_media near miss: stalled missing',
      description: 'A live inbound track without stalled is not evidence that the direction stalled.',
      items: withOpening(
        samples(PC_A, T0, 1000, 10, () => [
          audioIn({ stalled: true }),
          videoIn({}),
          audioOut({ stalled: false }),
        ]),
      ),
      fires: [],
    },
    // capture errors
    {
      name: 'media_permission_denied: once per session without a pc',
      description: 'Two NotAllowedError without pc: one finding at the first.',
      items: [mediaError(T0, 'NotAllowedError', 'video'), mediaError(T0 + 1000, 'NotAllowedError', 'audio')],
      fires: [['webrtc_media_permission_denied', 0]],
    },
    {
      name: 'device_unavailable: NotFoundError and NotReadableError, session and pc',
      description: 'Once for the session (no pc) and once for pc A; OverconstrainedError fires nothing.',
      items: [
        mediaError(T0, 'NotFoundError'),
        mediaError(T0 + 10, 'NotReadableError', 'audio'),
        mediaError(T0 + 20, 'NotReadableError', 'audio', PC_A),
        mediaError(T0 + 30, 'OverconstrainedError', 'video'),
      ],
      fires: [
        ['webrtc_device_unavailable', 0],
        ['webrtc_device_unavailable', 20],
      ],
    },
    // webrtc_freeze
    {
      name: 'freeze: single, maxFreezeMs',
      description: 'maxFreezeMs 2500 in the window ending at +10 s fires at that sample.',
      items: withOpening(
        samples(PC_A, T0, 5000, 3, (index) =>
          one(
            {
              freezes: index === 1 ? 1 : 0,
              freezeMs: index === 1 ? 2500 : 0,
              maxFreezeMs: index === 1 ? 2500 : 0,
            },
            videoIn,
          ),
        ),
      ),
      fires: [['webrtc_freeze', 10_000]],
    },
    {
      name: 'freeze near miss: exactly freezeSingleMs',
      description: 'A 2000 ms freeze is not over 2000 ms.',
      items: withOpening([
        sample(T0 + 5000, PC_A, 5000, one({ freezes: 1, freezeMs: 2000, maxFreezeMs: 2000 }, videoIn)),
      ]),
      fires: [],
    },
    {
      name: 'freeze: single, freezeMs / freezes',
      description: 'Without maxFreezeMs, 4400 ms over 2 freezes averages 2200 ms.',
      items: withOpening([sample(T0 + 5000, PC_A, 5000, one({ freezes: 2, freezeMs: 4400 }, videoIn))]),
      fires: [['webrtc_freeze', 5000]],
    },
    {
      name: "freeze: single, an inbound video unmute's freezeMs",
      description: 'Audio and outbound unmutes do not count; the inbound video one at +2 ms does.',
      items: withOpening([
        trackEvent(T0, PC_A, 'track_unmuted', audioIn(), 9000),
        trackEvent(T0 + 1, PC_A, 'track_unmuted', videoOut(), 9000),
        trackEvent(T0 + 2, PC_A, 'track_unmuted', videoIn(), 3000),
      ]),
      fires: [['webrtc_freeze', 2]],
    },
    {
      name: 'freeze: ratio, judged at pc_closed',
      description: '30 one-second windows 10 % frozen: 30 s observed, judged at pc_closed.',
      items: withOpening(
        samples(PC_A, T0, 1000, 30, () => one({ freezes: 1, freezeMs: 100, maxFreezeMs: 100 }, videoIn)),
        [closed(T0 + 30_000, PC_A, 31_000)],
      ),
      fires: [['webrtc_freeze', 30_000]],
    },
    {
      name: 'freeze: ratio, judged at now',
      description: 'No pc_closed: judged at options.now.',
      options: { now: T0 + 45_000 },
      items: withOpening(samples(PC_A, T0, 5000, 6, () => one({ freezes: 2, freezeMs: 600 }, videoIn))),
      fires: [['webrtc_freeze', 45_000]],
    },
    {
      name: 'freeze near miss: ratio under minObservedMs',
      description: '20 % frozen over 25 s of observed video is not judged.',
      options: { now: T0 + 100_000 },
      items: withOpening(samples(PC_A, T0, 5000, 5, () => one({ freezes: 1, freezeMs: 1000 }, videoIn))),
      fires: [],
    },
    // webrtc_audio_dropout
    {
      name: 'audio_dropout: 1 s windows',
      description: 'Inbound audio concealment 8 % from T0: fires at +10 s.',
      items: withOpening(samples(PC_A, T0, 1000, 12, () => one({ concealmentPct: 8 }))),
      fires: [['webrtc_audio_dropout', 10_000]],
    },
    {
      name: 'audio_dropout: a window missing the metric restarts the run',
      description: 'The 6th window has no concealmentPct: the run restarts at +6 s and fires at +16 s.',
      items: withOpening(
        samples(PC_A, T0, 1000, 20, (index) => one(index === 5 ? { lossPct: 0 } : { concealmentPct: 8 })),
      ),
      fires: [['webrtc_audio_dropout', 16_000]],
    },
    {
      name: 'audio_dropout near miss: 9 s',
      description: 'Heavy concealment for 9 s, then clean.',
      items: withOpening(samples(PC_A, T0, 1000, 20, (index) => one({ concealmentPct: index < 9 ? 30 : 1 }))),
      fires: [],
    },
    // webrtc_reconnect_storm
    {
      name: 'reconnect_storm: three within a minute',
      description: 'ice_restart at 0, non-initial pair changes at +20 s and +60 s (the window is inclusive).',
      items: withOpening([
        iceRestart(T0, PC_A),
        pairChange(T0 + 20_000, PC_A, false, false),
        pairChange(T0 + 60_000, PC_A, false, false),
        iceRestart(T0 + 61_000, PC_A),
      ]),
      fires: [['webrtc_reconnect_storm', 60_000]],
    },
    {
      name: 'reconnect_storm near miss: the first pair is not a reconnect',
      description: 'initial candidate_pair_change, then one restart and one pair change.',
      items: [
        pairChange(T0, PC_A, false, true),
        iceRestart(T0 + 1000, PC_A),
        pairChange(T0 + 2000, PC_A, false, false),
      ],
      fires: [],
    },
    {
      name: 'reconnect_storm near miss: spread over more than the window',
      description: 'Three restarts spanning 60001 ms.',
      items: withOpening([
        iceRestart(T0, PC_A),
        iceRestart(T0 + 30_000, PC_A),
        iceRestart(T0 + 60_001, PC_A),
      ]),
      fires: [],
    },
    // webrtc_call_abandoned
    {
      name: 'call_abandoned: pc_closed listed before the last sample of the same t',
      description: 'A 9 s call at 20 % loss; pc_closed shares its t with the last sample and sees it.',
      items: withOpening(
        [
          sample(T0 + 4000, PC_A, 4000, [
            audioIn({ lossPct: 20, concealmentPct: 20 }),
            audioOut({ lossPct: 20 }),
          ]),
        ],
        [closed(T0 + 8000, PC_A, 9000)],
        [
          sample(T0 + 8000, PC_A, 4000, [
            audioIn({ lossPct: 20, concealmentPct: 20 }),
            audioOut({ lossPct: 20 }),
          ]),
        ],
      ),
      fires: [['webrtc_call_abandoned', 8000]],
    },
    {
      name: 'call_abandoned near miss: closed after 10 minutes',
      description: 'The same poor samples, but durationMs 600000.',
      items: withOpening(
        samples(PC_A, T0, 4000, 2, () => [
          audioIn({ lossPct: 20, concealmentPct: 20 }),
          audioOut({ lossPct: 20 }),
        ]),
        [closed(T0 + 600_000, PC_A, 600_000)],
      ),
      fires: [],
    },
    {
      name: 'call_abandoned near miss: no samples, or a good score',
      description: 'pc A closes after 3 s without a sample; pc B after 10 s of clean samples.',
      items: [
        ...opening(T0, PC_A),
        closed(T0 + 3000, PC_A, 3000),
        ...opening(T0, PC_B),
        ...samples(PC_B, T0, 5000, 2, () => [
          audioIn({ lossPct: 0, rttMs: 40 }),
          audioOut({ lossPct: 0, rttMs: 40 }),
        ]),
        closed(T0 + 10_000, PC_B, 10_000),
      ],
      fires: [],
    },
    // webrtc_packet_loss
    {
      name: 'packet_loss: 1 s windows',
      description: 'Inbound audio loss 8 % from T0: fires at +10 s.',
      items: withOpening(samples(PC_A, T0, 1000, 15, () => one({ lossPct: 8 }))),
      fires: [['webrtc_packet_loss', 10_000]],
    },
    {
      name: 'packet_loss: 5 s windows agree',
      description: 'The same loss in 5 s windows fires at the same t; the evidence reports the peak.',
      items: withOpening(samples(PC_A, T0, 5000, 3, (index) => one({ lossPct: 7 + index }))),
      fires: [['webrtc_packet_loss', 10_000]],
    },
    {
      name: 'packet_loss near miss: a 1.001 s gap breaks the run',
      description: '6 s of loss, a gap of 1001 ms, 6 s more.',
      items: withOpening(
        samples(PC_A, T0, 1000, 6, () => one({ lossPct: 8 })),
        samples(PC_A, T0 + 7001, 1000, 6, () => one({ lossPct: 8 })),
      ),
      fires: [],
    },
    {
      name: 'packet_loss near miss: a sample without the track breaks the run',
      description: 'The 7th sample carries only the outbound track.',
      items: withOpening(
        samples(PC_A, T0, 1000, 15, (index) =>
          index === 6 ? [audioOut({ lossPct: 0 })] : [audioIn({ lossPct: 8 }), audioOut({ lossPct: 0 })],
        ),
      ),
      fires: [],
    },
    {
      name: 'packet_loss: thresholds override',
      description: 'lossPct 2 and lossSustainMs 4000: 3 % loss fires at +4 s.',
      options: { thresholds: { lossPct: 2, lossSustainMs: 4000 } },
      items: withOpening(samples(PC_A, T0, 1000, 6, () => one({ lossPct: 3 }))),
      fires: [['webrtc_packet_loss', 4000]],
    },
    // webrtc_high_latency
    {
      name: 'high_latency: 15 s over 300 ms',
      description: 'Outbound audio rttMs 420 in 5 s windows.',
      items: withOpening(samples(PC_A, T0, 5000, 4, () => one({ rttMs: 420 }, audioOut))),
      fires: [['webrtc_high_latency', 15_000]],
    },
    {
      name: 'high_latency near miss: 14 s',
      description: '14 one-second windows at 500 ms, then 40 ms.',
      items: withOpening(
        samples(PC_A, T0, 1000, 20, (index) => one({ rttMs: index < 14 ? 500 : 40 }, audioOut)),
      ),
      fires: [],
    },
    // webrtc_cpu_limited
    {
      name: 'cpu_limited: limitedByCpuPct share at pc_closed',
      description: 'Outbound video CPU-limited in 2 of 6 five-second windows: 33.33 %.',
      items: withOpening(
        samples(PC_A, T0, 5000, 6, (index) =>
          one({ limitedByCpuPct: index < 2 ? 100 : 0, qualityLimitation: 'none' }, videoOut),
        ),
        [closed(T0 + 30_000, PC_A, 31_000)],
      ),
      fires: [['webrtc_cpu_limited', 30_000]],
    },
    {
      name: 'cpu_limited: qualityLimitation cpu counts the whole window',
      description: 'No limitedByCpuPct; qualityLimitation cpu in 2 of 8 windows: 25 %, judged at the last t.',
      items: withOpening(
        samples(PC_A, T0, 5000, 8, (index) =>
          one({ qualityLimitation: index < 2 ? 'cpu' : 'bandwidth' }, videoOut),
        ),
      ),
      fires: [['webrtc_cpu_limited', 40_000]],
    },
    {
      name: 'cpu_limited near miss: Firefox-like samples',
      description: 'Neither qualityLimitation nor limitedByCpuPct: nothing is observed.',
      options: { now: T0 + 200_000 },
      items: withOpening(samples(PC_A, T0, 5000, 20, () => one({ fps: 30, h: 720, lossPct: 0 }, videoOut))),
      fires: [],
    },
    // webrtc_low_resolution
    {
      name: 'low_resolution: 180 p after 720 p',
      description: 'Inbound video at 720 p for 10 s, then 180 p: fires 20 s into the drop.',
      items: withOpening(samples(PC_A, T0, 5000, 8, (index) => one({ h: index < 2 ? 720 : 180 }, videoIn))),
      fires: [['webrtc_low_resolution', 30_000]],
    },
    {
      name: 'low_resolution near miss: never at 240 p',
      description: 'A track that was always 180 p.',
      items: withOpening(samples(PC_A, T0, 5000, 8, () => one({ h: 180 }, videoIn))),
      fires: [],
    },
    // webrtc_relay_fallback
    {
      name: 'relay_fallback: once per pc, from a sample or a candidate pair change',
      description: 'pc A relayed in every sample; pc B relayed from its first candidate pair.',
      items: [
        ...opening(T0, PC_A),
        ...samples(PC_A, T0, 5000, 3, () => one({ lossPct: 0 }), relayedConn),
        ...opening(T0, PC_B, true),
        pairChange(T0 + 9000, PC_B, true, false),
      ],
      fires: [
        ['webrtc_relay_fallback', 500],
        ['webrtc_relay_fallback', 5000],
      ],
    },
    // multi-pc sessions
    {
      name: 'session: two pcs, different problems',
      description:
        'pc A loses packets and then fails; pc B stalls inbound and is relayed; a permission error has no pc.',
      items: [
        mediaError(T0 - 2000, 'NotAllowedError', 'video'),
        ...opening(T0 - 1000, PC_A),
        ...opening(T0 - 1000, PC_B, true),
        ...samples(PC_A, T0, 1000, 12, () => one({ lossPct: 12 })),
        ...samples(PC_B, T0, 2000, 5, () => stalledInbound),
        connectionState(T0 + 12_000, PC_A, 'failed', 'disconnected', 3000),
      ],
      fires: [
        ['webrtc_media_permission_denied', -2000],
        ['webrtc_relay_fallback', -500],
        ['webrtc_one_way_media', 6000],
        ['webrtc_packet_loss', 10_000],
        ['webrtc_connect_failure', 12_000],
      ],
    },
  ];
}

/** Builds every case and checks it against its stated intention. */
export function buildDetectorVectors(): VectorFile {
  const cases = caseInputs().map(({ fires, ...input }): VectorCase => {
    const expected = detect(input.items, input.options);
    const actual = expected.map((finding) => `${finding.kind}@${finding.t - T0}`);
    const intended = fires.map(([kind, offset]) => `${kind}@${offset}`);
    if (actual.join() !== intended.join()) {
      throw new Error(
        `vector "${input.name}": intended [${intended.join(', ')}], computed [${actual.join(', ')}]`,
      );
    }
    return { ...input, expected };
  });
  const names = new Set(cases.map((vector) => vector.name));
  if (names.size !== cases.length) throw new Error('vector names must be unique');
  return { version: 1, description: DESCRIPTION, cases };
}

/**
 * Canonical JSON (keys sorted, fast-json-stable-stringify), laid out for review: one case member
 * per line and one item or finding per line.
 */
export function serializeDetectorVectors(file: VectorFile): string {
  const lines = ['{', `  "cases": [`];
  file.cases.forEach((vector, index) => {
    const members: string[] = [];
    const entries = Object.entries(vector).sort(([left], [right]) => (left < right ? -1 : 1));
    for (const [key, value] of entries) {
      if (value === undefined) continue;
      if (Array.isArray(value)) {
        const rows = value.map((element) => `        ${stableStringify(element)}`);
        members.push(
          rows.length === 0 ? `      "${key}": []` : `      "${key}": [\n${rows.join(',\n')}\n      ]`,
        );
      } else members.push(`      "${key}": ${stableStringify(value)}`);
    }
    lines.push(`    {\n${members.join(',\n')}\n    }${index < file.cases.length - 1 ? ',' : ''}`);
  });
  lines.push(
    '  ],',
    `  "description": ${JSON.stringify(file.description)},`,
    `  "version": ${file.version}`,
    '}',
  );
  return `${lines.join('\n')}\n`;
}
