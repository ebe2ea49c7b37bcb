import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { formatReports, scoreChunk } from './score-calls.ts';

// The call chunk @svc/protocol builds from real Chromium 156 getStats() dumps: four two-peer
// calls (loopback, TURN relay, relay with ~10 % loss, relay squeezed to 300 kbit/s).
const recorded = JSON.parse(
  readFileSync(
    createRequire(import.meta.url).resolve('@svc/protocol/fixtures/valid/Chunk/call.json'),
    'utf8',
  ),
);

describe('scoreChunk on the recorded Chromium calls', () => {
  const result = scoreChunk(recorded);
  if (!result.success) throw new Error(result.error);
  const { reports } = result;

  it('scores every peer connection of the chunk', () => {
    expect(reports).toHaveLength(8);
    for (const report of reports) {
      expect(report.pc).toMatch(/^pc_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(report.samples).toBeGreaterThan(0);
      expect(report.score).toEqual(expect.any(Number));
    }
  });

  it('ranks clean calls above lossy ones, and the starved call last', () => {
    const clean = reports.filter((report) => (report.worstLossPct ?? 0) < 1);
    const lossy = reports.filter((report) => (report.worstLossPct ?? 0) >= 5);
    expect(clean).toHaveLength(4);
    expect(lossy).toHaveLength(4);
    const lowestClean = Math.min(...clean.map((report) => report.score ?? 0));
    const highestLossy = Math.max(...lossy.map((report) => report.score ?? 100));
    expect(lowestClean).toBeGreaterThanOrEqual(90);
    expect(highestLossy).toBeLessThanOrEqual(60);
    const frozen = reports.find((report) => (report.freezeMs ?? 0) > 1000);
    expect(frozen?.score).toBe(Math.min(...reports.map((report) => report.score ?? 100)));
  });

  it('tells relayed paths from direct ones', () => {
    expect(reports.filter((report) => report.relayed)).toHaveLength(6);
  });

  it('prints one row per peer connection', () => {
    const lines = formatReports(reports).split('\n');
    expect(lines).toHaveLength(1 + reports.length);
    expect(lines[0]).toMatch(/^peer connection\s+score/);
  });
});

describe('scoreChunk on bad input', () => {
  it('refuses a chunk that is not protocol v1, saying where', () => {
    const result = scoreChunk({ ...recorded, v: 2 });
    expect(result).toEqual({ success: false, error: expect.stringContaining('v') });
  });

  it('skips events of types it does not know and still scores', () => {
    const withFutureEvent = {
      ...recorded,
      events: [...recorded.events, { t: recorded.sentAt, type: 'future.thing' }],
    };
    const result = scoreChunk(withFutureEvent);
    expect(result.success && result.skippedEvents).toBe(1);
    expect(result.success && result.reports).toHaveLength(8);
  });
});
