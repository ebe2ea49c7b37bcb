import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addToCallScore, scoreCall, scoreCallTotals, scoreSample, scoreTrack } from './index.ts';
import { callImpairment, sampleImpairment, trackImpairment } from './score.ts';
import type { CallSample, TrackSample } from './types.ts';

type MetricName =
  | 'lossPct'
  | 'rttMs'
  | 'jitterMs'
  | 'jitterBufferMs'
  | 'concealmentPct'
  | 'freezes'
  | 'freezeMs'
  | 'maxFreezeMs'
  | 'frameDropPct'
  | 'fps'
  | 'h';

interface MetricSpecification {
  /** Every value the metric can take, in order (no NaN): from below its range to beyond it. */
  readonly values: fc.Arbitrary<number>;
  /** Whether a higher value is worse (loss, delay) or better (fps, height). */
  readonly higherIsWorse: boolean;
  /** The smallest change the continuity property is about (0.1 percentage point, 1 ms). */
  readonly step?: number;
  /** Values in range for the continuity property. */
  readonly inRange?: fc.Arbitrary<number>;
}

const edge = (...values: number[]) => fc.constantFrom(...values);
const percentage = fc.oneof(
  fc.double({ min: -20, max: 130, noNaN: true }),
  edge(0, 0.1, 1, 5, 10, 100, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);
const milliseconds = fc.oneof(
  fc.double({ min: -100, max: 100_000, noNaN: true }),
  fc.double({ min: 0, max: 2000, noNaN: true }),
  edge(0, 150, 177.3, 300, 354.6, 1e12, Number.POSITIVE_INFINITY),
);
const percentageInRange = fc.double({ min: 0, max: 99.9, noNaN: true });
const millisecondsInRange = fc.oneof(
  fc.double({ min: 0, max: 5000, noNaN: true }),
  fc.double({ min: 0, max: 1e5, noNaN: true }),
);

const metrics: Record<MetricName, MetricSpecification> = {
  lossPct: { values: percentage, higherIsWorse: true, step: 0.1, inRange: percentageInRange },
  concealmentPct: { values: percentage, higherIsWorse: true, step: 0.1, inRange: percentageInRange },
  frameDropPct: { values: percentage, higherIsWorse: true, step: 0.1, inRange: percentageInRange },
  rttMs: { values: milliseconds, higherIsWorse: true, step: 1, inRange: millisecondsInRange },
  jitterMs: { values: milliseconds, higherIsWorse: true, step: 1, inRange: millisecondsInRange },
  jitterBufferMs: { values: milliseconds, higherIsWorse: true, step: 1, inRange: millisecondsInRange },
  freezeMs: { values: milliseconds, higherIsWorse: true, step: 1, inRange: millisecondsInRange },
  maxFreezeMs: { values: milliseconds, higherIsWorse: true, step: 1, inRange: millisecondsInRange },
  freezes: {
    values: fc.oneof(fc.double({ min: -2, max: 100, noNaN: true }), edge(0, 1, 3)),
    higherIsWorse: true,
  },
  fps: {
    values: fc.oneof(
      fc.double({ min: -5, max: 120, noNaN: true }),
      edge(0, 15, 30, Number.POSITIVE_INFINITY),
    ),
    higherIsWorse: false,
    step: 0.1,
    inRange: fc.double({ min: 0, max: 60, noNaN: true }),
  },
  h: {
    values: fc.oneof(
      fc.double({ min: -10, max: 4320, noNaN: true }),
      edge(0, 90, 720, Number.POSITIVE_INFINITY),
    ),
    higherIsWorse: false,
    step: 1,
    inRange: fc.double({ min: 0, max: 4320, noNaN: true }),
  },
};
const metricNames = Object.keys(metrics) as MetricName[];
const continuousMetricNames = metricNames.filter((name) => metrics[name].step !== undefined);

/** A metric value as a platform might send it: usually in range, sometimes NaN or out of range. */
const anyValue = (name: MetricName) =>
  fc.oneof({ weight: 8, arbitrary: metrics[name].values }, edge(Number.NaN));

const trackArbitrary: fc.Arbitrary<TrackSample> = fc.record(
  {
    kind: fc.oneof({ weight: 10, arbitrary: fc.constantFrom('audio', 'video') }, fc.constant('screen')),
    dir: fc.constantFrom('in', 'out'),
    stalled: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, fc.constant(true)),
    ...(Object.fromEntries(metricNames.map((name) => [name, anyValue(name)])) as Record<
      MetricName,
      fc.Arbitrary<number>
    >),
  },
  { requiredKeys: ['kind', 'dir'] },
);

/** Real windows are 1..30 s; the properties also hold for any positive finite window. */
const windowArbitrary = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(1000, 5000, 15_000, 30_000) },
  { weight: 4, arbitrary: fc.integer({ min: 1000, max: 120_000 }) },
  fc.double({ min: 1, max: 1e9, noNaN: true }),
);
const realisticWindowArbitrary = fc.integer({ min: 1000, max: 120_000 });
const degenerateWindowArbitrary = fc.constantFrom(0, -1000, Number.NaN, Number.POSITIVE_INFINITY, -0);

const sampleArbitrary = (window = windowArbitrary): fc.Arbitrary<CallSample> =>
  fc.record({ windowMs: window, tracks: fc.array(trackArbitrary, { minLength: 0, maxLength: 6 }) });
const callArbitrary = (window = windowArbitrary) =>
  fc.array(sampleArbitrary(window), { minLength: 0, maxLength: 8 });

function withMetric(track: TrackSample, name: MetricName, value: number | undefined): TrackSample {
  const copy: Record<string, unknown> = { ...track };
  if (value === undefined) delete copy[name];
  else copy[name] = value;
  return copy as unknown as TrackSample;
}

function replaceTrack(sample: CallSample, index: number, track: TrackSample): CallSample {
  return {
    ...sample,
    tracks: sample.tracks.map((current, position) => (position === index ? track : current)),
  };
}

function replaceSample(samples: readonly CallSample[], index: number, sample: CallSample): CallSample[] {
  return samples.map((current, position) => (position === index ? sample : current));
}

/** An ordered pair (better, worse) of values of one metric. */
const orderedPair = (name: MetricName) =>
  fc.tuple(metrics[name].values, metrics[name].values).map(([first, second]) => {
    const [low, high] = first <= second ? [first, second] : [second, first];
    return metrics[name].higherIsWorse ? { better: low, worse: high } : { better: high, worse: low };
  });

/** A metric with an ordered pair of its values. */
const metricChange = fc
  .constantFrom(...metricNames)
  .chain((name) => orderedPair(name).map((pair) => ({ name, ...pair })));

/**
 * Unrounded values are compared up to floating-point noise: a polynomial or `Math.exp` evaluated
 * in doubles can move by an ulp the "wrong" way (found at jitterBufferMs 0 vs 3e-13).
 */
const FLOATING_POINT_TOLERANCE = 1e-9;

/** `first` is not lower than `second`, treating null as "no score" (both null or both numbers). */
function expectNotLower(first: number | null, second: number | null, tolerance = 0): void {
  expect(first === null).toBe(second === null);
  if (first !== null && second !== null) expect(first).toBeGreaterThanOrEqual(second - tolerance);
}

const isScore = (value: number | null) =>
  value === null || (Number.isInteger(value) && value >= 0 && value <= 100);

describe('bounds', () => {
  it('every score is null or an integer 0..100, whatever the input', () => {
    fc.assert(
      fc.property(trackArbitrary, fc.oneof(windowArbitrary, degenerateWindowArbitrary), (track, windowMs) => {
        expect(isScore(scoreTrack(track, windowMs))).toBe(true);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(callArbitrary(fc.oneof(windowArbitrary, degenerateWindowArbitrary)), (samples) => {
        for (const sample of samples) expect(isScore(scoreSample(sample))).toBe(true);
        expect(isScore(scoreCall(samples))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('a track never scores better than the share of its media that arrived (100 − lossPct)', () => {
    fc.assert(
      fc.property(trackArbitrary, windowArbitrary, percentageInRange, (track, windowMs, lossPct) => {
        const score = scoreTrack(withMetric(track, 'lossPct', lossPct), windowMs);
        if (score !== null) expect(score).toBeLessThanOrEqual(Math.round(100 - lossPct));
      }),
      { numRuns: 300 },
    );
  });
});

describe('monotonicity: a worse value of any one metric never raises a score', () => {
  it('scoreTrack', () => {
    fc.assert(
      fc.property(
        trackArbitrary,
        windowArbitrary,
        metricChange,
        (track, windowMs, { name, better, worse }) => {
          const betterTrack = withMetric(track, name, better);
          const worseTrack = withMetric(track, name, worse);
          expectNotLower(
            trackImpairment(worseTrack, windowMs),
            trackImpairment(betterTrack, windowMs),
            FLOATING_POINT_TOLERANCE,
          );
          expectNotLower(scoreTrack(betterTrack, windowMs), scoreTrack(worseTrack, windowMs));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('scoreTrack: stalled', () => {
    fc.assert(
      fc.property(trackArbitrary, windowArbitrary, (track, windowMs) => {
        const live = scoreTrack({ ...track, stalled: false }, windowMs);
        const stalled = scoreTrack({ ...track, stalled: true }, windowMs);
        if (track.kind === 'audio' || track.kind === 'video') expect(stalled).toBe(0);
        if (live !== null && stalled !== null) expect(stalled).toBeLessThanOrEqual(live);
      }),
    );
  });

  it('scoreSample', () => {
    fc.assert(
      fc.property(sampleArbitrary(), fc.nat(), metricChange, (sample, position, { name, better, worse }) => {
        fc.pre(sample.tracks.length > 0);
        const index = position % sample.tracks.length;
        const track = sample.tracks[index] as TrackSample;
        const betterSample = replaceTrack(sample, index, withMetric(track, name, better));
        const worseSample = replaceTrack(sample, index, withMetric(track, name, worse));
        expectNotLower(
          sampleImpairment(worseSample),
          sampleImpairment(betterSample),
          FLOATING_POINT_TOLERANCE,
        );
        expectNotLower(scoreSample(betterSample), scoreSample(worseSample));
      }),
      { numRuns: 1000 },
    );
  });

  it('scoreCall', () => {
    fc.assert(
      fc.property(
        callArbitrary(),
        fc.nat(),
        fc.nat(),
        metricChange,
        (samples, samplePosition, trackPosition, { name, better, worse }) => {
          fc.pre(samples.length > 0);
          const sampleIndex = samplePosition % samples.length;
          const sample = samples[sampleIndex] as CallSample;
          fc.pre(sample.tracks.length > 0);
          const trackIndex = trackPosition % sample.tracks.length;
          const track = sample.tracks[trackIndex] as TrackSample;
          const betterCall = replaceSample(
            samples,
            sampleIndex,
            replaceTrack(sample, trackIndex, withMetric(track, name, better)),
          );
          const worseCall = replaceSample(
            samples,
            sampleIndex,
            replaceTrack(sample, trackIndex, withMetric(track, name, worse)),
          );
          expectNotLower(callImpairment(worseCall), callImpairment(betterCall), FLOATING_POINT_TOLERANCE);
          expectNotLower(scoreCall(betterCall), scoreCall(worseCall));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('a missing metric never lowers a score', () => {
  it('scoreTrack: removing a metric never lowers it; NaN is the same as missing', () => {
    fc.assert(
      fc.property(
        trackArbitrary,
        windowArbitrary,
        fc.constantFrom(...metricNames),
        (track, windowMs, name) => {
          const without = withMetric(track, name, undefined);
          const withScore = scoreTrack(track, windowMs);
          const withoutScore = scoreTrack(without, windowMs);
          if (withScore !== null && withoutScore !== null)
            expect(withoutScore).toBeGreaterThanOrEqual(withScore);
          const withImpairment = trackImpairment(track, windowMs);
          const withoutImpairment = trackImpairment(without, windowMs);
          if (withImpairment !== null && withoutImpairment !== null) {
            expect(withoutImpairment).toBeLessThanOrEqual(withImpairment + FLOATING_POINT_TOLERANCE);
          }
          expect(trackImpairment(withMetric(track, name, Number.NaN), windowMs)).toBe(
            trackImpairment(without, windowMs),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('scoreSample: removing a track (or a metric of one) never lowers it', () => {
    fc.assert(
      fc.property(sampleArbitrary(), fc.nat(), fc.constantFrom(...metricNames), (sample, position, name) => {
        fc.pre(sample.tracks.length > 0);
        const index = position % sample.tracks.length;
        const withScore = sampleImpairment(sample);
        const withoutTrack = sampleImpairment({
          ...sample,
          tracks: sample.tracks.filter((_, at) => at !== index),
        });
        const withoutMetric = sampleImpairment(
          replaceTrack(sample, index, withMetric(sample.tracks[index] as TrackSample, name, undefined)),
        );
        for (const without of [withoutTrack, withoutMetric]) {
          if (withScore !== null && without !== null) {
            expect(without).toBeLessThanOrEqual(withScore + FLOATING_POINT_TOLERANCE);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('scoreSample: adding a perfect track changes nothing', () => {
    fc.assert(
      fc.property(sampleArbitrary(), fc.constantFrom('audio', 'video'), (sample, kind) => {
        const perfect: TrackSample = { kind, dir: 'in', lossPct: 0, fps: 30, h: 720, freezeMs: 0 };
        expect(scoreSample({ ...sample, tracks: [...sample.tracks, perfect] })).toBe(
          isValidWindow(sample.windowMs) ? (scoreSample(sample) ?? 100) : null,
        );
      }),
    );
  });
});

function isValidWindow(windowMs: number): boolean {
  return Number.isFinite(windowMs) && windowMs > 0;
}

describe('continuity: 0.1 percentage point or 1 ms never moves a score by more than 3', () => {
  const nudge = fc.constantFrom(...continuousMetricNames).chain((name) =>
    (metrics[name].inRange as fc.Arbitrary<number>).map((value) => ({
      name,
      value,
      nudged: value + (metrics[name].step as number),
    })),
  );

  it('scoreTrack (and its unrounded value moves by at most 1)', () => {
    fc.assert(
      fc.property(
        trackArbitrary,
        realisticWindowArbitrary,
        nudge,
        (track, windowMs, { name, value, nudged }) => {
          const before = withMetric(track, name, value);
          const after = withMetric(track, name, nudged);
          const unroundedBefore = trackImpairment(before, windowMs);
          const unroundedAfter = trackImpairment(after, windowMs);
          if (unroundedBefore === null || unroundedAfter === null) return;
          expect(Math.abs(unroundedAfter - unroundedBefore)).toBeLessThanOrEqual(1);
          expect(
            Math.abs((scoreTrack(after, windowMs) as number) - (scoreTrack(before, windowMs) as number)),
          ).toBeLessThanOrEqual(3);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('scoreSample and scoreCall', () => {
    fc.assert(
      fc.property(
        callArbitrary(realisticWindowArbitrary),
        fc.nat(),
        fc.nat(),
        nudge,
        (samples, samplePosition, trackPosition, { name, value, nudged }) => {
          fc.pre(samples.length > 0);
          const sampleIndex = samplePosition % samples.length;
          const sample = samples[sampleIndex] as CallSample;
          fc.pre(sample.tracks.length > 0);
          const trackIndex = trackPosition % sample.tracks.length;
          const track = sample.tracks[trackIndex] as TrackSample;
          const before = replaceTrack(sample, trackIndex, withMetric(track, name, value));
          const after = replaceTrack(sample, trackIndex, withMetric(track, name, nudged));
          const sampleBefore = scoreSample(before);
          const sampleAfter = scoreSample(after);
          if (sampleBefore !== null && sampleAfter !== null) {
            expect(Math.abs(sampleAfter - sampleBefore)).toBeLessThanOrEqual(3);
          }
          const callBefore = scoreCall(replaceSample(samples, sampleIndex, before));
          const callAfter = scoreCall(replaceSample(samples, sampleIndex, after));
          if (callBefore !== null && callAfter !== null)
            expect(Math.abs(callAfter - callBefore)).toBeLessThanOrEqual(3);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('scoreCall', () => {
  it('lies between the worst and the best sample score', () => {
    fc.assert(
      fc.property(callArbitrary(), (samples) => {
        const scores = samples.map(scoreSample).filter((score): score is number => score !== null);
        const call = scoreCall(samples);
        if (scores.length === 0) {
          expect(call).toBeNull();
          return;
        }
        expect(call).not.toBeNull();
        expect(call).toBeGreaterThanOrEqual(Math.min(...scores));
        expect(call).toBeLessThanOrEqual(Math.max(...scores));
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on the order of the samples', () => {
    fc.assert(
      fc.property(callArbitrary(), fc.nat(), (samples, seed) => {
        const shuffled = [...samples].sort(
          (first, second) =>
            ((samples.indexOf(first) * 7919 + seed) % 101) - ((samples.indexOf(second) * 7919 + seed) % 101),
        );
        const original = callImpairment(samples);
        const reordered = callImpairment(shuffled);
        if (original === null) expect(reordered).toBeNull();
        else expect(reordered).toBeCloseTo(original, 9);
      }),
    );
  });

  /** Splits a sample into `parts` equal windows: time and count metrics divided, rates and ratios kept. */
  function split(sample: CallSample, parts: number): CallSample[] {
    const tracks = sample.tracks.map((track) => {
      const copy: Record<string, unknown> = { ...track };
      delete copy.maxFreezeMs; // the longest freeze of a part is not a share of the whole's
      for (const name of ['freezeMs', 'freezes'] as const) {
        const value = track[name];
        if (typeof value === 'number') copy[name] = value / parts;
      }
      return copy as unknown as TrackSample;
    });
    return Array.from({ length: parts }, () => ({ windowMs: sample.windowMs / parts, tracks }));
  }

  const withoutMaxFreeze = (sample: CallSample): CallSample => split(sample, 1)[0] as CallSample;

  it('weights samples by windowMs: splitting a sample into equal parts does not change the call score', () => {
    fc.assert(
      fc.property(
        callArbitrary(realisticWindowArbitrary),
        fc.nat(),
        fc.integer({ min: 2, max: 12 }),
        (raw, position, parts) => {
          fc.pre(raw.length > 0);
          const samples = raw.map(withoutMaxFreeze);
          const index = position % samples.length;
          const whole = callImpairment(samples);
          const splitCall = [
            ...samples.slice(0, index),
            ...split(samples[index] as CallSample, parts),
            ...samples.slice(index + 1),
          ];
          const splitImpairment = callImpairment(splitCall);
          if (whole === null) {
            expect(splitImpairment).toBeNull();
            return;
          }
          expect(splitImpairment).toBeCloseTo(whole, 9);
          const distanceToRoundingBoundary = Math.abs(((100 - whole) % 1) - 0.5);
          if (distanceToRoundingBoundary > 1e-6) expect(scoreCall(splitCall)).toBe(scoreCall(samples));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('one 30 s sample equals six identical 5 s samples', () => {
    fc.assert(
      fc.property(fc.array(trackArbitrary, { minLength: 1, maxLength: 6 }), (tracks) => {
        const long = withoutMaxFreeze({ windowMs: 30_000, tracks });
        const six = split(long, 6);
        const whole = callImpairment([long]);
        if (whole === null) {
          expect(callImpairment(six)).toBeNull();
          return;
        }
        expect(callImpairment(six)).toBeCloseTo(whole, 9);
        // Duplicating the same window changes nothing either.
        expect(callImpairment([long, long, long])).toBeCloseTo(whole, 9);
      }),
      { numRuns: 500 },
    );
  });

  it('a longer window weighs more', () => {
    fc.assert(
      fc.property(
        sampleArbitrary(realisticWindowArbitrary),
        sampleArbitrary(realisticWindowArbitrary),
        (first, second) => {
          const firstImpairment = sampleImpairment(first);
          const secondImpairment = sampleImpairment(second);
          fc.pre(
            firstImpairment !== null && secondImpairment !== null && firstImpairment > secondImpairment + 1,
          );
          const longerFirst = { ...first, windowMs: first.windowMs * 3 };
          // Same metrics over a longer window: freezes would change their share, so compare without them.
          fc.pre(sampleImpairment(longerFirst) === firstImpairment);
          expect(callImpairment([longerFirst, second]) as number).toBeGreaterThan(
            callImpairment([first, second]) as number,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('addToCallScore', () => {
  it('summed in batches (computed again when a longer window arrives) equals scoreCall to the last bit, and survives JSON', () => {
    fc.assert(
      fc.property(
        callArbitrary(fc.oneof(windowArbitrary, realisticWindowArbitrary, degenerateWindowArbitrary)),
        fc.array(fc.nat(), { maxLength: 4 }),
        (samples, cuts) => {
          const ends = [...new Set(cuts.map((cut) => cut % (samples.length + 1))), samples.length].sort(
            (a, b) => a - b,
          );
          let totals = addToCallScore(undefined, []);
          let start = 0;
          for (const end of ends) {
            const batch = samples.slice(start, end);
            const stored = JSON.parse(JSON.stringify(totals));
            const added = addToCallScore(stored, batch);
            // null only when a scoring sample of the batch has a longer window than every one before.
            const longest = (list: readonly CallSample[]) =>
              Math.max(
                0,
                ...list.filter((sample) => scoreSample(sample) !== null).map((sample) => sample.windowMs),
              );
            expect(added === null).toBe(
              totals.scoredSamples > 0 && longest(batch) > longest(samples.slice(0, start)),
            );
            totals = added ?? addToCallScore(undefined, samples.slice(0, end));
            expect(callImpairmentOfTotals(totals)).toBe(twoPassImpairment(samples.slice(0, end)));
            start = end;
          }
          expect(scoreCallTotals(totals)).toBe(scoreCall(samples));
          expect(callImpairment(samples)).toBe(twoPassImpairment(samples));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('scores nothing without a scoring sample, and ignores what is not a list', () => {
    expect(scoreCallTotals(addToCallScore(undefined, []))).toBeNull();
    expect(scoreCallTotals(undefined)).toBeNull();
    expect(scoreCallTotals(null)).toBeNull();
    expect(addToCallScore(undefined, 'x' as never)).toEqual(addToCallScore(undefined, []));
  });
});

/** The unrounded impairment `scoreCallTotals` rounds, for exact comparison with `callImpairment`. */
function callImpairmentOfTotals(totals: ReturnType<typeof addToCallScore>): number | null {
  if (totals === null || totals.scoredSamples === 0) return null;
  return Math.min(100, Math.sqrt(totals.weightedSquares / totals.totalWeight));
}

/** `callImpairment` as first written (the longest window first, then one sum in order): the reference. */
function twoPassImpairment(samples: readonly CallSample[]): number | null {
  const scored = samples.flatMap((sample) => {
    const impairment = sampleImpairment(sample);
    return impairment === null ? [] : [{ impairment, windowMs: sample.windowMs }];
  });
  if (scored.length === 0) return null;
  const longest = Math.max(...scored.map((entry) => entry.windowMs));
  let weightedSquares = 0;
  let totalWeight = 0;
  for (const { impairment, windowMs } of scored) {
    const weight = windowMs / longest;
    weightedSquares += weight * impairment * impairment;
    totalWeight += weight;
  }
  return Math.min(100, Math.sqrt(weightedSquares / totalWeight));
}
