import { describe, expect, it } from 'vitest';
import type { FlatEvent } from '../replay/types.ts';
import {
  allSpans,
  currentRequest,
  filterRequests,
  formatBytes,
  outcomeOf,
  requestsOf,
  type SpanNode,
  type TraceTree,
  waterfallRows,
} from './network.ts';

const START = Date.UTC(2026, 10, 25, 8);

const flat = (seq: number, index: number, event: Record<string, unknown>): FlatEvent => ({
  seq,
  index,
  event: { t: START, type: 'request', ...event } as FlatEvent['event'],
});

const EVENTS: FlatEvent[] = [
  flat(0, 0, { t: START + 100, type: 'nav', url: 'https://shop.example.com/' }),
  flat(0, 1, {
    t: START + 3_000,
    initiator: 'xhr',
    method: 'POST',
    url: 'https://api.example.com/orders',
    status: 500,
    durationMs: 84,
    requestBytes: 120,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  }),
  flat(0, 2, {
    t: START + 1_000,
    initiator: 'fetch',
    method: 'GET',
    url: 'https://api.example.com/cart',
    status: 200,
    durationMs: 12,
    responseBytes: 2048,
  }),
  flat(1, 0, {
    t: START + 5_000,
    initiator: 'fetch',
    method: 'GET',
    url: 'https://cdn.example.com/a.js',
    durationMs: 3_000,
    failure: 'timeout',
  }),
];

describe('requestsOf', () => {
  it('keeps the request events, by start time, as offsets from the session start, failures marked', () => {
    const rows = requestsOf(EVENTS, START);
    expect(rows.map((row) => [row.key, row.offset, row.method, row.initiator, row.failed])).toEqual([
      ['0:2', 1_000, 'GET', 'fetch', false],
      ['0:1', 3_000, 'POST', 'xhr', true],
      ['1:0', 5_000, 'GET', 'fetch', true],
    ]);
    expect(rows[1]).toMatchObject({
      status: 500,
      requestBytes: 120,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
    expect(rows[2]).toMatchObject({ status: undefined, failure: 'timeout' });
  });

  it('says the outcome in words, not only by colour', () => {
    expect(requestsOf(EVENTS, START).map(outcomeOf)).toEqual([
      '200',
      'Failed: 500',
      'Failed: no answer (timeout)',
    ]);
  });
});

describe('filterRequests and currentRequest', () => {
  const rows = requestsOf(EVENTS, START);

  it('filters by failure and by initiator', () => {
    const keys = (filter: Parameters<typeof filterRequests>[1]) =>
      filterRequests(rows, filter).map((row) => row.key);
    expect(keys('all')).toEqual(['0:2', '0:1', '1:0']);
    expect(keys('failed')).toEqual(['0:1', '1:0']);
    expect(keys('fetch')).toEqual(['0:2', '1:0']);
    expect(keys('xhr')).toEqual(['0:1']);
  });

  it('finds the last request started at or before the player time', () => {
    expect(currentRequest(rows, 999)).toBeUndefined();
    expect(currentRequest(rows, 1_000)?.key).toBe('0:2');
    expect(currentRequest(rows, 4_999)?.key).toBe('0:1');
    expect(currentRequest(rows, 60_000)?.key).toBe('1:0');
  });
});

it('formats sizes', () => {
  expect([undefined, 0, 1023, 2048, 3 * 1024 * 1024].map(formatBytes)).toEqual([
    '–',
    '0 B',
    '1023 B',
    '2.0 KB',
    '3.0 MB',
  ]);
});

describe('waterfallRows', () => {
  const at = (offset: number) => new Date(START + offset).toISOString();
  const span = (spanId: string, from: number, durationMs: number, children: SpanNode[] = []): SpanNode => ({
    spanId,
    parentSpanId: null,
    name: `span ${spanId}`,
    kind: 'server',
    service: 'api',
    startTime: at(from),
    endTime: at(from + durationMs),
    durationMs,
    status: { code: 'unset', message: null },
    attributes: {},
    children,
  });
  const tree: TraceTree = {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    startTime: at(0),
    durationMs: 200,
    spanCount: 4,
    errorCount: 0,
    roots: [span('a', 0, 200, [span('b', 50, 100, [span('c', 60, 20)])]), span('d', 150, 80)],
    logs: [],
  };

  it('lists spans depth first with their level and bars relative to the trace', () => {
    const rows = waterfallRows(tree, new Set());
    expect(rows.map((row) => [row.span.spanId, row.level, row.parent, row.start, row.width])).toEqual([
      ['a', 1, undefined, 0, 1],
      ['b', 2, 'a', 0.25, 0.5],
      ['c', 3, 'b', 0.3, 0.1],
      // Past the trace's end (a clock skew): the bar stops at the end.
      ['d', 1, undefined, 0.75, 0.25],
    ]);
    expect(rows.map((row) => row.hasChildren)).toEqual([true, true, false, false]);
    expect(allSpans(tree).map((node) => node.spanId)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('leaves out what is under a collapsed span', () => {
    const rows = waterfallRows(tree, new Set(['b']));
    expect(rows.map((row) => [row.span.spanId, row.expanded])).toEqual([
      ['a', true],
      ['b', false],
      ['d', true],
    ]);
    expect(waterfallRows(tree, new Set(['a'])).map((row) => row.span.spanId)).toEqual(['a', 'd']);
  });

  it('keeps every bar inside the trace, whatever the spans say', () => {
    for (const [from, duration] of [
      [-50, 10],
      [0, 0],
      [190, 500],
      [400, 10],
    ] as const) {
      const [row] = waterfallRows({ ...tree, roots: [span('x', from, duration)] }, new Set());
      expect(row?.start).toBeGreaterThanOrEqual(0);
      expect(row?.width).toBeGreaterThanOrEqual(0);
      expect((row?.start ?? 0) + (row?.width ?? 0)).toBeLessThanOrEqual(1);
    }
  });
});
