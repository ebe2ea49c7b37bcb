import { createRequire } from 'node:module';
import { DETECTOR_KINDS, detect } from '@svc/detectors';
import { describe, expect, it } from 'vitest';
import { detectorCauses } from './causes.ts';
import { explainCall, explainSession } from './explain.ts';
import { createTimelineBuilder } from './timeline.ts';
import { buildTranscript, type TranscriptSources } from './transcript.ts';

// Explanations of every detector kind, on the detectors' own known-answer vectors (the inputs
// native ports reproduce): the findings `detect()` makes of each vector are explained with their
// evidence and ranked causes, read in the context of the vector's call events.

interface Vector {
  name: string;
  items: Array<Record<string, unknown>>;
  expected: Array<{ kind: string }>;
}

const vectors = (
  createRequire(import.meta.url)('@svc/detectors/vectors/detectors-v1.json') as { cases: Vector[] }
).cases;

const T0 = 1_763_700_000_000;

/** The sources of a session made of a vector's call items, with the findings `detect()` makes of them. */
function sourcesOf(vector: Vector): TranscriptSources {
  const items: Array<Record<string, unknown> & { t: number }> = vector.items.map((item) => ({
    ...item,
    t: item.t as number,
    type: item.type ?? 'call.sample',
  }));
  const builder = createTimelineBuilder({});
  builder.push(0, items);
  const findings = detect(items as never);
  const pcs = [
    ...new Set(findings.map((finding) => finding.pc).filter((pc): pc is string => pc !== undefined)),
  ];
  const startedAt = Math.min(T0, ...items.map((item) => item.t));
  return {
    session: {
      id: 'ses_01JVECTORVECTORVECTORVECTOR',
      startedAt,
      durationMs: 60_000,
      url: 'https://app.test/call',
      browserName: 'Chrome',
      browserVersion: '131',
      osName: 'macOS',
      osVersion: null,
      device: 'desktop',
      viewportWidth: null,
      viewportHeight: null,
      release: null,
      environment: null,
      userId: null,
      recordingMode: 'always',
    },
    items: builder.finish(),
    errorFrames: new Map(),
    calls: pcs.map((pc, index) => ({
      id: `call_01JVECTORVECTORVECTORVECT${index}`,
      pc,
      startedAt,
      qualityScore: 70,
      setupMs: 800,
      relayed: vector.items.some(
        (item) => item.relayed === true || (item.conn as { relayed?: boolean })?.relayed === true,
      ),
      networkType: 'wifi',
      protocol: 'udp',
      failedToConnect: findings.some(
        (finding) => finding.kind === 'webrtc_connect_failure' && finding.pc === pc,
      ),
      failureReason: null,
      durationMs: 60_000,
    })),
    findings: findings.map((finding) => ({
      pc: finding.pc ?? '',
      kind: finding.kind,
      severity: finding.severity,
      t: finding.t,
      track: finding.track ?? null,
      callId: null,
      evidence: finding.evidence,
    })),
    missing: [],
  };
}

describe('explanations of detector findings', () => {
  const explained = vectors
    .filter((vector) => vector.expected.length > 0)
    .map((vector) => ({ vector, sources: sourcesOf(vector) }));

  it('covers every detector kind with a vector', () => {
    const kinds = new Set(
      explained.flatMap(({ sources }) => sources.findings.map((finding) => finding.kind)),
    );
    expect([...kinds].sort()).toEqual([...DETECTOR_KINDS].sort());
    // And the table has causes for each, even without evidence.
    for (const kind of DETECTOR_KINDS) expect(detectorCauses(kind, {}, {}).length, kind).toBeGreaterThan(0);
  });

  it.each(explained.map(({ vector, sources }) => [vector.name, sources] as const))(
    '%s: every finding is a problem with its evidence, evidence ids and ranked causes',
    (_name, sources) => {
      const explanation = explainSession(sources);
      for (const finding of sources.findings) {
        const problem = explanation.problems.find(
          (candidate) => candidate.id === `finding:${finding.pc}:${finding.kind}`,
        );
        expect(problem, finding.kind).toBeDefined();
        expect(problem?.severity).toBe(finding.severity);
        expect(problem?.evidence).toMatchObject(finding.evidence);
        expect(problem?.causes.length).toBeGreaterThan(0);
        const ranks =
          problem?.causes.map((cause) => ({ high: 0, medium: 1, low: 2 })[cause.confidence]) ?? [];
        expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
        for (const cause of problem?.causes ?? []) {
          expect(cause.title.length).toBeGreaterThan(0);
          expect(cause.tryThis.length).toBeGreaterThan(0);
        }
        // Every evidence id names an entry of the session's transcript.
        const transcript = buildTranscript(sources);
        const ids = new Set(transcript.entries.flatMap((entry) => [entry.id, ...(entry.repeatIds ?? [])]));
        for (const id of problem?.evidenceIds ?? [])
          if (!id.startsWith('call:')) expect(ids.has(id), id).toBe(true);
      }
      // Most severe first.
      const order = ['critical', 'high', 'medium', 'low', 'info'];
      const severities = explanation.problems.map((problem) => order.indexOf(problem.severity));
      expect(severities).toEqual([...severities].sort((a, b) => a - b));
    },
  );

  it('reads causes in context: ICE errors point a connect failure at TURN reachability', () => {
    const vector = vectors.find(
      (candidate) =>
        candidate.expected.some((finding) => finding.kind === 'webrtc_connect_failure') &&
        candidate.items.some((item) => item.name === 'ice_candidate_error'),
    );
    const plain = vectors.find(
      (candidate) =>
        candidate.expected.some((finding) => finding.kind === 'webrtc_connect_failure') &&
        !candidate.items.some((item) => item.name === 'ice_candidate_error'),
    );
    expect(plain).toBeDefined();
    const top = (sources: TranscriptSources) =>
      explainSession(sources).problems.find((problem) => problem.kind === 'webrtc_connect_failure')?.causes[0]
        ?.id;
    expect(top(sourcesOf(plain as Vector))).not.toBe('turn_unreachable');
    // A vector with ICE errors, or the plain one with one added: the STUN/TURN server comes first.
    const withErrors =
      vector ??
      ({
        ...(plain as Vector),
        items: [
          ...(plain as Vector).items,
          {
            t: ((plain as Vector).items[0]?.t as number) + 10,
            type: 'call.event',
            pc: (plain as Vector).items.find((item) => typeof item.pc === 'string')?.pc,
            name: 'ice_candidate_error',
            errorCode: 701,
          },
        ].sort((a, b) => (a.t as number) - (b.t as number)),
      } as Vector);
    expect(top(sourcesOf(withErrors))).toBe('turn_unreachable');
  });

  it('explains one call apart, and says when a call has no problem', () => {
    const vector = explained.find(({ sources }) => sources.calls.length > 0) as {
      sources: TranscriptSources;
    };
    const call = vector.sources.calls[0] as TranscriptSources['calls'][number];
    const explanation = explainCall(vector.sources, call.id);
    expect(explanation?.subject).toEqual({ type: 'call', id: call.id, sessionId: vector.sources.session.id });
    expect(
      explanation?.problems.every(
        (problem) => problem.id.startsWith(`finding:${call.pc}:`) || problem.id.startsWith('finding::'),
      ),
    ).toBe(true);
    expect(explainCall(vector.sources, 'call_01JNOSUCHCALLNOSUCHCALLNOS')).toBeUndefined();
    const quiet = explainSession({ ...vector.sources, findings: [], items: [] });
    expect(quiet.problems).toEqual([]);
    expect(quiet.summary).toMatch(/^No problems in this session/);
  });
});
