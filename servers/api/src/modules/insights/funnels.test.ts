import { describe, expect, it } from 'vitest';
import { countFunnel, countFunnelUnit, createStepMatcher, type FunnelMatch } from './funnels.ts';

const at = (t: number, steps: number[], sessionId = 'ses_a'): FunnelMatch => ({ t, steps, sessionId });
const MINUTE = 60_000;

describe('countFunnelUnit', () => {
  it('takes the steps in order: a later step before an earlier one does not count', () => {
    expect(countFunnelUnit([at(0, [1]), at(10, [0]), at(20, [2])], 3, MINUTE)).toEqual({
      depth: 1,
      times: [10],
      sessionIds: ['ses_a'],
    });
  });

  it('counts every step within the window of the first step, the bound included', () => {
    expect(countFunnelUnit([at(0, [0]), at(30_000, [1]), at(MINUTE, [2])], 3, MINUTE).depth).toBe(3);
    expect(countFunnelUnit([at(0, [0]), at(30_000, [1]), at(MINUTE + 1, [2])], 3, MINUTE).depth).toBe(2);
  });

  it('chooses the attempt that gets furthest: a later start that completes beats an earlier one that does not', () => {
    // The first start is too early for step 3; the second start makes it.
    const matches = [at(0, [0]), at(10_000, [1]), at(50_000, [0]), at(55_000, [1]), at(90_000, [2])];
    expect(countFunnelUnit(matches, 3, MINUTE)).toEqual({
      depth: 3,
      times: [50_000, 55_000, 90_000],
      sessionIds: ['ses_a', 'ses_a', 'ses_a'],
    });
  });

  it('of the attempts reaching as far, keeps the latest start and the first match of each next step', () => {
    const matches = [at(0, [0]), at(5, [0]), at(7, [1]), at(9, [1])];
    expect(countFunnelUnit(matches, 2, MINUTE)).toEqual({
      depth: 2,
      times: [5, 7],
      sessionIds: ['ses_a', 'ses_a'],
    });
  });

  it('lets one match fill one step of an attempt, and a step at the same time as the previous count', () => {
    // A page view of a route that is both steps 1 and 2 of a funnel is one step.
    expect(countFunnelUnit([at(0, [0, 1])], 2, MINUTE).depth).toBe(1);
    expect(countFunnelUnit([at(0, [0, 1]), at(0, [0, 1])], 2, MINUTE)).toEqual({
      depth: 2,
      times: [0, 0],
      sessionIds: ['ses_a', 'ses_a'],
    });
  });

  it('follows a user across sessions', () => {
    expect(countFunnelUnit([at(0, [0], 'ses_1'), at(20, [1], 'ses_2')], 2, MINUTE).sessionIds).toEqual([
      'ses_1',
      'ses_2',
    ]);
  });

  it('has depth 0 without a first step', () => {
    expect(countFunnelUnit([at(0, [1]), at(1, [2])], 3, MINUTE)).toEqual({
      depth: 0,
      times: [],
      sessionIds: [],
    });
  });
});

describe('countFunnel', () => {
  it('counts, converts, times and lists drop-offs per step', () => {
    const results = countFunnel(
      [
        ['ses_a', [at(0, [0], 'ses_a'), at(1_000, [1], 'ses_a'), at(4_000, [2], 'ses_a')]],
        ['ses_b', [at(0, [0], 'ses_b'), at(3_000, [1], 'ses_b')]],
        ['ses_c', [at(100, [0], 'ses_c'), at(5_100, [1], 'ses_c'), at(7_100, [2], 'ses_c')]],
        ['ses_d', [at(200, [0], 'ses_d')]],
        ['ses_e', [at(0, [1], 'ses_e')]],
      ],
      3,
      MINUTE,
    );
    expect(results).toEqual([
      {
        count: 4,
        conversionFromPrevious: 1,
        conversionFromFirst: 1,
        medianTimeFromPreviousMs: null,
        droppedOff: [],
      },
      {
        count: 3,
        conversionFromPrevious: 0.75,
        conversionFromFirst: 0.75,
        medianTimeFromPreviousMs: 3_000,
        droppedOff: [{ unit: 'ses_d', sessionId: 'ses_d', t: 200 }],
      },
      {
        count: 2,
        conversionFromPrevious: 2 / 3,
        conversionFromFirst: 0.5,
        // 3000 and 2000: the mean of the two middle values.
        medianTimeFromPreviousMs: 2_500,
        droppedOff: [{ unit: 'ses_b', sessionId: 'ses_b', t: 3_000 }],
      },
    ]);
  });

  it('answers null rates when nobody entered', () => {
    expect(countFunnel([['ses_a', [at(0, [1])]]], 2, MINUTE)).toEqual([
      {
        count: 0,
        conversionFromPrevious: null,
        conversionFromFirst: null,
        medianTimeFromPreviousMs: null,
        droppedOff: [],
      },
      {
        count: 0,
        conversionFromPrevious: null,
        conversionFromFirst: null,
        medianTimeFromPreviousMs: null,
        droppedOff: [],
      },
    ]);
  });
});

describe('createStepMatcher', () => {
  const match = createStepMatcher([
    { type: 'pageview', route: '/pricing' },
    { type: 'event', name: 'signup', properties: { plan: 'pro', seats: 3 } },
    { type: 'click', selector: 'main > button.buy' },
    { type: 'event', name: 'signup' },
    { type: 'pageview', route: '/pricing' },
  ]);

  it('matches page views by route, clicks by selector, events by name and every given property', () => {
    expect(match({ type: 'pageview', route: '/pricing' })).toEqual([0, 4]);
    expect(match({ type: 'pageview', route: '/pricing/' })).toEqual([]);
    expect(match({ type: 'click', selector: 'main > button.buy' })).toEqual([2]);
    expect(
      match({ type: 'event', name: 'signup', properties: { plan: 'pro', seats: 3, extra: true } }),
    ).toEqual([1, 3]);
    expect(match({ type: 'event', name: 'signup', properties: { plan: 'pro', seats: '3' } })).toEqual([3]);
    expect(match({ type: 'event', name: 'signup', properties: {} })).toEqual([3]);
    expect(match({ type: 'event', name: 'login', properties: { plan: 'pro', seats: 3 } })).toEqual([]);
  });
});
