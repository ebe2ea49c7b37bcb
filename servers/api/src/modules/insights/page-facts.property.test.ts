import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findDeadClicks, findRageClicks, toInteractions } from './clicks.ts';
import { addFactEvents, type ClickFact, type FactEvent, type FactsState, startFacts } from './page-facts.ts';

// The facts of a session do not depend on how its events were cut into jobs, and its rage and
// dead clicks are those of the batch detectors (clicks.ts) over each page view.

const CONTEXT = { url: 'https://app.test/', routePatterns: [] };

/** A snapshot of a body with a few buttons (ids 10..14) under a main (id 5). */
const snapshot = (t: number): FactEvent => ({
  t,
  type: 'rrweb',
  data: {
    type: 2,
    data: {
      node: {
        type: 0,
        id: 1,
        childNodes: [
          {
            type: 2,
            id: 2,
            tagName: 'html',
            attributes: {},
            childNodes: [
              {
                type: 2,
                id: 3,
                tagName: 'body',
                attributes: {},
                childNodes: [
                  {
                    type: 2,
                    id: 5,
                    tagName: 'main',
                    attributes: { class: 'app' },
                    childNodes: [10, 11, 12, 13, 14].map((id) => ({
                      type: 2,
                      id,
                      tagName: 'button',
                      attributes: { id: `b${id}` },
                      childNodes: [{ type: 3, id: id + 100, textContent: '***' }],
                    })),
                  },
                ],
              },
            ],
          },
        ],
      },
      initialOffset: { top: 0, left: 0 },
    },
  },
});

const step = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('click' as const),
      node: fc.integer({ min: 10, max: 14 }),
      x: fc.integer({ min: 0, max: 60 }),
      y: fc.integer({ min: 0, max: 60 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('mutation' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('scroll' as const), y: fc.integer({ min: 0, max: 3000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('nav' as const),
      path: fc.constantFrom('/a', '/b', '/orders/42'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('load' as const),
      path: fc.constantFrom('/a', '/c'),
      announced: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('vital' as const),
      name: fc.constantFrom('LCP', 'CLS', 'INP'),
      value: fc.integer({ min: 0, max: 5000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const) }) },
);

/** A session's events: a load with its snapshot, then steps at random gaps (0..1.6 s). */
const session = fc
  .array(fc.record({ gap: fc.integer({ min: 0, max: 1600 }), step }), { minLength: 1, maxLength: 60 })
  .map((steps) => {
    let t = 1_000_000;
    const events: FactEvent[] = [
      {
        t,
        type: 'rrweb',
        data: { type: 4, data: { href: 'https://app.test/a', width: 1280, height: 700, dh: 2400 } },
      },
      snapshot(t),
    ];
    for (const { gap, step: next } of steps) {
      t += gap;
      switch (next.kind) {
        case 'click':
          events.push({
            t,
            type: 'rrweb',
            data: {
              type: 3,
              data: { source: 2, type: 2, id: next.node, x: next.x, y: next.y, ox: 0.5, oy: 0.25 },
            },
          });
          break;
        case 'mutation':
          events.push({
            t,
            type: 'rrweb',
            data: {
              type: 3,
              data: {
                source: 0,
                adds: [],
                removes: [],
                texts: [],
                attributes: [{ id: 12, attributes: { class: 'busy' } }],
              },
            },
          });
          break;
        case 'scroll':
          events.push({
            t,
            type: 'rrweb',
            data: { type: 3, data: { source: 3, id: 1, x: 0, y: next.y, dh: 2400 } },
          });
          break;
        case 'nav':
          events.push({ t, type: 'nav', url: `https://app.test${next.path}` });
          break;
        case 'load':
          // Today's SDK announces the load first (its vitals may come before its recording).
          if (next.announced)
            events.push({ t, type: 'nav', url: `https://app.test${next.path}`, load: true });
          events.push(
            {
              t,
              type: 'rrweb',
              data: { type: 4, data: { href: `https://app.test${next.path}`, width: 390, height: 800 } },
            },
            snapshot(t),
          );
          break;
        case 'vital':
          events.push({ t, type: 'vital', name: next.name, value: next.value });
          break;
        case 'move':
          events.push({ t, type: 'rrweb', data: { type: 3, data: { source: 1, positions: [] } } });
          break;
      }
    }
    return events;
  });

/** Runs the events in the given cuts, the state kept as JSON between runs, as the job does. */
function runInCuts(events: readonly FactEvent[], cuts: readonly number[]) {
  let state: FactsState = startFacts();
  const views = new Map<number, unknown>();
  const clicks: ClickFact[] = [];
  const bounds = [
    0,
    ...[...new Set(cuts.map((cut) => cut % (events.length + 1)))].sort((a, b) => a - b),
    events.length,
  ];
  for (let index = 1; index < bounds.length; index++) {
    const changes = addFactEvents(state, events.slice(bounds[index - 1], bounds[index]), CONTEXT);
    for (const view of changes.views) views.set(view.viewIndex, structuredClone(view));
    clicks.push(...changes.clicks);
    state = JSON.parse(JSON.stringify(state)) as FactsState;
  }
  return {
    views: [...views.entries()].sort(([a], [b]) => a - b),
    clicks: clicks.sort((a, b) => a.kind.localeCompare(b.kind) || a.ordinal - b.ordinal),
  };
}

describe('page facts, properties', () => {
  it('are the same however the events are cut into runs', () => {
    fc.assert(
      fc.property(session, fc.array(fc.nat(200), { maxLength: 8 }), (events, cuts) => {
        expect(runInCuts(events, cuts)).toEqual(runInCuts(events, []));
      }),
      { numRuns: 300 },
    );
  });

  it('find the rage and dead clicks of the batch detectors, page view by page view', () => {
    fc.assert(
      fc.property(session, (events) => {
        const { clicks } = runInCuts(events, []);
        // The page views as the facts cut them: each view's events are those after its start.
        const byView = new Map<number, FactEvent[]>();
        const click = clicks.filter((fact) => fact.kind === 'click');
        let view = -1;
        let lastPath = '';
        for (const event of events) {
          const data = event.data as { type?: number; data?: { href?: string } } | undefined;
          const path =
            event.type === 'nav'
              ? new URL(event.url as string).pathname
              : event.type === 'rrweb' && data?.type === 4
                ? new URL(data.data?.href as string).pathname
                : undefined;
          if (path !== undefined && (path !== lastPath || event.load === true)) {
            // The page change answers the clicks of the view it ends.
            if (view >= 0) byView.get(view)?.push(event);
            view += 1;
            lastPath = path;
          }
          byView.set(view, [...(byView.get(view) ?? []), event]);
        }
        const lastT = (events.at(-1) as FactEvent).t;
        const expectedRage = [];
        const expectedDead = [];
        for (const [, viewEvents] of byView) {
          const interactions = toInteractions(viewEvents as never);
          const viewEnd = viewEvents === [...byView.values()].at(-1) ? lastT - 1 : Number.POSITIVE_INFINITY;
          expectedDead.push(...findDeadClicks(interactions, { until: viewEnd }).map((dead) => dead.t));
          // A burst still open at the end of the session is not reported yet: the view's final
          // run of clicks (grouped as findRageClicks groups them, 1 s and 30 px), unless 1 s passed.
          const viewClicks = interactions.filter((interaction) => interaction.kind === 'click');
          let runStart = 0;
          viewClicks.forEach((click, index) => {
            const previous = viewClicks[index - 1];
            const first = viewClicks[runStart];
            if (
              previous === undefined ||
              first === undefined ||
              click.t - previous.t > 1000 ||
              Math.hypot(click.x - first.x, click.y - first.y) > 30
            )
              runStart = index;
          });
          const found = findRageClicks(interactions);
          const finalRun = found.at(-1);
          const finalRunOpen =
            finalRun !== undefined &&
            finalRun.t === viewClicks[runStart]?.t &&
            finalRun.endT === viewClicks.at(-1)?.t &&
            finalRun.count === viewClicks.length - runStart;
          const rage = found.filter(
            (burst) =>
              viewEnd === Number.POSITIVE_INFINITY ||
              burst.endT + 1000 < lastT ||
              burst !== finalRun ||
              !finalRunOpen,
          );
          expectedRage.push(...rage.map((burst) => [burst.t, burst.count]));
        }
        expect(clicks.filter((fact) => fact.kind === 'dead').map((fact) => fact.t)).toEqual(expectedDead);
        expect(clicks.filter((fact) => fact.kind === 'rage').map((fact) => [fact.t, fact.count])).toEqual(
          expectedRage,
        );
        expect(click).toHaveLength(
          toInteractions(events as never).filter((interaction) => interaction.kind === 'click').length,
        );
      }),
      { numRuns: 300 },
    );
  });
});
