import { SEVERITY_BY_KIND } from '@svc/detectors';
import { deviceClassSchema, severitySchema } from '@svc/protocol';
import { z } from 'zod';
import type { Call, CallFinding, CallItem, CallTrack } from '../../platform/database/tables/calls.table.ts';
import { nameAndVersion, nameAndVersionSchema, optional } from '../../platform/http/views.ts';
import type { CallOverview } from './call-queries.ts';

// The API's views of calls. Times are ISO 8601 strings in lists and epoch milliseconds inside
// series (arrays of numbers); what is unknown is omitted, never null, except inside series, where
// `null` marks a sample that lacked the metric so that every array stays aligned with `t`.

/** A finding in a call list item: the detector kind and its severity. */
const callIssueSchema = z.object({ kind: z.string(), severity: severitySchema });

/** An element of `GET /v1/calls` and `GET /v1/sessions/{id}/calls`. */
export const callSummarySchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  /** The peer connection's id in the session (`pc_…`). */
  pc: z.string(),
  startedAt: z.iso.datetime(),
  endedAt: z.iso.datetime().optional(),
  durationMs: z.int().min(0).optional(),
  /** `open` until `pc_closed`, or until the session sent nothing about the call for the inactivity timeout. */
  state: z.enum(['open', 'closed']),
  endReason: z.enum(['closed', 'inactive']).optional(),
  /** `pc_created` to the first `connected` connection state, ms. */
  setupMs: z.int().min(0).optional(),
  connected: z.boolean(),
  /** Never connected, and `webrtc_connect_failure` fired (state `failed`, or no `connected` in time). */
  failedToConnect: z.boolean(),
  /** `ice_candidate_error_<code>`, `ice_failed` or `connect_timeout`, for calls that failed to connect. */
  failureReason: z.string().optional(),
  /** The selected path went through a TURN relay at some point. */
  relayed: z.boolean(),
  candidateTypes: z.object({ local: z.array(z.string()), remote: z.array(z.string()) }),
  protocol: z.string().optional(),
  /** The last network type reported (`wifi`, `cellular`, `ethernet`, `vpn`, `unknown`). */
  networkType: z.string().optional(),
  /** `scoreCall` of the call's samples, 0..100; omitted when no sample could be scored. */
  qualityScore: z.int().min(0).max(100).optional(),
  /** The video codec when the call had video, else the audio codec. */
  codec: z.string().optional(),
  codecs: z.array(z.string()),
  browser: nameAndVersionSchema.optional(),
  os: nameAndVersionSchema.optional(),
  device: deviceClassSchema.optional(),
  release: z.string().optional(),
  environment: z.string().optional(),
  /** The session's user id. */
  endUser: z.string().optional(),
  sampleCount: z.int().min(0),
  trackCount: z.int().min(0),
  /** The detectors' findings on this call. */
  issues: z.array(callIssueSchema),
  /** At least one finding of severity low or higher (`webrtc_relay_fallback` is info only). */
  hasIssue: z.boolean(),
});
export type CallSummaryView = z.infer<typeof callSummarySchema>;

const seriesSchema = z.record(z.string(), z.array(z.union([z.number(), z.string(), z.boolean(), z.null()])));

/** A finding with its evidence. */
const callFindingSchema = z.object({
  kind: z.string(),
  severity: severitySchema,
  t: z.iso.datetime(),
  track: z.string().optional(),
  evidence: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
});

/** `GET /v1/calls/{id}`: the summary, per-track series, connection series, event markers, findings. */
export const callDetailSchema = callSummarySchema.extend({
  /**
   * One entry per track: `series.t` (window ends, epoch ms), `series.windowMs`, and one array per
   * metric the track reported at least once (PROTOCOL.md §2 names), `null` where a sample lacked it.
   */
  tracks: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      dir: z.string(),
      sampleCount: z.int().min(0),
      series: seriesSchema,
    }),
  ),
  /** Per sample of the call: `t`, `windowMs`, `score` (scoreSample), `state`, `relayed`, `network`. */
  connection: seriesSchema,
  /** The call's `call.event` items in time order: `{ t, name, ...fields }`, and where they are. */
  events: z.array(
    z.looseObject({ t: z.number(), name: z.string(), seq: z.int().min(0), index: z.int().min(0) }),
  ),
  findings: z.array(callFindingSchema),
});
export type CallDetailView = z.infer<typeof callDetailSchema>;

const breakdownSchema = z.array(
  z.object({
    /** The group's value; omitted for calls that do not report it. */
    key: z.string().optional(),
    calls: z.int().min(0),
    failedToConnect: z.int().min(0),
    connectFailureRate: z.number().min(0).max(1),
    relayRate: z.number().min(0).max(1),
    averageQuality: z.number().optional(),
  }),
);

/** `GET /v1/calls/overview`. */
export const callOverviewSchema = z.object({
  from: z.iso.datetime().optional(),
  to: z.iso.datetime().optional(),
  calls: z.int().min(0),
  failedToConnect: z.int().min(0),
  /** failedToConnect / calls (0 without calls). */
  connectFailureRate: z.number().min(0).max(1),
  relayed: z.int().min(0),
  /** relayed / calls (0 without calls). */
  relayRate: z.number().min(0).max(1),
  /** Setup time percentiles over the calls that connected with a known setup time, ms. */
  setupMs: z.object({
    count: z.int().min(0),
    p50: z.number().optional(),
    p90: z.number().optional(),
    p99: z.number().optional(),
  }),
  /** Ten buckets of the quality score: [0,10), [10,20), ..., [90,100] (100 is in the last). */
  qualityDistribution: z.array(z.object({ from: z.int(), to: z.int(), calls: z.int().min(0) })),
  topFailureReasons: z.array(z.object({ reason: z.string(), calls: z.int().min(0) })),
  breakdowns: z.object({
    networkType: breakdownSchema,
    browser: breakdownSchema,
    device: breakdownSchema,
    release: breakdownSchema,
  }),
});
export type CallOverviewView = z.infer<typeof callOverviewSchema>;

function severityOf(kind: string) {
  const severity = severitySchema.safeParse(SEVERITY_BY_KIND[kind as keyof typeof SEVERITY_BY_KIND]);
  return severity.success ? severity.data : 'info';
}

export function toCallSummary(call: Call): CallSummaryView {
  const device = deviceClassSchema.safeParse(call.device);
  return {
    id: call.id,
    sessionId: call.session_id,
    pc: call.pc,
    startedAt: call.started_at.toISOString(),
    endedAt: call.ended_at?.toISOString(),
    durationMs: optional(call.duration_ms),
    state: call.state,
    endReason: optional(call.end_reason),
    setupMs: optional(call.setup_ms),
    connected: call.connected,
    failedToConnect: call.failed_to_connect,
    failureReason: optional(call.failure_reason),
    relayed: call.relayed,
    candidateTypes: { local: call.local_types, remote: call.remote_types },
    protocol: optional(call.protocol),
    networkType: optional(call.network_type),
    qualityScore: optional(call.quality_score),
    codec: optional(call.codec),
    codecs: call.codecs,
    browser: nameAndVersion(call.browser_name, call.browser_version),
    os: nameAndVersion(call.os_name, call.os_version),
    device: device.success ? device.data : undefined,
    release: optional(call.release),
    environment: optional(call.environment),
    endUser: optional(call.end_user_id),
    sampleCount: call.sample_count,
    trackCount: call.track_count,
    issues: call.issue_kinds.map((kind) => ({ kind, severity: severityOf(kind) })),
    hasIssue: call.has_issue,
  };
}

function toCallFinding(finding: CallFinding) {
  return {
    kind: finding.kind,
    severity: severitySchema.catch('info').parse(finding.severity),
    t: finding.t.toISOString(),
    track: optional(finding.track),
    evidence: finding.evidence as Record<string, number | string | boolean>,
  };
}

export function toCallDetail(detail: {
  call: Call;
  tracks: CallTrack[];
  events: Pick<CallItem, 'seq' | 'event_index' | 'item'>[];
  findings: CallFinding[];
}): CallDetailView {
  return {
    ...toCallSummary(detail.call),
    tracks: detail.tracks.map((track) => ({
      id: track.track_id,
      kind: track.kind,
      dir: track.dir,
      sampleCount: track.sample_count,
      series: track.series as Record<string, Array<number | string | boolean | null>>,
    })),
    connection: detail.call.series as Record<string, Array<number | string | boolean | null>>,
    events: detail.events.map((row) => {
      const {
        type: _type,
        pc: _pc,
        ...fields
      } = row.item as { t: number; name: string; type?: string; pc?: string };
      return { ...fields, seq: row.seq, index: row.event_index };
    }),
    findings: detail.findings.map(toCallFinding),
  };
}

const rate = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

export function toCallOverview(overview: CallOverview, range: { from?: Date; to?: Date }): CallOverviewView {
  const breakdown = (rows: CallOverview['breakdowns']['browser']) =>
    rows.map((row) => ({
      key: optional(row.key),
      calls: row.calls,
      failedToConnect: row.failedToConnect,
      connectFailureRate: rate(row.failedToConnect, row.calls),
      relayRate: rate(row.relayed, row.calls),
      averageQuality: optional(row.averageQuality),
    }));
  return {
    from: range.from?.toISOString(),
    to: range.to?.toISOString(),
    calls: overview.calls,
    failedToConnect: overview.failedToConnect,
    connectFailureRate: rate(overview.failedToConnect, overview.calls),
    relayed: overview.relayed,
    relayRate: rate(overview.relayed, overview.calls),
    setupMs: {
      count: overview.setup.count,
      p50: optional(overview.setup.p50),
      p90: optional(overview.setup.p90),
      p99: optional(overview.setup.p99),
    },
    qualityDistribution: overview.qualityBuckets.map((calls, bucket) => ({
      from: bucket * 10,
      to: bucket === 9 ? 100 : bucket * 10 + 10,
      calls,
    })),
    topFailureReasons: overview.topFailureReasons,
    breakdowns: {
      networkType: breakdown(overview.breakdowns.networkType),
      browser: breakdown(overview.breakdowns.browser),
      device: breakdown(overview.breakdowns.device),
      release: breakdown(overview.breakdowns.release),
    },
  };
}
