import { type ChunkInput, parseChunk } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { summarizeChunk } from './chunk-summary.ts';

const base = { v: 1, sessionId: 'ses_01KAJBCH80XTQ0YDPAV81S476S', seq: 3, sentAt: 1763700090000 } as const;

function summarize(input: ChunkInput) {
  const result = parseChunk(input);
  if (!result.success) throw new Error(result.error.message);
  return summarizeChunk(result.chunk, result.skipped);
}

describe('summarizeChunk', () => {
  it('finds signals at their positions in the chunk as sent, unknown events included', () => {
    const summary = summarize({
      ...base,
      events: [
        { t: 1763700001000, type: 'future.thing' } as never,
        {
          t: 1763700002000,
          type: 'custom',
          name: 'checkout_failed',
          severity: 'critical',
          props: { step: 3 },
        },
        { t: 1763700003000, type: 'custom', name: 'no_severity' },
        { t: 1763700004000, type: 'error', message: 'boom', source: 'manual' },
        { t: 1763700000500, type: 'identify', user: { id: 'u_1', email: 'a@example.com' } },
        { t: 1763700005000, type: 'trigger', name: 'webrtc:freeze' },
      ],
    });
    expect(
      summary.signals.map((signal) => [signal.eventIndex, signal.kind, signal.severity, signal.name]),
    ).toEqual([
      [1, 'custom', 'critical', 'checkout_failed'],
      [2, 'custom', undefined, 'no_severity'],
      [3, 'error', 'high', 'Error'],
      [5, 'trigger', 'info', 'webrtc:freeze'],
    ]);
    expect(summary).toMatchObject({
      eventCount: 5,
      customCount: 2,
      firstEventAt: 1763700000500,
      lastEventAt: 1763700005000,
      sessionStart: 1763700000500,
      sessionEnd: 1763700005000,
      errorCount: 1,
      level: 'critical',
      user: { source: 'identify', user: { id: 'u_1', email: 'a@example.com' } },
    });
  });

  it('raises no level for custom events without a severity', () => {
    const summary = summarize({ ...base, events: [{ t: 1763700003000, type: 'custom', name: 'clicked' }] });
    expect(summary.signals).toHaveLength(1);
    expect(summary.customCount).toBe(1);
    expect(summary.level).toBeUndefined();
  });

  it('links a traced request by its trace id, without a severity; an untraced request is no signal', () => {
    const request = {
      type: 'request',
      initiator: 'fetch',
      method: 'GET',
      url: 'https://api.example.com/cart',
      durationMs: 12,
    } as const;
    const summary = summarize({
      ...base,
      events: [
        { t: 1763700001000, ...request, status: 200 },
        { t: 1763700002000, ...request, failure: 'network', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' },
      ],
    });
    expect(summary.signals).toEqual([
      {
        eventIndex: 1,
        t: 1763700002000,
        kind: 'trace',
        severity: undefined,
        name: '4bf92f3577b34da6a3ce929d0e0e4736',
        message: null,
        details: {
          initiator: 'fetch',
          method: 'GET',
          url: 'https://api.example.com/cart',
          durationMs: 12,
          failure: 'network',
        },
      },
    ]);
    expect(summary.level).toBeUndefined();
    expect(summary.errorCount).toBe(0);
  });

  it('starts an empty chunk at sentAt and raises no level', () => {
    const summary = summarize({ ...base, events: [] });
    expect(summary).toMatchObject({
      eventCount: 0,
      sessionStart: base.sentAt,
      sessionEnd: base.sentAt,
      signals: [],
    });
    expect(summary.level).toBeUndefined();
    expect(summary.firstEventAt).toBeUndefined();
  });
});
