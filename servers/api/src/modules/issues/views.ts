import { severitySchema } from '@svc/protocol';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import type { IssueCluster } from '../../platform/database/tables/issues.table.ts';
import { type ClusterCounts, countClusterOccurrences } from './repository.ts';

// The API's view of an issue cluster with its counts: what `/v1/issues` answers and what the
// model's and MCP's issue tools read.

const DAY_MS = 24 * 3600 * 1000;
/** Releases listed per cluster at most (the most recent). */
const MAX_RELEASES = 20;

export const statusSchema = z.enum(['open', 'resolved', 'ignored']);

export const clusterSchema = z.object({
  id: z.string(),
  kind: z.string(),
  /** The detector kind, or `error:<hash>` of the normalized error name and top frames. */
  fingerprint: z.string(),
  title: z.string(),
  severity: severitySchema,
  status: statusSchema,
  firstSeenAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime(),
  /** Occurrences recorded in the last 24 h. */
  count24h: z.int(),
  occurrences: z.int(),
  /** Sessions it occurred in. */
  sessions: z.int(),
  /** Releases it occurred in, most recent first (at most 20). */
  releases: z.array(z.string()),
  lastRelease: z.string().optional(),
  resolvedAt: z.iso.datetime().optional(),
  resolvedRelease: z.string().optional(),
});
type ClusterView = z.infer<typeof clusterSchema>;

/** The view of a cluster with its counts (`undefined`: no occurrences). */
function toClusterView(cluster: IssueCluster, count: ClusterCounts | undefined): ClusterView {
  return {
    id: cluster.id,
    kind: cluster.kind,
    fingerprint: cluster.fingerprint,
    title: cluster.title,
    severity: cluster.severity,
    status: cluster.status,
    firstSeenAt: new Date(cluster.first_seen_at).toISOString(),
    lastSeenAt: new Date(cluster.last_seen_at).toISOString(),
    count24h: Number(count?.recent ?? 0),
    occurrences: Number(count?.occurrences ?? 0),
    sessions: Number(count?.sessions ?? 0),
    releases: [...(count?.releases ?? [])].sort().reverse().slice(0, MAX_RELEASES),
    lastRelease: cluster.last_release ?? undefined,
    resolvedAt: cluster.resolved_at === null ? undefined : new Date(cluster.resolved_at).toISOString(),
    resolvedRelease: cluster.resolved_release ?? undefined,
  };
}

/** Clusters with their counts (one grouped statement). */
export async function withCounts(
  database: Kysely<Database>,
  projectId: string,
  clusters: readonly IssueCluster[],
): Promise<ClusterView[]> {
  const counts = await countClusterOccurrences(
    database,
    projectId,
    clusters.map((cluster) => cluster.id),
    new Date(Date.now() - DAY_MS),
  );
  const byId = new Map(counts.map((row) => [row.cluster_id, row]));
  return clusters.map((cluster) => toClusterView(cluster, byId.get(cluster.id)));
}

/** One cluster with its counts. */
export async function withCount(
  database: Kysely<Database>,
  projectId: string,
  cluster: IssueCluster,
): Promise<ClusterView> {
  const [count] = await countClusterOccurrences(
    database,
    projectId,
    [cluster.id],
    new Date(Date.now() - DAY_MS),
  );
  return toClusterView(cluster, count);
}
