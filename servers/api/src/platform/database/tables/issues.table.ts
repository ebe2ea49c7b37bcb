import type { ColumnType, Selectable } from 'kysely';
import type { SignalSeverity } from './session-signals.table.ts';

export type ClusterStatus = 'open' | 'resolved' | 'ignored';

/** Problems clustered across sessions per project and fingerprint. */
export interface IssueClustersTable {
  project_id: string;
  id: string;
  /** The detector kind, or `error:<hash>` of the normalized error name and top frames. */
  fingerprint: string;
  /** The detector kind, or `error`. */
  kind: string;
  title: string;
  severity: SignalSeverity;
  status: ColumnType<ClusterStatus, ClusterStatus | undefined, ClusterStatus>;
  first_seen_at: Date;
  last_seen_at: Date;
  last_release: string | null;
  resolved_at: Date | null;
  /** The newest release the cluster was seen in when it was resolved. */
  resolved_release: string | null;
  status_changed_at: ColumnType<Date, Date | undefined, Date>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** One occurrence of a cluster: a finding of a peer connection, or an error event. */
export interface ClusterOccurrencesTable {
  project_id: string;
  session_id: string;
  /** `finding:<pc>:<kind>` or `error:<seq>:<event index>`: its place in the session. */
  occurrence_key: string;
  cluster_id: string;
  /** When it happened (client clock). */
  t: Date;
  /** When the server first recorded it: what `count24h` counts. */
  seen_at: Date;
  release: string | null;
  environment: string | null;
}

/**
 * More fingerprints of a cluster, besides its own: the symbolicated fingerprint of an error first
 * clustered by its minified one (servers/api/docs/fingerprints.md, "Source maps").
 */
export interface ClusterFingerprintsTable {
  project_id: string;
  fingerprint: string;
  cluster_id: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type IssueCluster = Selectable<IssueClustersTable>;
