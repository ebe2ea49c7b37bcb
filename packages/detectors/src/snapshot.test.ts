import { describe, expect, it } from 'vitest';
import { T0 } from '../scripts/timeline.ts';
import { createDetector, detect } from './detector.ts';
import { restoreDetector, snapshotDetector } from './snapshot.ts';
import type { DetectorItem } from './types.ts';

const pc = 'pc_01JD2S5V8Q8C4Y3K2W9T7N6MAA';

/** A call that connects, then loses 12 % on its inbound audio for 20 s, one sample a second. */
function lossyCall(): DetectorItem[] {
  const items: DetectorItem[] = [
    { t: T0, type: 'call.event', name: 'pc_created', pc, tracked: true },
    { t: T0 + 100, type: 'call.event', name: 'connection_state', pc, state: 'connected' },
  ];
  for (let second = 1; second <= 40; second++) {
    items.push({
      t: T0 + 100 + second * 1000,
      type: 'call.sample',
      pc,
      windowMs: 1000,
      conn: { state: 'connected' },
      tracks: [{ id: 'trk_ai', kind: 'audio', dir: 'in', lossPct: second > 10 && second <= 30 ? 12 : 0 }],
    });
  }
  return items;
}

describe('snapshotDetector / restoreDetector', () => {
  it('goes on after a restore exactly as detect() over the whole call', () => {
    const items = lossyCall();
    const first = createDetector({ thresholds: { lossPct: 3 } });
    for (const item of items.slice(0, 17)) first.push(item);
    const stored = JSON.stringify(snapshotDetector(first));
    const second = restoreDetector(JSON.parse(stored));
    if (second === undefined) throw new Error('expected a detector');
    for (const item of items.slice(17)) second.push(item);
    const now = (items.at(-1) as DetectorItem).t;
    second.advance(now);
    const expected = detect(items, { thresholds: { lossPct: 3 }, now });
    expect(expected.map((finding) => finding.kind)).toEqual(['webrtc_packet_loss']);
    expect(second.findings()).toEqual(expected);
  });

  it('keeps the thresholds, and stays the same however the detector goes on', () => {
    const detector = createDetector({ thresholds: { lossPct: 3 } });
    const items = lossyCall();
    for (const item of items.slice(0, 5)) detector.push(item);
    const snapshot = snapshotDetector(detector);
    expect(snapshot?.version).toBe(1);
    expect(snapshot?.thresholds.lossPct).toBe(3);
    const before = JSON.stringify(snapshot);
    for (const item of items.slice(5)) detector.push(item);
    detector.advance(T0 + 60_000);
    expect(JSON.stringify(snapshot)).toBe(before);
    // Two detectors restored from one snapshot share nothing either.
    const one = restoreDetector(snapshot);
    const other = restoreDetector(snapshot);
    for (const item of items.slice(5)) one?.push(item);
    one?.advance(T0 + 60_000);
    expect(one?.findings()).toHaveLength(1);
    expect(other?.findings()).toEqual([]);
    expect(JSON.stringify(snapshot)).toBe(before);
  });

  it('is JSON without NaN or Infinity, before any item as after', () => {
    const empty = snapshotDetector(createDetector());
    expect(JSON.parse(JSON.stringify(empty))).toEqual(empty);
    expect(empty?.state).toMatchObject({ pending: [], settledT: null, peerConnections: [] });
    const restored = restoreDetector(JSON.parse(JSON.stringify(empty)));
    for (const item of lossyCall()) restored?.push(item);
    restored?.advance(T0 + 60_000);
    expect(restored?.findings()).toEqual(detect(lossyCall(), { now: T0 + 60_000 }));
    expect(restored?.findings()).toHaveLength(1);
  });

  it('answers undefined for what is not a detector or not a snapshot of this version', () => {
    expect(snapshotDetector({ push: () => [], advance: () => [], findings: () => [] })).toBeUndefined();
    const snapshot = snapshotDetector(createDetector());
    for (const value of [
      undefined,
      null,
      'snapshot',
      {},
      { ...snapshot, version: 2 },
      { ...snapshot, state: null },
      { ...snapshot, state: { ...snapshot?.state, pending: 'x' } },
      { ...snapshot, state: { ...snapshot?.state, awaitingConnection: ['pc_unknown'] } },
    ]) {
      expect(restoreDetector(value)).toBeUndefined();
    }
  });
});
