import { describe, expect, it } from 'vitest';
import { dumpNamed } from './__fixtures__/dumps.ts';
import { type RTCStatsLike, statsWindow, toSnapshot } from './index.ts';

describe('toSnapshot', () => {
  const stats = dumpNamed('chromium156-turn-relay').stats.pc2;

  it('takes an RTCStatsReport-like map, a map by id or an array alike', () => {
    const fromArray = toSnapshot(stats, 1000);
    // An RTCStatsReport is a maplike of id → stats: iterating it yields entries, not stats.
    const report = new Map(stats.map((item) => [item.id, item])) as unknown as RTCStatsReport;
    const fromReport = toSnapshot(report, 1000);
    const fromGenerator = toSnapshot(
      (function* () {
        yield* stats;
      })(),
      1000,
    );
    expect(fromArray.takenAt).toBe(1000);
    expect(fromArray.stats.size).toBe(stats.length);
    expect([...fromReport.stats.entries()]).toEqual([...fromArray.stats.entries()]);
    expect([...fromGenerator.stats.entries()]).toEqual([...fromArray.stats.entries()]);
  });

  it('skips entries without a string id and type', () => {
    const odd = [
      null,
      7,
      { id: 1, type: 'codec' },
      { id: 'x' },
      { id: 'T', type: 'transport', timestamp: 1 },
    ];
    const snapshot = toSnapshot(odd as unknown as RTCStatsLike[], 0);
    expect([...snapshot.stats.keys()]).toEqual(['T']);
    expect(statsWindow(undefined, snapshot)).toEqual({ windowMs: 0, tracks: [] });
  });
});
