// Deterministic explanations of a session or one of its calls: its problems (detector findings,
// errors, failed requests, rage and dead clicks, poor vitals) with their evidence and evidence ids,
// the likely causes and what to try from the written tables of causes.ts, ranked. No model: a
// model only adds prose on top (the ai module), quoting the same evidence ids.

import type { DetectorKind } from '@svc/detectors';
import {
  type Cause,
  type CauseContext,
  detectorCauses,
  errorCauses,
  errorClass,
  INTERACTION_CAUSES,
  requestCauses,
  vitalCauses,
} from './causes.ts';
import { describeTarget, formatOffset, type TranscriptCall, type TranscriptSources } from './transcript.ts';

/** Severities, most severe first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
type Severity = (typeof SEVERITIES)[number];

/** A failed request this long before an error is told as its likely cause. */
const REQUEST_BEFORE_ERROR_MS = 5_000;

/** One problem of a session or call, explained. */
interface ExplainedProblem {
  /** The evidence id of its (first) entry in the transcript. */
  id: string;
  /** The detector kind, or `error`, `failed_request`, `rage_click`, `dead_click`, `poor_vital`. */
  kind: string;
  severity: Severity;
  title: string;
  t: string;
  offsetMs: number;
  /** How many times it happened in the session (an error repeated, a request failing again). */
  count: number;
  /** What was measured or recorded. */
  evidence: Record<string, unknown>;
  /** The transcript entries that support it: its own, then related ones (its call, ICE errors, a failed request before). */
  evidenceIds: string[];
  /** The call it happened in. */
  callId?: string;
  /** Likely causes, most likely first. */
  causes: Cause[];
}

/** The explanation of a session or a call. */
export interface Explanation {
  subject: { type: 'session' | 'call'; id: string; sessionId: string };
  /** One paragraph: how many problems, the worst and its most likely cause. */
  summary: string;
  problems: ExplainedProblem[];
}

function severityOf(value: string): Severity {
  return (SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : 'info';
}

function offset(sources: TranscriptSources, t: number): number {
  return Math.max(0, t - sources.session.startedAt);
}

/** What the cause rules know of the call a problem happened in. */
function callContext(
  sources: TranscriptSources,
  pc: string,
  kind: string,
): CauseContext & { row?: TranscriptCall; eventIds: string[] } {
  const row = sources.calls.find((call) => call.pc === pc);
  const callEvents = new Map<string, number>();
  const eventIds: string[] = [];
  for (const item of sources.items) {
    if (item.kind !== 'call' || (item.pc !== undefined && item.pc !== pc)) continue;
    callEvents.set(item.name, (callEvents.get(item.name) ?? 0) + 1);
    if (item.name === 'ice_candidate_error' || item.name === 'media_error' || item.name === 'ice_restart')
      eventIds.push(item.id);
  }
  const otherFindings = new Set(
    sources.findings
      .filter((finding) => finding.pc === pc && finding.kind !== kind)
      .map((finding) => finding.kind),
  );
  return {
    ...(row === undefined
      ? {}
      : { row, call: { relayed: row.relayed, networkType: row.networkType, protocol: row.protocol } }),
    callEvents,
    otherFindings,
    eventIds,
  };
}

/** Every detector kind's title (the type makes a new kind need one). */
const DETECTOR_TITLES: Record<DetectorKind, string> = {
  webrtc_connect_failure: 'The call never connected',
  webrtc_one_way_media: 'Media flowed one way only',
  webrtc_media_permission_denied: 'Camera or microphone permission denied',
  webrtc_device_unavailable: 'Camera or microphone unavailable',
  webrtc_freeze: 'Video froze',
  webrtc_audio_dropout: 'Audio dropped out',
  webrtc_reconnect_storm: 'The connection kept reconnecting',
  webrtc_call_abandoned: 'The call was abandoned',
  webrtc_packet_loss: 'Sustained packet loss',
  webrtc_high_latency: 'High latency',
  webrtc_cpu_limited: 'The encoder was CPU-limited',
  webrtc_low_resolution: 'Video resolution dropped',
  webrtc_relay_fallback: 'The call fell back to a TURN relay',
};

function findingProblems(sources: TranscriptSources, pcs?: ReadonlySet<string>): ExplainedProblem[] {
  return sources.findings
    .filter((finding) => pcs === undefined || pcs.has(finding.pc))
    .map((finding) => {
      const context = callContext(sources, finding.pc, finding.kind);
      const callId = finding.callId ?? context.row?.id;
      return {
        id: `finding:${finding.pc}:${finding.kind}`,
        kind: finding.kind,
        severity: severityOf(finding.severity),
        title: `${DETECTOR_TITLES[finding.kind as DetectorKind] ?? finding.kind}${finding.pc === '' ? '' : ` (call ${finding.pc})`}`,
        t: new Date(finding.t).toISOString(),
        offsetMs: offset(sources, finding.t),
        count: 1,
        evidence: { ...finding.evidence, ...(finding.track === null ? {} : { track: finding.track }) },
        evidenceIds: [
          `finding:${finding.pc}:${finding.kind}`,
          ...(callId === undefined || callId === null ? [] : [`call:${callId}`]),
          ...context.eventIds,
        ],
        ...(callId === undefined || callId === null ? {} : { callId }),
        causes: detectorCauses(finding.kind, finding.evidence, context),
      };
    });
}

function sessionProblems(sources: TranscriptSources): ExplainedProblem[] {
  const problems: ExplainedProblem[] = [];
  const errors = new Map<string, ExplainedProblem>();
  const requests = new Map<string, ExplainedProblem>();
  let lastFailedRequest:
    | { t: number; id: string; status?: number; failure?: string; url: string }
    | undefined;
  for (const item of sources.items) {
    switch (item.kind) {
      case 'request': {
        lastFailedRequest = {
          t: item.t,
          id: item.id,
          url: item.url,
          ...(item.status === undefined ? {} : { status: item.status }),
          ...(item.failure === undefined ? {} : { failure: item.failure }),
        };
        const key = `${item.method} ${item.url} ${item.status ?? item.failure ?? ''}`;
        const seen = requests.get(key);
        if (seen !== undefined) {
          seen.count += 1;
          continue;
        }
        const serverSide = item.status !== undefined && item.status >= 500;
        const problem: ExplainedProblem = {
          id: item.id,
          kind: 'failed_request',
          severity: serverSide || item.status === undefined ? 'medium' : 'low',
          title: `${item.method} ${item.url} failed${item.status === undefined ? '' : ` with HTTP ${item.status}`}`,
          t: new Date(item.t).toISOString(),
          offsetMs: offset(sources, item.t),
          count: 1,
          evidence: {
            method: item.method,
            url: item.url,
            ...(item.status === undefined ? {} : { status: item.status }),
            ...(item.failure === undefined ? {} : { failure: item.failure }),
            ...(item.durationMs === undefined ? {} : { durationMs: item.durationMs }),
          },
          evidenceIds: [item.id],
          causes: requestCauses(item),
        };
        requests.set(key, problem);
        problems.push(problem);
        continue;
      }
      case 'error': {
        const key = `${item.name}: ${item.message ?? ''}`;
        const seen = errors.get(key);
        if (seen !== undefined) {
          seen.count += 1;
          continue;
        }
        const before =
          lastFailedRequest !== undefined && item.t - lastFailedRequest.t <= REQUEST_BEFORE_ERROR_MS
            ? lastFailedRequest
            : undefined;
        const problem: ExplainedProblem = {
          id: item.id,
          kind: 'error',
          severity: item.source === 'console' || item.source === 'manual' ? 'medium' : 'high',
          title: `${item.name}${item.message === undefined ? '' : `: ${item.message}`}`,
          t: new Date(item.t).toISOString(),
          offsetMs: offset(sources, item.t),
          count: 1,
          evidence: {
            name: item.name,
            ...(item.message === undefined ? {} : { message: item.message }),
            ...(item.source === undefined ? {} : { source: item.source }),
            class: errorClass(item.name, item.message ?? ''),
          },
          evidenceIds: before === undefined ? [item.id] : [item.id, before.id],
          causes: errorCauses(item.name, item.message ?? '', {
            ...(before === undefined
              ? {}
              : {
                  failedRequestBefore: {
                    url: before.url,
                    ...(before.status === undefined ? {} : { status: before.status }),
                    ...(before.failure === undefined ? {} : { failure: before.failure }),
                  },
                }),
          }),
        };
        errors.set(key, problem);
        problems.push(problem);
        continue;
      }
      case 'rage_click':
        problems.push({
          id: item.id,
          kind: 'rage_click',
          severity: 'medium',
          title: `Rage clicks on ${describeTarget(item.element)}`,
          t: new Date(item.t).toISOString(),
          offsetMs: offset(sources, item.t),
          count: 1,
          evidence: {
            clicks: item.count,
            durationMs: item.endT - item.t,
            target: describeTarget(item.element),
          },
          evidenceIds: [item.id],
          causes: INTERACTION_CAUSES.rage_click,
        });
        continue;
      case 'click':
        if (item.dead !== true) continue;
        problems.push({
          id: item.id,
          kind: 'dead_click',
          severity: 'low',
          title: `A click on ${describeTarget(item.element)} did nothing`,
          t: new Date(item.t).toISOString(),
          offsetMs: offset(sources, item.t),
          count: 1,
          evidence: { target: describeTarget(item.element) },
          evidenceIds: [item.id],
          causes: INTERACTION_CAUSES.dead_click,
        });
        continue;
      case 'vital':
        if (item.rating !== 'poor') continue;
        problems.push({
          id: item.id,
          kind: 'poor_vital',
          severity: 'low',
          title: `Poor ${item.name}`,
          t: new Date(item.t).toISOString(),
          offsetMs: offset(sources, item.t),
          count: 1,
          evidence: { name: item.name, value: item.value, rating: item.rating },
          evidenceIds: [item.id],
          causes: vitalCauses(item.name),
        });
        continue;
      default:
        continue;
    }
  }
  return problems;
}

/** Problems, most severe first; then those with a confident cause; then in time order. */
function rank(problems: ExplainedProblem[]): ExplainedProblem[] {
  const confidence = (problem: ExplainedProblem) =>
    problem.causes[0] === undefined
      ? 3
      : ({ high: 0, medium: 1, low: 2 } as const)[problem.causes[0].confidence];
  return problems
    .map((problem, order) => ({ problem, order }))
    .sort(
      (a, b) =>
        SEVERITIES.indexOf(a.problem.severity) - SEVERITIES.indexOf(b.problem.severity) ||
        confidence(a.problem) - confidence(b.problem) ||
        a.problem.offsetMs - b.problem.offsetMs ||
        a.order - b.order,
    )
    .map(({ problem }) => problem);
}

function summarize(what: string, problems: readonly ExplainedProblem[]): string {
  if (problems.length === 0) {
    return `No problems in this ${what}: no detector finding, error, failed request, rage or dead click, or poor web vital.`;
  }
  const worst = problems[0] as ExplainedProblem;
  const bySeverity = SEVERITIES.map(
    (severity) => [severity, problems.filter((problem) => problem.severity === severity).length] as const,
  )
    .filter(([, count]) => count > 0)
    .map(([severity, count]) => `${count} ${severity}`)
    .join(', ');
  const cause = worst.causes[0];
  return `${problems.length} problem${problems.length === 1 ? '' : 's'} in this ${what} (${bySeverity}). The most severe: ${worst.title} at ${formatOffset(
    worst.offsetMs,
  )} [${worst.id}]${cause === undefined ? '.' : `; most likely ${cause.title.charAt(0).toLowerCase()}${cause.title.slice(1)} (${cause.confidence} confidence).`}`;
}

/**
 * The explanation of a session: every problem with its evidence and ranked causes.
 *
 * @example
 * ```ts
 * const explanation = explainSession(await readTranscriptSources(stores, log, project, sessionId));
 * explanation.problems[0].causes[0].title; // 'The STUN/TURN server could not be reached'
 * ```
 */
export function explainSession(sources: TranscriptSources): Explanation {
  const problems = rank([...findingProblems(sources), ...sessionProblems(sources)]);
  return {
    subject: { type: 'session', id: sources.session.id, sessionId: sources.session.id },
    summary: summarize('session', problems),
    problems,
  };
}

/**
 * The explanation of one call of a session: its findings (and the session-wide capture findings,
 * which concern every call), with causes read in the call's context. Undefined when the session has
 * no such call.
 */
export function explainCall(sources: TranscriptSources, callId: string): Explanation | undefined {
  const call = sources.calls.find((candidate) => candidate.id === callId);
  if (call === undefined) return undefined;
  const problems = rank(findingProblems(sources, new Set([call.pc, ''])));
  return {
    subject: { type: 'call', id: call.id, sessionId: sources.session.id },
    summary: summarize('call', problems),
    problems,
  };
}
