import { describe, expect, it } from 'vitest';
import { scoreCall, scoreSample, scoreTrack } from './index.ts';
import { callImpairment, sampleImpairment, trackImpairment } from './score.ts';
import type { CallSample, TrackSample } from './types.ts';

const cleanAudio = { lossPct: 0, rttMs: 40, jitterMs: 5 } as const;
const cleanVideo = { ...cleanAudio, fps: 30, h: 720, freezes: 0, freezeMs: 0, frameDropPct: 0 } as const;

/** Audio and video, both directions: the shape of a one-to-one call's peer connection. */
function fourTracks(audio: Partial<TrackSample>, video: Partial<TrackSample>): TrackSample[] {
  return [
    { kind: 'audio', dir: 'in', ...audio },
    { kind: 'audio', dir: 'out', ...audio },
    { kind: 'video', dir: 'in', ...video },
    { kind: 'video', dir: 'out', ...video },
  ];
}

const cleanCall = (windowMs = 5000): CallSample => ({ windowMs, tracks: fourTracks(cleanAudio, cleanVideo) });
const lossyCall = (lossPct: number, windowMs = 5000): CallSample => ({
  windowMs,
  tracks: fourTracks({ ...cleanAudio, lossPct }, { ...cleanVideo, lossPct }),
});

describe('sanity anchors', () => {
  it('a clean call scores at least 90', () => {
    expect(scoreSample(cleanCall())).toBeGreaterThanOrEqual(90);
    expect(scoreCall([cleanCall(), cleanCall(1000), cleanCall(30_000)])).toBeGreaterThanOrEqual(90);
  });

  it('10 % loss scores at most 60', () => {
    expect(scoreSample(lossyCall(10))).toBeLessThanOrEqual(60);
    expect(scoreCall([lossyCall(10), lossyCall(10, 1000)])).toBeLessThanOrEqual(60);
  });

  it('a fully frozen video window scores at most 30', () => {
    expect(scoreTrack({ kind: 'video', dir: 'in', freezeMs: 5000 }, 5000)).toBeLessThanOrEqual(30);
    expect(
      scoreTrack({ kind: 'video', dir: 'in', ...cleanVideo, freezes: 1, freezeMs: 5000 }, 5000),
    ).toBeLessThanOrEqual(30);
    const tracks = fourTracks(cleanAudio, cleanVideo).map((track) =>
      track.kind === 'video' && track.dir === 'in' ? { ...track, freezes: 1, freezeMs: 5000 } : track,
    );
    expect(scoreSample({ windowMs: 5000, tracks })).toBeLessThanOrEqual(30);
  });

  it('300 ms RTT alone scores above 5 % loss alone', () => {
    const rtt = scoreSample({ windowMs: 5000, tracks: fourTracks({ rttMs: 300 }, { rttMs: 300 }) });
    const loss = scoreSample({ windowMs: 5000, tracks: fourTracks({ lossPct: 5 }, { lossPct: 5 }) });
    expect(rtt).not.toBeNull();
    expect(loss).not.toBeNull();
    expect(rtt as number).toBeGreaterThan(loss as number);
    for (const kind of ['audio', 'video'] as const) {
      const rttTrack = scoreTrack({ kind, dir: 'in', rttMs: 300 }, 5000) as number;
      expect(rttTrack).toBeGreaterThan(scoreTrack({ kind, dir: 'in', lossPct: 5 }, 5000) as number);
    }
  });
});

describe('known defects of public implementations', () => {
  it('the score never rises again at high loss (R is clamped before the MOS cubic)', () => {
    for (const extra of [{}, { rttMs: 800, jitterMs: 60 }, { rttMs: 3000 }]) {
      for (const kind of ['audio', 'video'] as const) {
        let previous = Number.POSITIVE_INFINITY;
        let previousRounded = 100;
        for (let step = 0; step <= 1000; step++) {
          const track: TrackSample = { kind, dir: 'in', ...extra, lossPct: step / 10 };
          const impairment = trackImpairment(track, 5000) as number;
          const score = 100 - impairment;
          expect(score).toBeLessThanOrEqual(previous);
          const rounded = scoreTrack(track, 5000) as number;
          expect(rounded).toBeLessThanOrEqual(previousRounded);
          previous = score;
          previousRounded = rounded;
        }
      }
    }
    let previousSample = 100;
    for (let step = 0; step <= 1000; step++) {
      const score = scoreSample(lossyCall(step / 10)) as number;
      expect(score).toBeLessThanOrEqual(previousSample);
      previousSample = score;
    }
    expect(scoreTrack({ kind: 'audio', dir: 'in', lossPct: 100 }, 5000)).toBe(0);
  });

  it('the delay term has no jump at 150 ms (or at the 177.3 ms knee) and never improves', () => {
    for (const kind of ['audio', 'video'] as const) {
      let previous = 100;
      // rttMs 0..2000 in 0.5 ms steps: one-way delay 0..1000 ms in 0.25 ms steps.
      for (let step = 0; step <= 4000; step++) {
        const score = 100 - (trackImpairment({ kind, dir: 'in', rttMs: step / 2 }, 5000) as number);
        expect(score).toBeLessThanOrEqual(previous);
        expect(previous - score).toBeLessThan(0.1);
        previous = score;
      }
      for (const oneWayMs of [150, 177.3]) {
        const before = trackImpairment({ kind, dir: 'in', rttMs: 2 * oneWayMs - 0.002 }, 5000) as number;
        const after = trackImpairment({ kind, dir: 'in', rttMs: 2 * oneWayMs + 0.002 }, 5000) as number;
        expect(after - before).toBeLessThan(1e-3);
      }
    }
  });

  it('a window is judged on its own: after heavy early loss, later clean windows score at least 90', () => {
    const timeline: CallSample[] = [
      ...Array.from({ length: 30 }, () => ({
        windowMs: 1000,
        tracks: fourTracks(
          { ...cleanAudio, lossPct: 35 },
          { ...cleanVideo, lossPct: 35, freezes: 1, freezeMs: 700 },
        ),
      })),
      ...Array.from({ length: 12 }, () => cleanCall(5000)),
    ];
    expect(scoreCall(timeline.slice(0, 30))).toBeLessThan(20);
    for (const sample of timeline.slice(30)) expect(scoreSample(sample)).toBeGreaterThanOrEqual(90);
    expect(scoreCall(timeline.slice(30))).toBeGreaterThanOrEqual(90);
    // The whole call lies in between, and more clean time raises it.
    const whole = scoreCall(timeline) as number;
    expect(whole).toBeGreaterThan(scoreCall(timeline.slice(0, 30)) as number);
    expect(whole).toBeLessThan(90);
    expect(scoreCall([...timeline, ...timeline.slice(30)]) as number).toBeGreaterThan(whole);
  });

  it('freezeMs is judged relative to windowMs', () => {
    const frozen = (freezeMs: number, windowMs: number) =>
      trackImpairment({ kind: 'video', dir: 'in', freezeMs }, windowMs) as number;
    expect(frozen(500, 1000)).toBeGreaterThan(frozen(500, 5000));
    expect(frozen(500, 5000)).toBeGreaterThan(frozen(500, 30_000));
    expect(frozen(500, 5000)).toBeCloseTo(frozen(3000, 30_000), 9);
    // A lifetime total leaking in (more frozen time than the window) counts as a fully frozen window, no more.
    expect(frozen(600_000, 5000)).toBe(frozen(5000, 5000));
  });
});

describe('null: no usable input', () => {
  it('scoreTrack: nothing the score reads, an unknown kind, or a degenerate window', () => {
    expect(scoreTrack({ kind: 'video', dir: 'in' }, 5000)).toBeNull();
    expect(scoreTrack({ kind: 'audio', dir: 'in', stalled: false }, 5000)).toBeNull();
    expect(scoreTrack({ kind: 'audio', dir: 'in', fps: 30, h: 720, freezeMs: 0 }, 5000)).toBeNull();
    expect(scoreTrack({ kind: 'video', dir: 'in', concealmentPct: 10 }, 5000)).toBeNull();
    expect(scoreTrack({ kind: 'screen', dir: 'in', lossPct: 1 }, 5000)).toBeNull();
    expect(scoreTrack({ kind: 'audio', dir: 'in', lossPct: Number.NaN }, 5000)).toBeNull();
    for (const windowMs of [0, -1000, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(scoreTrack({ kind: 'audio', dir: 'in', lossPct: 1 }, windowMs)).toBeNull();
    }
  });

  it('scoreSample: no tracks, no scorable track, or a degenerate window', () => {
    expect(scoreSample({ windowMs: 5000, tracks: [] })).toBeNull();
    expect(scoreSample({ windowMs: 5000, tracks: [{ kind: 'video', dir: 'in' }] })).toBeNull();
    expect(scoreSample({ ...cleanCall(), windowMs: 0 })).toBeNull();
    expect(scoreSample({ ...cleanCall(), windowMs: Number.NaN })).toBeNull();
  });

  it('scoreCall: no samples or no scorable sample', () => {
    expect(scoreCall([])).toBeNull();
    expect(
      scoreCall([
        { windowMs: 5000, tracks: [] },
        { ...cleanCall(), windowMs: -5 },
      ]),
    ).toBeNull();
  });

  it('never throws on malformed input from untyped callers', () => {
    const junk: unknown[] = [
      null,
      undefined,
      42,
      'x',
      {},
      { tracks: 'no' },
      { windowMs: 5000, tracks: [null, 7] },
    ];
    for (const value of junk) {
      expect(scoreTrack(value as TrackSample, 5000)).toBeNull();
      expect(scoreSample(value as CallSample)).toBeNull();
      expect(scoreCall(value as CallSample[])).toBeNull();
      expect(scoreCall([value] as CallSample[])).toBeNull();
    }
    expect(scoreTrack({ kind: 'audio', dir: 'in', lossPct: '5' } as unknown as TrackSample, 5000)).toBeNull();
  });
});

describe('degenerate metric values', () => {
  const audio = (metrics: Partial<TrackSample>) => scoreTrack({ kind: 'audio', dir: 'in', ...metrics }, 5000);
  const video = (metrics: Partial<TrackSample>) => scoreTrack({ kind: 'video', dir: 'in', ...metrics }, 5000);

  it('NaN and null count as missing', () => {
    expect(audio({ lossPct: Number.NaN, rttMs: 100 })).toBe(audio({ rttMs: 100 }));
    expect(audio({ lossPct: null as unknown as number, rttMs: 100 })).toBe(audio({ rttMs: 100 }));
    expect(video({ fps: Number.NaN, h: 360 })).toBe(video({ h: 360 }));
  });

  it('out-of-range values are clamped', () => {
    expect(audio({ lossPct: -5 })).toBe(audio({ lossPct: 0 }));
    expect(audio({ lossPct: 250 })).toBe(audio({ lossPct: 100 }));
    expect(video({ frameDropPct: 1e9 })).toBe(video({ frameDropPct: 100 }));
    expect(video({ fps: -3 })).toBe(video({ fps: 0 }));
    expect(video({ h: -720 })).toBe(video({ h: 0 }));
    expect(audio({ rttMs: -40 })).toBe(audio({ rttMs: 0 }));
    expect(audio({ rttMs: Number.POSITIVE_INFINITY })).toBe(0);
    expect(video({ fps: Number.POSITIVE_INFINITY })).toBe(100);
    expect(video({ freezes: Number.POSITIVE_INFINITY })).toBe(0);
  });

  it('stalled: true scores 0 in either direction, whatever the other metrics', () => {
    for (const kind of ['audio', 'video'] as const) {
      for (const dir of ['in', 'out'] as const) {
        expect(scoreTrack({ kind, dir, stalled: true }, 5000)).toBe(0);
        expect(scoreTrack({ kind, dir, ...cleanVideo, stalled: true }, 5000)).toBe(0);
      }
    }
  });

  it('a track never scores better than the share of its media that arrived', () => {
    expect(audio({ lossPct: 97 })).toBeLessThanOrEqual(3);
    expect(video({ lossPct: 90 })).toBeLessThanOrEqual(10);
    expect(audio({ concealmentPct: 100 })).toBe(0);
  });
});

describe('aggregation', () => {
  it('a sample is its worst track combined in quadrature with the second worst', () => {
    const tracks: TrackSample[] = [
      { kind: 'audio', dir: 'in', lossPct: 8 },
      { kind: 'video', dir: 'in', fps: 12 },
      { kind: 'audio', dir: 'out', lossPct: 1 },
    ];
    const [first, second] = tracks
      .map((track) => trackImpairment(track, 1000) as number)
      .sort((a, b) => b - a);
    expect(sampleImpairment({ windowMs: 1000, tracks })).toBeCloseTo(
      Math.hypot(first as number, second as number),
      12,
    );
    expect(sampleImpairment({ windowMs: 1000, tracks: [tracks[0] as TrackSample] })).toBe(
      trackImpairment(tracks[0] as TrackSample, 1000),
    );
  });

  it('a missing track never scores lower than a present perfect one', () => {
    const audioOnly: CallSample = { windowMs: 5000, tracks: [{ kind: 'audio', dir: 'in', lossPct: 3 }] };
    const withPerfectVideo: CallSample = {
      windowMs: 5000,
      tracks: [...audioOnly.tracks, { kind: 'video', dir: 'in', fps: 30, h: 720, lossPct: 0 }],
    };
    expect(scoreSample(audioOnly)).toBe(scoreSample(withPerfectVideo));
  });

  it('a call is the windowMs-weighted root mean square of its samples’ impairments', () => {
    const samples = [lossyCall(20, 5000), cleanCall(25_000)];
    const [bad, good] = samples.map((sample) => sampleImpairment(sample) as number) as [number, number];
    expect(callImpairment(samples)).toBeCloseTo(
      Math.sqrt((5000 * bad ** 2 + 25_000 * good ** 2) / 30_000),
      12,
    );
  });

  it('huge windows keep the call score finite', () => {
    expect(scoreCall([cleanCall(Number.MAX_VALUE), lossyCall(10, Number.MAX_VALUE)])).toBe(
      scoreCall([cleanCall(), lossyCall(10)]),
    );
  });
});

describe('TSDoc examples', () => {
  it('return what the documentation says', () => {
    expect(scoreTrack({ kind: 'audio', dir: 'in', lossPct: 0, rttMs: 40, jitterMs: 5 }, 5000)).toBe(100);
    expect(scoreTrack({ kind: 'video', dir: 'in', freezeMs: 5000 }, 5000)).toBe(0);
    expect(scoreTrack({ kind: 'video', dir: 'in' }, 5000)).toBeNull();
    expect(
      scoreSample({
        windowMs: 5000,
        tracks: [
          { kind: 'audio', dir: 'in', lossPct: 0.5, rttMs: 60, jitterMs: 8 },
          { kind: 'video', dir: 'in', lossPct: 0.4, fps: 29.8, h: 720, freezes: 0, freezeMs: 0 },
        ],
      }),
    ).toBe(97);
    const clean = { kind: 'audio', dir: 'in', lossPct: 0, rttMs: 40, jitterMs: 5 } as const;
    const lossy = { ...clean, lossPct: 20 };
    expect(
      scoreCall([
        { windowMs: 25_000, tracks: [clean] },
        { windowMs: 5_000, tracks: [lossy] },
      ]),
    ).toBe(78);
  });
});
