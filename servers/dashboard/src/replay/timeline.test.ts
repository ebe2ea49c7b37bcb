import { describe, expect, it } from 'vitest';
import { replayParameters } from './parameters.ts';
import { currentMarker, gapAt, gapsOf, type Marker, markerOf, mergeMarkers } from './timeline.ts';
import type { SessionDetail } from './types.ts';

const START = Date.UTC(2026, 10, 25, 8);
const at = (offset: number) => new Date(START + offset).toISOString();

const chunk = (seq: number, from: number, to: number) => ({
  seq,
  sizeBytes: 100,
  eventCount: 10,
  firstEventAt: at(from),
  lastEventAt: at(to),
  receivedAt: at(to + 500),
});

const detail = (changes: Partial<SessionDetail>): SessionDetail => ({
  id: 'ses_01KAJBCH80XTQ0YDPAV81S476S',
  startedAt: at(0),
  lastEventAt: at(60_000),
  durationMs: 60_000,
  errorCount: 0,
  chunks: [],
  gaps: [],
  ...changes,
});

describe('gapsOf', () => {
  it('draws missing chunks from the end of the chunk before to the start of the chunk after', () => {
    const gaps = gapsOf(
      detail({
        chunks: [chunk(0, 0, 9_000), chunk(3, 31_000, 40_000)],
        gaps: [{ kind: 'missing', fromSeq: 1, toSeq: 2 }],
      }),
    );
    expect(gaps).toEqual([
      { key: 'missing:1', from: 9_000, to: 31_000, reason: 'chunks 1–2 of the recording never arrived' },
    ]);
    expect(gapAt(gaps, 8_999)).toBeUndefined();
    expect(gapAt(gaps, 9_000)?.key).toBe('missing:1');
    expect(gapAt(gaps, 31_000)).toBeUndefined();
  });

  it('names the SDK’s reasons in words, keeps unknown ones, clips to the session and sorts', () => {
    const gaps = gapsOf(
      detail({
        chunks: [chunk(0, 0, 60_000)],
        gaps: [
          { kind: 'sdk', fromT: at(50_000), toT: at(90_000), reason: 'hidden' },
          { kind: 'sdk', fromT: at(10_000), toT: at(20_000), reason: 'something-new' },
          { kind: 'sdk', fromT: at(30_000), toT: at(30_000), reason: 'offline' },
        ],
      }),
    );
    expect(gaps.map(({ from, to, reason }) => [from, to, reason])).toEqual([
      [10_000, 20_000, 'something-new'],
      [50_000, 60_000, 'the tab was in the background'],
    ]);
  });

  it('runs a missing first chunk from the start, and a missing chunk without a successor to the end', () => {
    const gaps = gapsOf(
      detail({ chunks: [chunk(1, 5_000, 20_000)], gaps: [{ kind: 'missing', fromSeq: 0, toSeq: 0 }] }),
    );
    expect(gaps).toEqual([
      { key: 'missing:0', from: 0, to: 5_000, reason: 'chunk 0 of the recording never arrived' },
    ]);
  });
});

describe('markers', () => {
  it('marks navigation, clicks, errors, custom and call events, not the rest', () => {
    const click = { t: START + 1_000, type: 'rrweb', data: { type: 3, data: { source: 2, type: 2 } } };
    const move = { t: START + 1_000, type: 'rrweb', data: { type: 3, data: { source: 1 } } };
    expect(markerOf(click, 0, 4, START)).toEqual({
      key: '0:4',
      kind: 'click',
      offset: 1_000,
      label: 'Click',
    });
    expect(markerOf(move, 0, 5, START)).toBeUndefined();
    expect(markerOf({ t: START, type: 'vital', name: 'LCP' }, 0, 6, START)).toBeUndefined();
    expect(
      markerOf({ t: START + 2, type: 'error', name: 'TypeError', message: 'x is undefined' }, 1, 0, START)
        ?.label,
    ).toBe('TypeError: x is undefined');
    expect(markerOf({ t: START, type: 'error', message: '' }, 1, 1, START)?.label).toBe('Error');
    expect(markerOf({ t: START, type: 'call.event', name: 'ice_restart' }, 1, 2, START)?.kind).toBe('call');
    expect(markerOf({ t: START, type: 'nav', url: 'https://app.example.com/a' }, 1, 3, START)?.label).toBe(
      'https://app.example.com/a',
    );
  });

  it('marks requests, those without an answer or with an error status as failed', () => {
    const request = {
      t: START + 500,
      type: 'request',
      initiator: 'fetch',
      method: 'POST',
      url: 'https://api.example.com/orders',
    };
    expect(markerOf({ ...request, status: 201, durationMs: 42 }, 2, 0, START)).toEqual({
      key: '2:0',
      kind: 'request',
      offset: 500,
      label: 'POST https://api.example.com/orders → 201 in 42 ms',
    });
    expect(markerOf({ ...request, status: 503, durationMs: 9 }, 2, 1, START)?.kind).toBe('failed_request');
    expect(markerOf({ ...request, status: 404 }, 2, 2, START)?.kind).toBe('failed_request');
    expect(markerOf({ ...request, failure: 'network', durationMs: 3 }, 2, 3, START)).toMatchObject({
      kind: 'failed_request',
      label: 'POST https://api.example.com/orders → network in 3 ms',
    });
  });

  it('merges sources once per event, in time order, a click before what it caused', () => {
    const marker = (key: string, kind: Marker['kind'], offset: number): Marker => ({
      key,
      kind,
      offset,
      label: key,
    });
    const merged = mergeMarkers(
      [marker('0:9', 'error', 500), marker('0:1', 'nav', 0)],
      [marker('0:8', 'click', 500), marker('0:9', 'error', 500), marker('1:0', 'custom', 900)],
    );
    expect(merged.map((item) => item.key)).toEqual(['0:1', '0:8', '0:9', '1:0']);
    expect(currentMarker(merged, 499)?.key).toBe('0:1');
    expect(currentMarker(merged, 500)?.key).toBe('0:9');
    expect(currentMarker(merged, -1)).toBeUndefined();
  });
});

describe('replayParameters', () => {
  it.each([
    ['', { offset: 0, skipInactive: true }],
    ['t=1234', { offset: 1234, skipInactive: true }],
    ['t=-5&skipInactivity=1', { offset: 0, skipInactive: true }],
    ['t=nope&skipInactivity=0', { offset: 0, skipInactive: false }],
    ['skipInactivity=false', { offset: 0, skipInactive: false }],
  ])('?%s', (query, expected) => {
    expect(replayParameters(new URLSearchParams(query))).toEqual(expected);
  });
});
