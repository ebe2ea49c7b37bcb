import type { ColumnType, Insertable, JSONColumnType, Selectable } from 'kysely';

/** int8 columns: both engines are set to return them as numbers (see createDatabase). */
type BigintColumn = ColumnType<number, number | undefined, number>;

/** A validated `call.sample` or `call.event`, exactly as sent, at its place in the session. */
export interface CallItemsTable {
  project_id: string;
  session_id: string;
  seq: number;
  event_index: number;
  pc: string | null;
  t: Date;
  type: 'call.sample' | 'call.event';
  /** The event name of a `call.event`. */
  name: string | null;
  item: JSONColumnType<Record<string, unknown>>;
}

/** One peer connection of a session, as the last job saw it. */
export interface CallsTable {
  project_id: string;
  id: string;
  session_id: string;
  pc: string;
  started_at: Date;
  last_item_at: Date;
  ended_at: Date | null;
  duration_ms: BigintColumn | null;
  state: 'open' | 'closed';
  end_reason: 'closed' | 'inactive' | null;
  setup_ms: number | null;
  connected: boolean;
  failed_to_connect: boolean;
  failure_reason: string | null;
  relayed: boolean;
  local_types: JSONColumnType<string[]>;
  remote_types: JSONColumnType<string[]>;
  protocol: string | null;
  network_type: string | null;
  browser_name: string | null;
  browser_version: string | null;
  os_name: string | null;
  os_version: string | null;
  device: string | null;
  release: string | null;
  environment: string | null;
  end_user_id: string | null;
  quality_score: number | null;
  codec: string | null;
  codecs: JSONColumnType<string[]>;
  sample_count: number;
  track_count: number;
  issue_kinds: JSONColumnType<string[]>;
  issue_count: number;
  has_issue: boolean;
  max_severity: string | null;
  /**
   * Per-sample connection series: `{ t, windowMs, score, state, relayed, network }` arrays. While
   * the call is open, its newer samples are in `call_series_pieces` (track '') after these.
   */
  series: JSONColumnType<Record<string, unknown[]>>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/**
 * Per-track metric series of a call: time-aligned arrays, `null` where a sample lacked the
 * metric. While the call is open, the newer samples are in `call_series_pieces` after these;
 * `sample_count` counts the samples of `series` (readers add the pieces').
 */
export interface CallTracksTable {
  project_id: string;
  call_id: string;
  track_id: string;
  kind: string;
  dir: string;
  sample_count: number;
  series: JSONColumnType<Record<string, unknown[]>>;
}

/** A detector finding, once per (session, peer connection, kind); `pc` is '' for session-wide kinds. */
export interface CallFindingsTable {
  project_id: string;
  session_id: string;
  pc: string;
  kind: string;
  call_id: string | null;
  severity: string;
  t: Date;
  track: string | null;
  evidence: JSONColumnType<Record<string, unknown>>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type CallItem = Selectable<CallItemsTable>;
export type NewCallItem = Insertable<CallItemsTable>;
export type Call = Selectable<CallsTable>;
export type NewCall = Insertable<CallsTable>;
export type CallTrack = Selectable<CallTracksTable>;
export type CallFinding = Selectable<CallFindingsTable>;
