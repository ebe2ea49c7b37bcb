// The calls API's answers (servers/api README, Calls; servers/api/src/modules/calls/views.ts), as
// the calls pages read them. Unknown fields are omitted by the API, never null, except inside
// series, where `null` marks a sample that lacked the metric.

type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** An element of `GET /v1/calls`: one peer connection of a session. */
export interface CallSummary {
  id: string;
  sessionId: string;
  pc: string;
  startedAt: string;
  endedAt?: string;
  durationMs?: number;
  state: 'open' | 'closed';
  endReason?: 'closed' | 'inactive';
  setupMs?: number;
  connected: boolean;
  failedToConnect: boolean;
  failureReason?: string;
  relayed: boolean;
  candidateTypes: { local: string[]; remote: string[] };
  protocol?: string;
  networkType?: string;
  qualityScore?: number;
  codec?: string;
  codecs: string[];
  browser?: { name: string; version?: string };
  os?: { name: string; version?: string };
  device?: string;
  release?: string;
  environment?: string;
  endUser?: string;
  sampleCount: number;
  trackCount: number;
  issues: Array<{ kind: string; severity: Severity }>;
  hasIssue: boolean;
}

/** Time-aligned arrays: `t` (window ends, epoch ms), `windowMs`, one array per metric. */
export type Series = Record<string, Array<number | string | boolean | null>>;

interface CallTrack {
  id: string;
  kind: string;
  dir: string;
  sampleCount: number;
  series: Series;
}

/** A `call.event` of the call: `{ t, name, ...fields }` and where it is in the session. */
interface CallEvent {
  t: number;
  name: string;
  seq: number;
  index: number;
  [field: string]: unknown;
}

export interface CallFinding {
  kind: string;
  severity: Severity;
  t: string;
  track?: string;
  evidence: Record<string, number | string | boolean>;
}

/** `GET /v1/calls/{id}`. */
export interface CallDetail extends CallSummary {
  tracks: CallTrack[];
  connection: Series;
  events: CallEvent[];
  findings: CallFinding[];
}

export interface Breakdown {
  key?: string;
  calls: number;
  failedToConnect: number;
  connectFailureRate: number;
  relayRate: number;
  averageQuality?: number;
}

/** `GET /v1/calls/overview`. */
export interface CallOverview {
  from?: string;
  to?: string;
  calls: number;
  failedToConnect: number;
  connectFailureRate: number;
  relayed: number;
  relayRate: number;
  setupMs: { count: number; p50?: number; p90?: number; p99?: number };
  qualityDistribution: Array<{ from: number; to: number; calls: number }>;
  topFailureReasons: Array<{ reason: string; calls: number }>;
  breakdowns: {
    networkType: Breakdown[];
    browser: Breakdown[];
    device: Breakdown[];
    release: Breakdown[];
  };
}

/** The part of `GET /v1/sessions/{id}` the call page needs: where the replay starts. */
export interface SessionStart {
  id: string;
  startedAt: string;
}
