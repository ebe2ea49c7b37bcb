import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findDeadClicks, findRageClicks, type Interaction } from './index.ts';

const point = fc.record({ x: fc.integer({ min: 0, max: 4000 }), y: fc.integer({ min: 0, max: 4000 }) });
/** An offset within 15 px, so any two clicks of a burst are within 30 px of each other. */
const offset = fc
  .record({
    angle: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
    radius: fc.double({ min: 0, max: 15, noNaN: true }),
  })
  .map(({ angle, radius }) => ({
    dx: Math.round(radius * Math.cos(angle) * 0.7),
    dy: Math.round(radius * Math.sin(angle) * 0.7),
  }));

/** n ≥ 3 clicks within 1 s around one point, in time order. */
const burst = fc.record({
  start: fc.integer({ min: 0, max: 1e9 }),
  center: point,
  clicks: fc.array(fc.record({ at: fc.integer({ min: 0, max: 1000 }), offset, nodeId: fc.nat(50) }), {
    minLength: 3,
    maxLength: 12,
  }),
});

type Burst = typeof burst extends fc.Arbitrary<infer T> ? T : never;

const toClicks = ({ start, center, clicks }: Burst): Interaction[] =>
  clicks
    .map(({ at, offset: { dx, dy }, nodeId }) => ({
      t: start + at,
      kind: 'click' as const,
      x: center.x + dx,
      y: center.y + dy,
      nodeId,
    }))
    .sort((a, b) => a.t - b.t);

describe('click detectors, properties', () => {
  it('finds exactly one rage click in a burst of 3 or more clicks within 1 s and 30 px', () => {
    fc.assert(
      fc.property(burst, (value) => {
        const rageClicks = findRageClicks(toClicks(value));
        expect(rageClicks).toHaveLength(1);
        expect(rageClicks[0]?.count).toBe(value.clicks.length);
      }),
    );
  });

  it('finds none among clicks more than 1 s apart or more than 30 px apart', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 5000 }), position: point }), { maxLength: 30 }),
        fc.boolean(),
        (steps, spreadInTime) => {
          let t = 0;
          const clicks = steps.map(({ gap, position }, index): Interaction => {
            t += spreadInTime ? 1001 + gap : gap % 1000;
            // Spread in space: each click 31 px or more from every other along a diagonal.
            const place = spreadInTime ? position : { x: index * 31, y: index * 31 };
            return { t, kind: 'click', x: place.x, y: place.y, nodeId: index };
          });
          expect(findRageClicks(clicks)).toEqual([]);
        },
      ),
    );
  });

  it('never reports a click followed by a mutation or navigation within 1 s as dead', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 3000 }),
            kind: fc.constantFrom('click', 'mutation', 'navigation'),
          }),
          { maxLength: 40 },
        ),
        fc.integer({ min: 0, max: 5000 }),
        (steps, extra) => {
          let t = 0;
          const interactions = steps.map(({ gap, kind }, index): Interaction => {
            t += gap;
            return kind === 'click' ? { t, kind, x: index, y: index, nodeId: index } : { t, kind };
          });
          const dead = new Set(
            findDeadClicks(interactions, { until: t + extra }).map((click) => click.nodeId),
          );
          for (const [index, interaction] of interactions.entries()) {
            if (interaction.kind !== 'click') continue;
            const answered = interactions
              .slice(index + 1)
              .some((later) => later.kind !== 'click' && later.t - interaction.t <= 1000);
            const observed = interaction.t + 1000 <= t + extra;
            expect(dead.has(index)).toBe(observed && !answered);
          }
        },
      ),
    );
  });
});
