import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countFunnel, countFunnelUnit, type FunnelMatch, type UnitProgress } from './funnels.ts';

// The one-pass counting against a brute-force reference that tries every attempt: every start,
// every choice of a later match for each step.

/** A unit's timeline: sorted by time, ties in the order generated. */
const timeline = (stepCount: number) =>
  fc
    .array(
      fc.record({
        t: fc.integer({ min: 0, max: 40 }),
        steps: fc.uniqueArray(fc.integer({ min: 0, max: stepCount - 1 }), { minLength: 1, maxLength: 3 }),
        sessionId: fc.constantFrom('ses_a', 'ses_b', 'ses_c'),
      }),
      { maxLength: 11 },
    )
    .map((matches) => matches.map((match, index) => ({ ...match, index })).sort((a, b) => a.t - b.t));

/**
 * Every attempt (positions in the timeline, one per step reached, strictly increasing, each
 * matching its step, all within the window of the first); the unit's depth is the longest; the
 * chosen attempt starts latest and, of those, has the smallest positions in order.
 */
function bruteForce(matches: readonly FunnelMatch[], stepCount: number, windowMs: number): UnitProgress {
  const attempts: number[][] = [];
  const extend = (positions: number[]) => {
    attempts.push(positions);
    if (positions.length === stepCount) return;
    const start = matches[positions[0] as number] as FunnelMatch;
    for (let next = (positions.at(-1) as number) + 1; next < matches.length; next += 1) {
      const match = matches[next] as FunnelMatch;
      if (match.steps.includes(positions.length) && match.t - start.t <= windowMs)
        extend([...positions, next]);
    }
  };
  matches.forEach((match, position) => {
    if (match.steps.includes(0)) extend([position]);
  });
  const depth = Math.max(0, ...attempts.map((attempt) => attempt.length));
  if (depth === 0) return { depth: 0, times: [], sessionIds: [] };
  const deepest = attempts.filter((attempt) => attempt.length === depth);
  const latest = Math.max(...deepest.map((attempt) => (matches[attempt[0] as number] as FunnelMatch).t));
  const [chosen] = deepest
    .filter((attempt) => (matches[attempt[0] as number] as FunnelMatch).t === latest)
    .sort((a, b) => {
      const differs = a.findIndex((position, index) => position !== b[index]);
      return differs === -1 ? 0 : (a[differs] as number) - (b[differs] as number);
    }) as [number[]];
  return {
    depth,
    times: chosen.map((position) => (matches[position] as FunnelMatch).t),
    sessionIds: chosen.map((position) => (matches[position] as FunnelMatch).sessionId),
  };
}

const funnel = fc.integer({ min: 1, max: 4 }).chain((stepCount) =>
  fc.record({
    stepCount: fc.constant(stepCount),
    windowMs: fc.integer({ min: 0, max: 45 }),
    units: fc.array(timeline(stepCount), { maxLength: 8 }),
  }),
);

describe('funnel counting, properties', () => {
  it('each unit gets as far as the brute force finds, with the same chosen attempt', () => {
    fc.assert(
      fc.property(funnel, ({ stepCount, windowMs, units }) => {
        for (const matches of units)
          expect(countFunnelUnit(matches, stepCount, windowMs)).toEqual(
            bruteForce(matches, stepCount, windowMs),
          );
      }),
      { numRuns: 2000 },
    );
  });

  it('the results count, convert, time and drop off as the brute force per unit says', () => {
    fc.assert(
      fc.property(funnel, ({ stepCount, windowMs, units }) => {
        const named = units.map((matches, index) => [`unit_${index}`, matches] as const);
        const results = countFunnel(named, stepCount, windowMs);
        const progress = named.map(([unit, matches]) => ({
          unit,
          ...bruteForce(matches, stepCount, windowMs),
        }));
        expect(results).toHaveLength(stepCount);
        results.forEach((result, step) => {
          const reached = progress.filter((unit) => unit.depth > step);
          expect(result.count).toBe(reached.length);
          const first = progress.filter((unit) => unit.depth > 0).length;
          const previous = step === 0 ? first : progress.filter((unit) => unit.depth > step - 1).length;
          expect(result.conversionFromPrevious).toBe(previous === 0 ? null : reached.length / previous);
          expect(result.conversionFromFirst).toBe(first === 0 ? null : reached.length / first);
          if (result.conversionFromFirst !== null) {
            expect(result.conversionFromFirst).toBeGreaterThanOrEqual(0);
            expect(result.conversionFromFirst).toBeLessThanOrEqual(1);
          }
          // The median by its definition: at least half of the values at or below it, at least half at or above.
          const durations = reached.map(
            (unit) => (unit.times[step] as number) - (unit.times[step - 1] as number),
          );
          if (step === 0 || durations.length === 0) expect(result.medianTimeFromPreviousMs).toBeNull();
          else {
            const value = result.medianTimeFromPreviousMs as number;
            expect(durations.filter((one) => one <= value).length * 2).toBeGreaterThanOrEqual(
              durations.length,
            );
            expect(durations.filter((one) => one >= value).length * 2).toBeGreaterThanOrEqual(
              durations.length,
            );
            expect(value).toBeGreaterThanOrEqual(0);
            expect(value).toBeLessThanOrEqual(windowMs);
          }
          const dropped = step === 0 ? [] : progress.filter((unit) => unit.depth === step);
          expect(result.droppedOff.map((unit) => unit.unit).sort()).toEqual(
            dropped.map((unit) => unit.unit).sort(),
          );
          for (const unit of result.droppedOff) {
            const expected = progress.find((one) => one.unit === unit.unit) as (typeof progress)[number];
            expect(unit).toEqual({
              unit: unit.unit,
              sessionId: expected.sessionIds[step - 1],
              t: expected.times[step - 1],
            });
          }
          // Counts never grow along the funnel; the drop-offs are the difference.
          if (step > 0) {
            expect(result.count).toBeLessThanOrEqual((results[step - 1] as { count: number }).count);
            expect(result.droppedOff).toHaveLength(
              (results[step - 1] as { count: number }).count - result.count,
            );
          }
        });
      }),
      { numRuns: 1000 },
    );
  });

  it('a wider window never loses a unit a step', () => {
    fc.assert(
      fc.property(funnel, fc.integer({ min: 0, max: 20 }), ({ stepCount, windowMs, units }, more) => {
        for (const matches of units)
          expect(countFunnelUnit(matches, stepCount, windowMs + more).depth).toBeGreaterThanOrEqual(
            countFunnelUnit(matches, stepCount, windowMs).depth,
          );
      }),
    );
  });
});
