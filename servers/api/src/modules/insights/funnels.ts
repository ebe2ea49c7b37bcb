// Funnel counting (servers/api/README.md, Insights, Funnels): which step of an ordered funnel each
// unit (a session, or a user) reached within the conversion window, and the counts, conversions,
// times between steps and drop-offs of all units. Pure: the repository reads the matches.
import type { FunnelStep } from '../../platform/database/tables/insights.table.ts';

/** Something a session did that a step can match: a page view, a custom event, a click. */
export type FunnelFact =
  | { type: 'pageview'; route: string }
  | { type: 'event'; name: string; properties: Readonly<Record<string, unknown>> }
  | { type: 'click'; selector: string };

/**
 * A fact of a unit's timeline that matched at least one step: when (epoch ms), the steps it
 * matches (indexes into the funnel's steps) and the session it happened in.
 */
export interface FunnelMatch {
  t: number;
  steps: readonly number[];
  sessionId: string;
}

/** How far one unit got: its attempt that reached the most steps (see {@link countFunnelUnit}). */
export interface UnitProgress {
  /** Steps reached: 0 (never entered the funnel) to the number of steps. */
  depth: number;
  /** The time of each reached step in the chosen attempt (`depth` entries). */
  times: number[];
  /** The session of each reached step in the chosen attempt (`depth` entries). */
  sessionIds: string[];
}

/** A unit that reached a step and not the next one: where it stopped, and in which session. */
interface DroppedOffUnit {
  unit: string;
  /** The session of the last step it reached. */
  sessionId: string;
  /** When it reached that step (epoch ms). */
  t: number;
}

/** One step of a funnel's results. */
export interface FunnelStepCount {
  /** Units that reached this step (and every step before it, in order, within the window). */
  count: number;
  /** `count` over the previous step's (the first step: 1); `null` when the base is 0. */
  conversionFromPrevious: number | null;
  /** `count` over the first step's; `null` when the first step's count is 0. */
  conversionFromFirst: number | null;
  /** The median time from the previous step to this one over the units that reached it; `null` for the first step or without units. */
  medianTimeFromPreviousMs: number | null;
  /** Units that reached the previous step and not this one, latest first (none for the first step). */
  droppedOff: DroppedOffUnit[];
}

/**
 * A function telling which steps (indexes, ascending) a fact matches: a page view the steps of
 * its route, a custom event those of its name whose properties it has, all equal (`===`: the
 * string `'3'` is not the number `3`), a click those of its target's selector.
 *
 * @example
 * ```ts
 * const match = createStepMatcher([
 *   { type: 'pageview', route: '/pricing' },
 *   { type: 'event', name: 'signup', properties: { plan: 'pro' } },
 * ]);
 * match({ type: 'pageview', route: '/pricing' }); // [0]
 * match({ type: 'event', name: 'signup', properties: { plan: 'free' } }); // []
 * ```
 */
export function createStepMatcher(steps: readonly FunnelStep[]): (fact: FunnelFact) => number[] {
  return (fact) => {
    const matched: number[] = [];
    steps.forEach((step, index) => {
      if (step.type !== fact.type) return;
      if (step.type === 'pageview' && fact.type === 'pageview' && step.route === fact.route)
        matched.push(index);
      else if (step.type === 'click' && fact.type === 'click' && step.selector === fact.selector)
        matched.push(index);
      else if (
        step.type === 'event' &&
        fact.type === 'event' &&
        step.name === fact.name &&
        Object.entries(step.properties ?? {}).every(
          ([key, value]) => Object.hasOwn(fact.properties, key) && fact.properties[key] === value,
        )
      )
        matched.push(index);
    });
    return matched;
  };
}

/** The attempt reaching step `k` with the latest start so far, and its steps' times and sessions. */
interface Attempt {
  start: number;
  times: number[];
  sessionIds: string[];
}

/**
 * How far one unit got through a funnel of `stepCount` steps, from its matches in timeline order
 * (by time; facts at the same millisecond in the order given). An attempt starts at a match of
 * the first step and takes one match per step, each later in the timeline than the previous
 * step's (so at or after its time), all within `windowMs` of the attempt's start (inclusive); one
 * match fills at most one step of an attempt. The unit's depth is the most steps an attempt
 * reaches, as PostHog's ordered funnels count. Of the attempts reaching that depth the chosen
 * one (whose times and sessions are answered) starts latest, and takes for each step the
 * earliest match after the previous step's (the first in the timeline of those starting then):
 * the time between steps is the time to the first match of the next step.
 *
 * One pass: per step, the attempt that reached it with the latest start is kept (a later start
 * leaves more of the window for the steps after), as in PostHog's `aggregate_funnel`. O(matches ×
 * steps).
 *
 * @example
 * ```ts
 * countFunnelUnit(
 *   [
 *     { t: 0, steps: [0], sessionId: 'ses_a' },
 *     { t: 5_000, steps: [0], sessionId: 'ses_a' },
 *     { t: 70_000, steps: [1], sessionId: 'ses_a' },
 *   ],
 *   2,
 *   60_000,
 * ); // { depth: 2, times: [5_000, 70_000], sessionIds: ['ses_a', 'ses_a'] }
 * ```
 */
export function countFunnelUnit(
  matches: readonly FunnelMatch[],
  stepCount: number,
  windowMs: number,
): UnitProgress {
  const attempts: Array<Attempt | undefined> = new Array(stepCount).fill(undefined);
  for (const match of matches) {
    // The later steps first, so that this match extends attempts made before it only.
    const steps = [...new Set(match.steps)].filter((step) => step >= 0 && step < stepCount);
    steps.sort((a, b) => b - a);
    for (const step of steps) {
      const current = attempts[step];
      if (step === 0) {
        if (current === undefined || match.t > current.start)
          attempts[0] = { start: match.t, times: [match.t], sessionIds: [match.sessionId] };
        continue;
      }
      const previous = attempts[step - 1];
      if (previous === undefined || match.t - previous.start > windowMs) continue;
      if (current !== undefined && current.start >= previous.start) continue;
      attempts[step] = {
        start: previous.start,
        times: [...previous.times, match.t],
        sessionIds: [...previous.sessionIds, match.sessionId],
      };
    }
  }
  for (let step = stepCount - 1; step >= 0; step -= 1) {
    const attempt = attempts[step];
    if (attempt !== undefined)
      return { depth: step + 1, times: attempt.times, sessionIds: attempt.sessionIds };
  }
  return { depth: 0, times: [], sessionIds: [] };
}

/**
 * The median: the middle value of the sorted values, or the mean of the two middle ones; `null`
 * without values.
 */
function median(values: number[]): number | null {
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  const middle = Math.floor(values.length / 2);
  return values.length % 2 === 1
    ? (values[middle] as number)
    : ((values[middle - 1] as number) + (values[middle] as number)) / 2;
}

/**
 * A funnel's results over units (sessions or users, each with its matches in timeline order, see
 * {@link countFunnelUnit}): per step, the units that reached it, the conversion from the previous
 * and the first step, the median time from the previous step (of each unit's chosen attempt),
 * and the units that dropped off there (reached the previous step, not this one), latest first.
 *
 * @example
 * ```ts
 * const [first, second] = countFunnel(
 *   [
 *     ['ses_a', [{ t: 0, steps: [0], sessionId: 'ses_a' }, { t: 10, steps: [1], sessionId: 'ses_a' }]],
 *     ['ses_b', [{ t: 5, steps: [0], sessionId: 'ses_b' }]],
 *   ],
 *   2,
 *   60_000,
 * );
 * // first:  { count: 2, conversionFromPrevious: 1, conversionFromFirst: 1, medianTimeFromPreviousMs: null, droppedOff: [] }
 * // second: { count: 1, conversionFromPrevious: 0.5, conversionFromFirst: 0.5, medianTimeFromPreviousMs: 10,
 * //           droppedOff: [{ unit: 'ses_b', sessionId: 'ses_b', t: 5 }] }
 * ```
 */
export function countFunnel(
  units: Iterable<readonly [unit: string, matches: readonly FunnelMatch[]]>,
  stepCount: number,
  windowMs: number,
): FunnelStepCount[] {
  const counts = new Array<number>(stepCount).fill(0);
  const durations: number[][] = Array.from({ length: stepCount }, () => []);
  const droppedOff: DroppedOffUnit[][] = Array.from({ length: stepCount }, () => []);
  for (const [unit, matches] of units) {
    const { depth, times, sessionIds } = countFunnelUnit(matches, stepCount, windowMs);
    for (let step = 0; step < depth; step += 1) {
      counts[step] = (counts[step] as number) + 1;
      if (step > 0) durations[step]?.push((times[step] as number) - (times[step - 1] as number));
    }
    if (depth > 0 && depth < stepCount)
      droppedOff[depth]?.push({
        unit,
        sessionId: sessionIds[depth - 1] as string,
        t: times[depth - 1] as number,
      });
  }
  const first = counts[0] as number;
  return counts.map((count, step) => {
    const previous = step === 0 ? first : (counts[step - 1] as number);
    return {
      count,
      conversionFromPrevious: previous === 0 ? null : count / previous,
      conversionFromFirst: first === 0 ? null : count / first,
      medianTimeFromPreviousMs: step === 0 ? null : median(durations[step] as number[]),
      droppedOff: (droppedOff[step] as DroppedOffUnit[]).sort(
        (a, b) => b.t - a.t || (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0),
      ),
    };
  });
}
