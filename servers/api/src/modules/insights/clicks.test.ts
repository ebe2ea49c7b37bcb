import { describe, expect, it } from 'vitest';
import { findDeadClicks, findRageClicks, type Interaction, toInteractions } from './index.ts';

const click = (t: number, x = 100, y = 100, nodeId = 7): Interaction => ({ t, kind: 'click', x, y, nodeId });
const mutation = (t: number): Interaction => ({ t, kind: 'mutation' });
const navigation = (t: number): Interaction => ({ t, kind: 'navigation' });

describe('findRageClicks', () => {
  it('reports one rage click per burst of 3 or more clicks within 1 s and 30 px', () => {
    const events = [click(0), click(150, 110, 95), click(300, 90, 120, 8), click(450), mutation(500)];
    expect(findRageClicks(events)).toEqual([{ t: 0, endT: 450, count: 4, x: 100, y: 100, nodeId: 7 }]);
  });

  it('needs 3 clicks within 1 s', () => {
    expect(findRageClicks([click(0), click(600), click(1200)])).toEqual([]);
    expect(findRageClicks([click(0), click(600), click(1000)])).toHaveLength(1);
    expect(findRageClicks([click(0), click(500)])).toEqual([]);
  });

  it('needs the clicks within 30 px of the first', () => {
    expect(findRageClicks([click(0), click(100, 131), click(200)])).toEqual([]);
    expect(findRageClicks([click(0), click(100, 118, 124), click(200, 70)])).toHaveLength(1);
  });

  it('reports separate bursts separately', () => {
    const events = [click(0), click(100), click(200), click(5000, 500), click(5100, 500), click(5200, 500)];
    expect(findRageClicks(events).map((rage) => [rage.t, rage.count, rage.x])).toEqual([
      [0, 3, 100],
      [5000, 3, 500],
    ]);
  });
});

describe('findDeadClicks', () => {
  it('reports a click nothing answered within 1 s', () => {
    expect(findDeadClicks([click(0), mutation(1001)])).toEqual([{ t: 0, x: 100, y: 100, nodeId: 7 }]);
  });

  it('does not report a click answered by a mutation or a navigation within 1 s', () => {
    expect(findDeadClicks([click(0), mutation(1000)])).toEqual([]);
    expect(findDeadClicks([click(0), mutation(0)])).toEqual([]);
    expect(findDeadClicks([click(0), navigation(400)], { until: 5000 })).toEqual([]);
  });

  it('does not judge a click whose second is not observed', () => {
    expect(findDeadClicks([click(0)])).toEqual([]);
    expect(findDeadClicks([click(0)], { until: 999 })).toEqual([]);
    expect(findDeadClicks([click(0)], { until: 1000 })).toHaveLength(1);
  });

  it('does not count other clicks as an answer', () => {
    expect(findDeadClicks([click(0), click(200, 300), mutation(1100)])).toEqual([
      { t: 0, x: 100, y: 100, nodeId: 7 },
    ]);
  });
});

describe('toInteractions', () => {
  const rrweb = (t: number, data: unknown) => ({ t, type: 'rrweb', data });
  it('maps rrweb clicks, mutations, inputs, snapshots and nav events; drops the rest', () => {
    const events = [
      rrweb(1, { type: 4, data: { href: 'https://x.test/', width: 1, height: 1 }, timestamp: 1 }),
      rrweb(2, { type: 2, data: { node: {} }, timestamp: 2 }),
      rrweb(3, { type: 3, data: { source: 2, type: 2, id: 12, x: 40, y: 50 }, timestamp: 3 }),
      rrweb(4, { type: 3, data: { source: 2, type: 1, id: 12, x: 40, y: 50 }, timestamp: 4 }),
      rrweb(5, {
        type: 3,
        data: { source: 0, adds: [], removes: [], texts: [], attributes: [] },
        timestamp: 5,
      }),
      rrweb(6, { type: 3, data: { source: 5, id: 3, text: '*', isChecked: false }, timestamp: 6 }),
      rrweb(7, { type: 3, data: { source: 3, id: 1, x: 0, y: 300 }, timestamp: 7 }),
      rrweb(8, { type: 3, data: { source: 1, positions: [] }, timestamp: 8 }),
      rrweb(9, { type: 3, data: { source: 2, type: 2, id: 12 }, timestamp: 9 }),
      { t: 10, type: 'nav', url: 'https://x.test/b' },
      { t: 11, type: 'error', message: 'boom', source: 'manual' },
      rrweb(12, null),
    ];
    expect(toInteractions(events)).toEqual([
      { t: 1, kind: 'navigation' },
      { t: 2, kind: 'navigation' },
      { t: 3, kind: 'click', x: 40, y: 50, nodeId: 12 },
      { t: 5, kind: 'mutation' },
      { t: 6, kind: 'mutation' },
      { t: 10, kind: 'navigation' },
    ]);
  });
});
