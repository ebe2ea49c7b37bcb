import { callSampleSchema } from '@svc/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { advance, DUMPS, type PeerConnectionName, snapshotOf } from './__fixtures__/dumps.ts';
import { type RTCStatsLike, type StatsSnapshot, statsWindow, toSnapshot } from './index.ts';

// Whatever a browser reports (counters that jump, reset or vanish, fields of the wrong type,
// clocks that stall), a window is well formed: every number finite and within the protocol's
// bounds, so the caller's sample always passes callSampleSchema.

/** The stats types a window reads. */
const READ_TYPES = new Set([
  'inbound-rtp',
  'outbound-rtp',
  'remote-inbound-rtp',
  'remote-outbound-rtp',
  'candidate-pair',
  'local-candidate',
  'remote-candidate',
  'transport',
  'codec',
  'media-source',
]);

const oddValue = fc.constantFrom<unknown>(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -1,
  0,
  1e15,
  0.5,
  'x',
  'relay',
  'video/VP9',
  null,
  {},
  true,
  undefined,
);
const amount = fc.oneof(
  fc.integer({ min: -1000, max: 100_000 }),
  fc.double({ min: -10, max: 1e6, noNaN: true }),
  fc.constantFrom(0, 1e12, -1e12),
);
const change = fc.record({
  item: fc.nat(),
  field: fc.nat(),
  operation: fc.oneof(
    fc.record({ add: amount }),
    fc.record({ set: oddValue }),
    fc.record({ set: fc.double({ noNaN: false }) }),
  ),
});

type Change = typeof change extends fc.Arbitrary<infer Value> ? Value : never;

/** Applies changes to the objects a window reads (object and field picked by index, modulo). */
function changed(snapshot: StatsSnapshot, elapsedMs: number, changes: Change[]) {
  const later = advance(snapshot, elapsedMs);
  const items = [...later.stats.values()].filter((item) => READ_TYPES.has(item.type));
  for (const { item: itemIndex, field: fieldIndex, operation } of changes) {
    const item = items[itemIndex % items.length] as RTCStatsLike;
    const fields = Object.keys(item).filter((field) => field !== 'id' && field !== 'type');
    const field = fields[fieldIndex % fields.length] as string;
    if ('add' in operation) {
      const value = item[field];
      if (typeof value === 'number') item[field] = value + operation.add;
    } else if (operation.set === undefined) delete item[field];
    else item[field] = operation.set;
  }
  return toSnapshot(later.stats, later.takenAt);
}

function finiteEverywhere(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(finiteEverywhere);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(finiteEverywhere);
  return value !== undefined && value !== null;
}

describe('statsWindow: properties', () => {
  const snapshots = DUMPS.flatMap((dump) =>
    (['pc1', 'pc2'] as PeerConnectionName[]).map((pc) => snapshotOf(dump, pc)),
  );

  it('produces finite, in-range metrics that pass callSampleSchema, whatever the stats say', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: snapshots.length - 1 }),
        fc.array(change, { maxLength: 40 }),
        fc.array(change, { maxLength: 40 }),
        fc.oneof(fc.integer({ min: 1, max: 600_000 }), fc.constantFrom(-5, 0, 0.3, 0.7, 1000)),
        (index, firstChanges, secondChanges, elapsedMs) => {
          const base = snapshots[index] as StatsSnapshot;
          const first = changed(base, 0, firstChanges);
          const second = changed(first, elapsedMs, secondChanges);
          for (const window of [statsWindow(undefined, second), statsWindow(first, second)]) {
            expect(finiteEverywhere(window)).toBe(true);
            expect(window.windowMs === 0 || window.windowMs >= 1).toBe(true);
            const keys = new Set(window.tracks.map((track) => track.key));
            expect(keys.size).toBeLessThanOrEqual(window.tracks.length);
            const sample = {
              t: 1_795_303_195_000,
              type: 'call.sample' as const,
              pc: 'pc_01JD2S5V8Q8C4Y3K2W9T7N6M5H',
              windowMs: Math.max(1, window.windowMs),
              conn: { state: 'connected' as const, ...window.conn },
              tracks: window.tracks.map(({ key, ...metrics }, track) => ({ id: `trk_${track}`, ...metrics })),
            };
            expect(callSampleSchema.parse(sample)).toEqual(sample);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
