/**
 * The known-answer vectors of `vectors/score-v1.json`: the cases, and how the file is built
 * and serialised. `build-vectors.ts` writes the file; the tests check it is up to date.
 */
import stableStringify from 'fast-json-stable-stringify';
import {
  callImpairment,
  sampleImpairment,
  scoreCall,
  scoreSample,
  scoreTrack,
  trackImpairment,
} from '../src/score.ts';
import type { CallSample, TrackSample } from '../src/types.ts';

export type VectorCase =
  | {
      name: string;
      function: 'scoreTrack';
      input: { track: TrackSample; windowMs: number };
      expected: number | null;
    }
  | { name: string; function: 'scoreSample'; input: { sample: CallSample }; expected: number | null }
  | { name: string; function: 'scoreCall'; input: { samples: CallSample[] }; expected: number | null };

export interface VectorFile {
  version: 1;
  description: string;
  cases: VectorCase[];
}

/** How close an unrounded score may come to an x.5 rounding boundary in a committed case. */
export const ROUNDING_MARGIN = 1e-6;

type CaseInput = VectorCase extends infer Case
  ? Case extends VectorCase
    ? Omit<Case, 'expected'>
    : never
  : never;

const cleanAudio = { lossPct: 0, rttMs: 40, jitterMs: 5 } as const;
const cleanVideo = { ...cleanAudio, fps: 30, h: 720, freezes: 0, freezeMs: 0, frameDropPct: 0 } as const;

function fourTracks(audio: object, video: object): TrackSample[] {
  return [
    { kind: 'audio', dir: 'in', ...audio },
    { kind: 'audio', dir: 'out', ...audio },
    { kind: 'video', dir: 'in', ...video },
    { kind: 'video', dir: 'out', ...video },
  ];
}

function cleanCall(windowMs: number): CallSample {
  return { windowMs, tracks: fourTracks(cleanAudio, cleanVideo) };
}

function lossyCall(windowMs: number, lossPct: number): CallSample {
  return { windowMs, tracks: fourTracks({ ...cleanAudio, lossPct }, { ...cleanVideo, lossPct }) };
}

function track(name: string, value: TrackSample, windowMs = 5000): CaseInput {
  return { name, function: 'scoreTrack', input: { track: value, windowMs } };
}

function sample(name: string, value: CallSample): CaseInput {
  return { name, function: 'scoreSample', input: { sample: value } };
}

function call(name: string, samples: CallSample[]): CaseInput {
  return { name, function: 'scoreCall', input: { samples } };
}

function caseInputs(): CaseInput[] {
  const audio = (metrics: object): TrackSample => ({ kind: 'audio', dir: 'in', ...metrics });
  const video = (metrics: object): TrackSample => ({ kind: 'video', dir: 'in', ...metrics });
  return [
    // scoreTrack: audio, each metric alone at several values.
    track('audio clean (rtt 40, jitter 5, no loss)', audio(cleanAudio)),
    ...[1, 5, 10, 25, 50, 100].map((lossPct) => track(`audio lossPct ${lossPct} alone`, audio({ lossPct }))),
    ...[2, 10, 40].map((concealmentPct) =>
      track(`audio concealmentPct ${concealmentPct} alone`, audio({ concealmentPct })),
    ),
    track('audio loss 3 and concealment 8: the larger counts', audio({ lossPct: 3, concealmentPct: 8 })),
    ...[100, 300, 400, 600, 1500].map((rttMs) => track(`audio rttMs ${rttMs} alone`, audio({ rttMs }))),
    ...[20, 80].map((jitterMs) => track(`audio jitterMs ${jitterMs} alone`, audio({ jitterMs }))),
    ...[60, 250].map((jitterBufferMs) =>
      track(`audio jitterBufferMs ${jitterBufferMs} alone`, audio({ jitterBufferMs })),
    ),
    track('audio jitter buffer 30 below twice the jitter 25', audio({ jitterMs: 25, jitterBufferMs: 30 })),
    track('audio outbound, remote-reported loss 4 and rtt 120', {
      kind: 'audio',
      dir: 'out',
      lossPct: 4,
      rttMs: 120,
    }),
    track(
      'audio heavy loss and long delay: R clamped at 0',
      audio({ lossPct: 60, rttMs: 1200, jitterMs: 100 }),
    ),
    track('audio stalled', audio({ stalled: true, lossPct: 0 })),
    // scoreTrack: video, each metric alone at several values.
    track('video clean (30 fps, 720p, no loss, no freezes)', video(cleanVideo)),
    ...[2, 10, 40].map((lossPct) => track(`video lossPct ${lossPct} alone`, video({ lossPct }))),
    ...[250, 2500, 5000].map((freezeMs) =>
      track(`video freezeMs ${freezeMs} of 5000 alone`, video({ freezeMs })),
    ),
    track('video freezeMs 500 of a 1000 ms window', video({ freezeMs: 500 }), 1000),
    track('video freezeMs 500 of a 30000 ms window', video({ freezeMs: 500 }), 30000),
    track('video 3 freezes, 600 ms frozen', video({ freezes: 3, freezeMs: 600 })),
    track('video 2 freezes alone', video({ freezes: 2 })),
    track(
      'video maxFreezeMs 3000 in a 1000 ms window: capped at the window',
      video({ maxFreezeMs: 3000 }),
      1000,
    ),
    track(
      'video maxFreezeMs 1200 above freezeMs 400',
      video({ maxFreezeMs: 1200, freezeMs: 400, freezes: 1 }),
    ),
    ...[24, 15, 5, 0].map((fps) => track(`video fps ${fps} alone`, video({ fps }))),
    ...[5, 50].map((frameDropPct) =>
      track(`video frameDropPct ${frameDropPct} alone`, video({ frameDropPct })),
    ),
    ...[1080, 480, 360, 180, 90, 0].map((h) => track(`video h ${h} alone`, video({ h }))),
    track('video rttMs 800 and jitterBufferMs 100', video({ rttMs: 800, jitterBufferMs: 100 })),
    track(
      'video bandwidth-limited: 360p, 15 fps, 2 % loss',
      video({ ...cleanVideo, h: 360, fps: 15, lossPct: 2 }),
    ),
    track('video outbound stalled', { kind: 'video', dir: 'out', stalled: true }),
    // scoreTrack: degenerate inputs.
    track('no scored metric: null', video({ kbps: 1800, codec: 'video/VP8' })),
    track('stalled false alone: null', audio({ stalled: false })),
    track('unknown kind: null', { kind: 'screen', dir: 'in', lossPct: 5 }),
    track('track with windowMs 0: null', audio({ lossPct: 5 }), 0),
    track('negative windowMs: null', video({ fps: 30 }), -5000),
    track('null metric counts as missing', audio({ lossPct: null, rttMs: 100 })),
    track('negative loss clamps to 0', audio({ lossPct: -5, rttMs: 100 })),
    track('loss above 100 clamps to 100', video({ lossPct: 150 })),
    track('negative fps clamps to 0', video({ fps: -3 })),
    track(
      'freezeMs beyond the window (a lifetime counter) clamps to fully frozen',
      video({ freezeMs: 600000 }),
    ),
    // scoreSample.
    sample('clean call: audio and video both ways (anchor: at least 90)', cleanCall(5000)),
    sample('10 % loss on every track, otherwise clean (anchor: at most 60)', lossyCall(5000, 10)),
    sample('300 ms RTT alone on every track (anchor: above 5 % loss alone)', {
      windowMs: 5000,
      tracks: fourTracks({ rttMs: 300 }, { rttMs: 300 }),
    }),
    sample('5 % loss alone on every track', {
      windowMs: 5000,
      tracks: fourTracks({ lossPct: 5 }, { lossPct: 5 }),
    }),
    sample('inbound video fully frozen, rest clean (anchor: at most 30)', {
      windowMs: 5000,
      tracks: fourTracks(cleanAudio, cleanVideo).map((entry) =>
        entry.kind === 'video' && entry.dir === 'in'
          ? { ...entry, freezes: 1, freezeMs: 5000, fps: 0 }
          : entry,
      ),
    }),
    sample('one bad track dominates, the second worst adds in quadrature', {
      windowMs: 1000,
      tracks: [audio({ ...cleanAudio, lossPct: 8 }), video({ ...cleanVideo, fps: 12 }), audio(cleanAudio)],
    }),
    sample('audio only, 2 % loss', { windowMs: 5000, tracks: [audio({ ...cleanAudio, lossPct: 2 })] }),
    sample('inbound audio stalled (one-way media)', {
      windowMs: 5000,
      tracks: [audio({ stalled: true }), { kind: 'audio', dir: 'out', ...cleanAudio }],
    }),
    sample('unscorable tracks are skipped', {
      windowMs: 5000,
      tracks: [video({ kbps: 1200 }), audio({ ...cleanAudio, lossPct: 1 })],
    }),
    sample('SFU: six inbound videos, one at 240p', {
      windowMs: 15000,
      tracks: [720, 720, 720, 720, 720, 240].map((h) => video({ ...cleanVideo, h })),
    }),
    sample('no tracks: null', { windowMs: 5000, tracks: [] }),
    sample('only unscorable tracks: null', { windowMs: 5000, tracks: [video({ kbps: 900 })] }),
    sample('sample with windowMs 0: null', { ...cleanCall(5000), windowMs: 0 }),
    // scoreCall.
    call('no samples: null', []),
    call('no scorable sample: null', [
      { windowMs: 5000, tracks: [] },
      { ...cleanCall(5000), windowMs: 0 },
    ]),
    call('one clean sample', [cleanCall(5000)]),
    call('25 s clean then 5 s at 20 % loss', [cleanCall(25000), lossyCall(5000, 20)]),
    call('5 s at 20 % loss then 25 s clean (order does not matter)', [lossyCall(5000, 20), cleanCall(25000)]),
    call('one 30 s sample at 3 % loss', [lossyCall(30000, 3)]),
    call(
      'six 5 s samples at 3 % loss (same as one 30 s sample)',
      Array.from({ length: 6 }, () => lossyCall(5000, 3)),
    ),
    call('recovery: 10 s of 1 s windows at 30 % loss, then 50 s of 5 s windows clean', [
      ...Array.from({ length: 10 }, () => lossyCall(1000, 30)),
      ...Array.from({ length: 10 }, () => cleanCall(5000)),
    ]),
    call('degenerate samples carry no weight', [cleanCall(5000), { ...lossyCall(5000, 50), windowMs: -1 }]),
    call('mixed windows and tracks', [
      cleanCall(30000),
      { windowMs: 1000, tracks: [video({ ...cleanVideo, freezes: 1, freezeMs: 400 })] },
      {
        windowMs: 15000,
        tracks: [audio({ ...cleanAudio, concealmentPct: 6 }), video({ ...cleanVideo, h: 360 })],
      },
    ]),
  ];
}

function unroundedScore(input: CaseInput): number | null {
  const impairment =
    input.function === 'scoreTrack'
      ? trackImpairment(input.input.track, input.input.windowMs)
      : input.function === 'scoreSample'
        ? sampleImpairment(input.input.sample)
        : callImpairment(input.input.samples);
  return impairment === null ? null : 100 - impairment;
}

function expectedScore(input: CaseInput): number | null {
  switch (input.function) {
    case 'scoreTrack':
      return scoreTrack(input.input.track, input.input.windowMs);
    case 'scoreSample':
      return scoreSample(input.input.sample);
    case 'scoreCall':
      return scoreCall(input.input.samples);
  }
}

/**
 * Builds the vector file from the current implementation. Throws when two cases share a name or
 * a case's unrounded score lies within {@link ROUNDING_MARGIN} of an x.5 boundary (another
 * language's floating point could round it the other way).
 */
export function buildScoreVectors(): VectorFile {
  const names = new Set<string>();
  const cases = caseInputs().map((input): VectorCase => {
    if (names.has(input.name)) throw new Error(`duplicate vector case name: ${input.name}`);
    names.add(input.name);
    const unrounded = unroundedScore(input);
    if (unrounded !== null && Math.abs(unrounded - Math.floor(unrounded) - 0.5) < ROUNDING_MARGIN) {
      throw new Error(`vector case "${input.name}" lies on a rounding boundary: ${unrounded}`);
    }
    return { ...input, expected: expectedScore(input) } as VectorCase;
  });
  return {
    version: 1,
    description:
      '@svc/quality-score known-answer vectors. Each case calls `function` (scoreTrack with input.track and ' +
      'input.windowMs, scoreSample with input.sample, scoreCall with input.samples) and must return `expected` ' +
      '(an integer 0..100 or null). A metric that is absent or null counts as missing. Scores are rounded half ' +
      'up once, at the end; no case lies within 1e-6 of a rounding boundary.',
    cases,
  };
}

/** Stable bytes: keys sorted (fast-json-stable-stringify), then pretty-printed, newline at the end. */
export function serializeScoreVectors(file: VectorFile): string {
  return `${JSON.stringify(JSON.parse(stableStringify(file)), null, 2)}\n`;
}
