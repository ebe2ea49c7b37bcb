import { type CallSample, type Chunk, parseChunk } from '@svc/protocol';
import { scoreCall } from '@svc/quality-score';

/** What one peer connection of a chunk looked like, scored the way the server scores it. */
export interface PeerConnectionReport {
  pc: string;
  /** `call.sample`s seen for this peer connection. */
  samples: number;
  /** Media time covered by the samples, ms. */
  coveredMs: number;
  /** `scoreCall` of the samples: 0..100, or null when nothing was scorable. */
  score: number | null;
  relayed: boolean;
  /** Worst `lossPct` of any track in any sample, when reported. */
  worstLossPct?: number;
  /** Total `freezeMs` of inbound video, when reported. */
  freezeMs?: number;
}

export type ScoreChunkResult =
  | { success: true; reports: PeerConnectionReport[]; skippedEvents: number }
  | { success: false; error: string };

function isCallSample(event: Chunk['events'][number]): event is CallSample {
  return event.type === 'call.sample';
}

/**
 * Validates an ingest chunk (already inflated and `JSON.parse`d) and scores each peer
 * connection's samples with `scoreCall`: what the server does for every chunk it indexes.
 */
export function scoreChunk(input: unknown): ScoreChunkResult {
  const result = parseChunk(input);
  if (!result.success) return { success: false, error: result.error.message };

  const samplesByPeerConnection = new Map<string, CallSample[]>();
  for (const event of result.chunk.events) {
    if (!isCallSample(event)) continue;
    const samples = samplesByPeerConnection.get(event.pc) ?? [];
    samples.push(event);
    samplesByPeerConnection.set(event.pc, samples);
  }

  const reports = [...samplesByPeerConnection].map(([pc, samples]): PeerConnectionReport => {
    const report: PeerConnectionReport = {
      pc,
      samples: samples.length,
      coveredMs: samples.reduce((total, sample) => total + sample.windowMs, 0),
      score: scoreCall(samples),
      relayed: samples.some((sample) => sample.conn.relayed === true),
    };
    const losses = samples.flatMap((sample) => sample.tracks.flatMap((track) => track.lossPct ?? []));
    if (losses.length > 0) report.worstLossPct = Math.max(...losses);
    const freezes = samples.flatMap((sample) =>
      sample.tracks.flatMap((track) =>
        track.kind === 'video' && track.dir === 'in' ? (track.freezeMs ?? []) : [],
      ),
    );
    if (freezes.length > 0) report.freezeMs = freezes.reduce((total, value) => total + value, 0);
    return report;
  });
  return { success: true, reports, skippedEvents: result.skipped.length };
}

/** A fixed-width table of the reports, for the command line. */
export function formatReports(reports: readonly PeerConnectionReport[]): string {
  const header = ['peer connection', 'score', 'samples', 'covered', 'path', 'worst loss', 'frozen'];
  const rows = reports.map((report) => [
    report.pc,
    report.score === null ? 'n/a' : String(report.score),
    String(report.samples),
    `${(report.coveredMs / 1000).toFixed(1)} s`,
    report.relayed ? 'relay' : 'direct',
    report.worstLossPct === undefined ? '-' : `${report.worstLossPct.toFixed(1)} %`,
    report.freezeMs === undefined ? '-' : `${report.freezeMs} ms`,
  ]);
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  return [header, ...rows]
    .map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '))
    .join('\n');
}
