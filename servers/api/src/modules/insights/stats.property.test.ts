import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRegression, twoProportionTest } from './index.ts';

const proportion = fc
  .integer({ min: 1, max: 100_000 })
  .chain((total) => fc.record({ events: fc.integer({ min: 0, max: total }), total: fc.constant(total) }));

describe('two-proportion test, properties', () => {
  it('equal proportions with large samples are never a regression', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 20 }),
        (total, share, factor) => {
          const previous = { events: Math.round(total * share), total };
          const current = { events: previous.events * factor, total: total * factor };
          expect(isRegression(previous, current)).toBe(false);
          expect(isRegression(current, previous)).toBe(false);
        },
      ),
    );
  });

  it('swapping the arguments flips the sign of z', () => {
    fc.assert(
      fc.property(proportion, proportion, (a, b) => {
        const forward = twoProportionTest(a, b);
        const backward = twoProportionTest(b, a);
        expect(backward.z).toBe(forward.z === 0 ? 0 : -forward.z);
        expect(forward.pOneSided + backward.pOneSided).toBeCloseTo(1, 6);
      }),
    );
  });

  it('more events in current never makes z smaller or undoes a regression', () => {
    fc.assert(
      fc.property(
        proportion,
        fc
          .integer({ min: 1, max: 100_000 })
          .chain((total) =>
            fc.record({ events: fc.integer({ min: 0, max: total - 1 }), total: fc.constant(total) }),
          ),
        (previous, current) => {
          const more = { events: current.events + 1, total: current.total };
          const before = twoProportionTest(previous, current);
          const after = twoProportionTest(previous, more);
          if (before.z !== 0 && after.z !== 0) expect(after.z).toBeGreaterThanOrEqual(before.z - 1e-9);
          expect(after.pOneSided).toBeLessThanOrEqual(before.pOneSided + 1e-9);
          if (isRegression(previous, current)) expect(isRegression(previous, more)).toBe(true);
        },
      ),
    );
  });

  it('the one-sided p is a probability', () => {
    fc.assert(
      fc.property(proportion, proportion, (a, b) => {
        const { pOneSided } = twoProportionTest(a, b);
        expect(pOneSided).toBeGreaterThanOrEqual(0);
        expect(pOneSided).toBeLessThanOrEqual(1);
      }),
    );
  });
});
