import type { Finding } from '@svc/detectors';
import type { Severity, WebhookEventType } from '@svc/protocol';
import { sql, type Transaction } from 'kysely';
import { insertBatches } from '../../platform/database/insert-batches.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { IssueCluster } from '../../platform/database/tables/issues.table.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { createId } from '../../platform/ids.ts';
import type { ClusterRuleEvent } from '../notifications/index.ts';
import {
  type NotificationDraft,
  type NotifyResult,
  notify,
  type OccurrenceSession,
  routeOf,
} from '../notifications/index.ts';
import { errorIdentity, type StackFrame } from './fingerprint.ts';

/** Titles of the detector kinds' clusters. */
const DETECTOR_TITLES: Readonly<Record<Finding['kind'], string>> = {
  webrtc_connect_failure: 'Call failed to connect',
  webrtc_one_way_media: 'One-way media in a call',
  webrtc_media_permission_denied: 'Camera or microphone permission denied',
  webrtc_device_unavailable: 'Camera or microphone unavailable',
  webrtc_freeze: 'Video freezes in a call',
  webrtc_audio_dropout: 'Audio dropouts in a call',
  webrtc_reconnect_storm: 'Call reconnects repeatedly',
  webrtc_call_abandoned: 'Call abandoned after poor quality',
  webrtc_packet_loss: 'High packet loss in a call',
  webrtc_high_latency: 'High latency in a call',
  webrtc_cpu_limited: 'Video limited by CPU',
  webrtc_low_resolution: 'Low video resolution in a call',
  webrtc_relay_fallback: 'Call relayed through TURN',
};

/** Occurrences of errors have this severity (a detector's is its kind's). */
const ERROR_SEVERITY: Severity = 'high';

/** One occurrence of a problem in a session, with what clusters it. */
export interface Occurrence {
  /** Its place in the session: `finding:<pc>:<kind>` or `error:<seq>:<event index>`. */
  key: string;
  /** The cluster's fingerprint: the detector kind, or `error:<hash>`. */
  fingerprint: string;
  /**
   * An error's fingerprint from its minified frames, when `fingerprint` is from its symbolicated
   * ones: a cluster made by it before the bundle's map was uploaded takes the occurrence, and
   * `fingerprint` from then on (see {@link resolveFingerprints}).
   */
  minifiedFingerprint?: string;
  kind: string;
  title: string;
  severity: Severity;
  /** When it happened (client clock, ms). */
  t: number;
}

/** The occurrences of a session's findings: one per (peer connection, kind). */
export function findingOccurrences(findings: readonly Finding[]): Occurrence[] {
  return findings.map((finding) => ({
    key: `finding:${finding.pc ?? ''}:${finding.kind}`,
    fingerprint: finding.kind,
    kind: finding.kind,
    title: DETECTOR_TITLES[finding.kind],
    severity: finding.severity,
    t: finding.t,
  }));
}

/**
 * The occurrence of an error signal (a `session_signals` row of kind `error`), fingerprinted by
 * its `symbolicated` frames when given (its stack's frames through the source maps), else by its
 * stack as printed.
 */
export function errorOccurrence(
  signal: {
    seq: number;
    event_index: number;
    t: Date;
    name: string;
    message: string | null;
    details: Record<string, unknown>;
  },
  symbolicated?: readonly StackFrame[],
): Occurrence {
  const stack = typeof signal.details.stack === 'string' ? signal.details.stack : null;
  const error = { name: signal.name, message: signal.message ?? '', stack };
  const minified = errorIdentity(error);
  const identity = symbolicated === undefined ? minified : errorIdentity({ ...error, frames: symbolicated });
  return {
    key: `error:${signal.seq}:${signal.event_index}`,
    fingerprint: `error:${identity.fingerprint}`,
    ...(identity.fingerprint === minified.fingerprint
      ? {}
      : { minifiedFingerprint: `error:${minified.fingerprint}` }),
    kind: 'error',
    title: identity.title,
    severity: ERROR_SEVERITY,
    t: new Date(signal.t).getTime(),
  };
}

/** What {@link recordOccurrences} did. */
export interface RecordOccurrencesResult extends NotifyResult {
  /** Occurrences recorded for the first time. */
  added: number;
  /** Finding occurrences that no longer hold (a late chunk changed the findings), removed. */
  removed: number;
  clustersCreated: number;
}

/** Whether `release` is newer than `resolvedIn`: by numbers when both are versions, else any other release. */
function isNewerRelease(release: string | null, resolvedIn: string | null): boolean {
  if (release === null) return false;
  if (resolvedIn === null) return true;
  if (release === resolvedIn) return false;
  const numbers = (text: string) => /^v?(\d+(?:\.\d+)*)/.exec(text)?.[1]?.split('.').map(Number);
  const a = numbers(release);
  const b = numbers(resolvedIn);
  if (a === undefined || b === undefined) return true;
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  // Same numbers, different text (1.2.0-beta vs 1.2.0): a release, not a pre-release, is newer.
  return !release.includes('-') && resolvedIn.includes('-');
}

interface ClusterCounts {
  count24h: number;
  occurrences: number;
  sessions: number;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * Records a session's occurrences into the project's clusters, inside the caller's transaction
 * (the processing job's, so clusters, their events and the outbox rows move together):
 *
 * 1. occurrences seen before change nothing (a job re-run or reprocessing is harmless); a finding
 *    occurrence that no longer holds is removed;
 * 2. a new fingerprint creates its cluster (`cluster.created`, and `error.new` for errors);
 * 3. a new occurrence of a resolved cluster reopens it: `cluster.regressed` when it comes from a
 *    release newer than the one it was resolved in ({@link isNewerRelease}), else
 *    `cluster.reopened`; an ignored cluster stays ignored and notifies nothing;
 * 4. `cluster.threshold` (and `error.rate` for errors) go to the rules whose `count24h`
 *    threshold the new occurrences crossed.
 *
 * Clusters are locked (`for update`) in fingerprint order, so concurrent jobs of one project
 * count every occurrence exactly once and cross a threshold exactly once.
 *
 * `count24h` counts occurrences by when the server recorded them (`seen_at`), not the client's
 * clock.
 */
export async function recordOccurrences(
  transaction: Transaction<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  session: OccurrenceSession,
  occurrences: readonly Occurrence[],
  options: { now: Date; appUrl: string },
): Promise<RecordOccurrencesResult> {
  const { now } = options;
  const result: RecordOccurrencesResult = {
    added: 0,
    removed: 0,
    clustersCreated: 0,
    events: [],
    deliveries: 0,
  };
  const existing = await transaction
    .selectFrom('cluster_occurrences')
    .select('occurrence_key')
    .where('project_id', '=', project.id)
    .where('session_id', '=', session.id)
    .execute();
  const known = new Set(existing.map((row) => row.occurrence_key));
  const current = new Set(occurrences.map((occurrence) => occurrence.key));
  const stale = [...known].filter((key) => key.startsWith('finding:') && !current.has(key));
  if (stale.length > 0) {
    await transaction
      .deleteFrom('cluster_occurrences')
      .where('project_id', '=', project.id)
      .where('session_id', '=', session.id)
      .where('occurrence_key', 'in', stale)
      .execute();
    result.removed = stale.length;
  }
  const fresh = await resolveFingerprints(
    transaction,
    project.id,
    occurrences.filter((occurrence) => !known.has(occurrence.key)),
  );
  if (fresh.length === 0) return result;

  const byFingerprint = new Map<string, Occurrence[]>();
  for (const occurrence of fresh) {
    const group = byFingerprint.get(occurrence.fingerprint) ?? [];
    group.push(occurrence);
    byFingerprint.set(occurrence.fingerprint, group);
  }
  const fingerprints = [...byFingerprint.keys()].sort();

  const newClusters = fingerprints.map((fingerprint) => {
    const first = byFingerprint.get(fingerprint)?.[0] as Occurrence;
    return {
      project_id: project.id,
      id: createId('cl'),
      fingerprint,
      kind: first.kind,
      title: first.title,
      severity: first.severity,
      first_seen_at: now,
      last_seen_at: now,
      last_release: session.release,
    };
  });
  const created = new Set<string>();
  for (const batch of insertBatches(newClusters)) {
    const inserted = await transaction
      .insertInto('issue_clusters')
      .values(batch)
      .onConflict((conflict) => conflict.columns(['project_id', 'fingerprint']).doNothing())
      .returning('fingerprint')
      .execute();
    for (const row of inserted) created.add(row.fingerprint);
  }
  result.clustersCreated = created.size;

  const clusters = await transaction
    .selectFrom('issue_clusters')
    .selectAll()
    .where('project_id', '=', project.id)
    .where('fingerprint', 'in', fingerprints)
    .orderBy('fingerprint')
    .forUpdate()
    .execute();

  const clusterIds = new Map(clusters.map((cluster) => [cluster.fingerprint, cluster.id]));
  const rows = fresh.map((occurrence) => ({
    project_id: project.id,
    session_id: session.id,
    occurrence_key: occurrence.key,
    cluster_id: clusterIds.get(occurrence.fingerprint) as string,
    t: new Date(occurrence.t),
    seen_at: now,
    release: session.release,
    environment: session.environment,
  }));
  for (const batch of insertBatches(rows)) {
    await transaction
      .insertInto('cluster_occurrences')
      .values(batch)
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  }
  result.added = fresh.length;

  const counts = await clusterCounts(
    transaction,
    project.id,
    clusters.map((cluster) => cluster.id),
    now,
  );
  const drafts: NotificationDraft[] = [];
  const reopened: string[] = [];
  for (const cluster of clusters) {
    const group = byFingerprint.get(cluster.fingerprint) ?? [];
    const count = counts.get(cluster.id) ?? { count24h: 0, occurrences: 0, sessions: 0 };
    const isNew = created.has(cluster.fingerprint);
    let transition: 'regressed' | 'reopened' | undefined;
    if (!isNew && cluster.status === 'resolved') {
      transition = isNewerRelease(session.release, cluster.resolved_release) ? 'regressed' : 'reopened';
      reopened.push(cluster.id);
    }
    if (cluster.status === 'ignored') continue;

    const types: ClusterRuleEvent[] = [];
    if (isNew) types.push('cluster.created');
    if (isNew && cluster.kind === 'error') types.push('error.new');
    if (transition !== undefined) types.push(`cluster.${transition}`);
    types.push('cluster.threshold');
    if (cluster.kind === 'error') types.push('error.rate');
    const first = group.reduce((earliest, occurrence) => (occurrence.t < earliest.t ? occurrence : earliest));
    for (const type of types) {
      drafts.push(clusterDraft(type, cluster, count, group.length, first, session, options.appUrl));
    }
  }
  // Every cluster seen: one statement; the resolved ones reopen: one more.
  await transaction
    .updateTable('issue_clusters')
    .set({
      last_seen_at: sql<Date>`greatest(last_seen_at, ${now})`,
      last_release: sql<string | null>`coalesce(${session.release}::text, last_release)`,
      updated_at: now,
    })
    .where('project_id', '=', project.id)
    .where(
      'id',
      'in',
      clusters.map((cluster) => cluster.id),
    )
    .execute();
  if (reopened.length > 0) {
    await transaction
      .updateTable('issue_clusters')
      .set({ status: 'open', resolved_at: null, status_changed_at: now })
      .where('project_id', '=', project.id)
      .where('id', 'in', reopened)
      .execute();
  }
  const notified = await notify(transaction, project, drafts, now);
  result.events = notified.events;
  result.deliveries = notified.deliveries;
  return result;
}

/**
 * The occurrences with the fingerprint of the cluster that takes them. An occurrence with a
 * `minifiedFingerprint` (an error whose frames were symbolicated) goes to the cluster of its
 * symbolicated fingerprint (the cluster's own, or one it took over); else to the cluster of its
 * minified one, made before the map was uploaded, which keeps its id and takes over the
 * symbolicated fingerprint (a `cluster_fingerprints` row) so the next build's occurrences, whose
 * minified frames differ, find it too; else to a new cluster of its symbolicated fingerprint.
 */
async function resolveFingerprints(
  transaction: Transaction<Database>,
  projectId: string,
  occurrences: readonly Occurrence[],
): Promise<Occurrence[]> {
  const symbolicated = occurrences.filter((occurrence) => occurrence.minifiedFingerprint !== undefined);
  if (symbolicated.length === 0) return [...occurrences];
  const wanted = [
    ...new Set(
      symbolicated.flatMap((occurrence) => [
        occurrence.fingerprint,
        occurrence.minifiedFingerprint as string,
      ]),
    ),
  ];
  const owners = new Map<string, { id: string; fingerprint: string }>();
  const own = await transaction
    .selectFrom('issue_clusters')
    .select(['id', 'fingerprint'])
    .where('project_id', '=', projectId)
    .where('fingerprint', 'in', wanted)
    .execute();
  for (const cluster of own) owners.set(cluster.fingerprint, cluster);
  const takenOver = await transaction
    .selectFrom('cluster_fingerprints as alias')
    .innerJoin('issue_clusters as cluster', (join) =>
      join.onRef('cluster.project_id', '=', 'alias.project_id').onRef('cluster.id', '=', 'alias.cluster_id'),
    )
    .select(['alias.fingerprint as alias', 'cluster.id', 'cluster.fingerprint'])
    .where('alias.project_id', '=', projectId)
    .where('alias.fingerprint', 'in', wanted)
    .execute();
  for (const row of takenOver) {
    if (!owners.has(row.alias)) owners.set(row.alias, { id: row.id, fingerprint: row.fingerprint });
  }

  const aliases = new Map<string, string>();
  const resolved = occurrences.map((occurrence) => {
    if (occurrence.minifiedFingerprint === undefined) return occurrence;
    const owner = owners.get(occurrence.fingerprint) ?? owners.get(occurrence.minifiedFingerprint);
    if (owner === undefined) return occurrence;
    if (!owners.has(occurrence.fingerprint)) aliases.set(occurrence.fingerprint, owner.id);
    return { ...occurrence, fingerprint: owner.fingerprint };
  });
  if (aliases.size > 0) {
    await transaction
      .insertInto('cluster_fingerprints')
      .values(
        [...aliases].map(([fingerprint, clusterId]) => ({
          project_id: projectId,
          fingerprint,
          cluster_id: clusterId,
        })),
      )
      .onConflict((conflict) => conflict.columns(['project_id', 'fingerprint']).doNothing())
      .execute();
  }
  return resolved;
}

/** `count24h`, occurrences and distinct sessions of clusters, after this change. */
async function clusterCounts(
  transaction: Transaction<Database>,
  projectId: string,
  clusterIds: readonly string[],
  now: Date,
): Promise<Map<string, ClusterCounts>> {
  const rows = await transaction
    .selectFrom('cluster_occurrences')
    .select(({ fn }) => [
      'cluster_id',
      sql<number>`count(*) filter (where seen_at > ${new Date(now.getTime() - DAY_MS)})`.as('count24h'),
      fn.countAll<number>().as('occurrences'),
      sql<number>`count(distinct session_id)`.as('sessions'),
    ])
    .where('project_id', '=', projectId)
    .where('cluster_id', 'in', clusterIds)
    .groupBy('cluster_id')
    .execute();
  return new Map(
    rows.map((row) => [
      row.cluster_id,
      {
        count24h: Number(row.count24h),
        occurrences: Number(row.occurrences),
        sessions: Number(row.sessions),
      },
    ]),
  );
}

const SUMMARIES: Record<ClusterRuleEvent, (title: string, detail: SummaryDetail) => string> = {
  'cluster.created': (title, detail) =>
    `New issue: ${title}. First seen in session ${detail.sessionId}${inRelease(detail)}.`,
  'error.new': (title, detail) =>
    `New error: ${title}. First seen in session ${detail.sessionId}${inRelease(detail)}.`,
  'cluster.regressed': (title, detail) =>
    `Regression: ${title} came back${inRelease(detail)} after it was resolved${detail.resolvedRelease === null ? '' : ` in release ${detail.resolvedRelease}`}.`,
  'cluster.reopened': (title, detail) =>
    `Reopened: ${title} was seen again in session ${detail.sessionId} after it was resolved.`,
  'cluster.threshold': (title, detail) => `${title}: ${detail.count24h} occurrences in the last 24 h.`,
  'error.rate': (title, detail) => `Error rate: ${title} happened ${detail.count24h} times in the last 24 h.`,
};

interface SummaryDetail {
  sessionId: string;
  release: string | null;
  resolvedRelease: string | null;
  count24h: number;
}

function inRelease(detail: SummaryDetail): string {
  return detail.release === null ? '' : ` in release ${detail.release}`;
}

/** A cluster event's notification (PROTOCOL.md §6): its `data` and what rules match on. */
function clusterDraft(
  type: ClusterRuleEvent,
  cluster: IssueCluster,
  counts: ClusterCounts,
  added: number,
  occurrence: Occurrence,
  session: OccurrenceSession,
  appUrl: string,
): NotificationDraft {
  const route = routeOf(session.url);
  const offset = Math.max(0, Math.round(occurrence.t - session.startedAt));
  return {
    type: type as WebhookEventType,
    subject: {
      type,
      kind: cluster.kind,
      severity: cluster.severity,
      environment: session.environment,
      release: session.release,
      count24hBefore: counts.count24h - added,
      count24hAfter: counts.count24h,
    },
    // Per event type: a cluster's creation does not hold back its error.new, nor a reopening its threshold.
    throttleKey: `${type}:${cluster.id}`,
    clusterId: cluster.id,
    data: {
      title: cluster.title,
      summary: SUMMARIES[type](cluster.title, {
        sessionId: session.id,
        release: session.release,
        resolvedRelease: cluster.resolved_release,
        count24h: counts.count24h,
      }),
      severity: cluster.severity,
      counts: { count24h: counts.count24h, occurrences: counts.occurrences, sessions: counts.sessions },
      ...(route === undefined ? {} : { route }),
      ...(session.release === null ? {} : { release: session.release }),
      links: {
        replay: `${appUrl}/sessions/${session.id}?t=${offset}`,
        issue: `${appUrl}/issues/${cluster.id}`,
        session: `${appUrl}/sessions/${session.id}`,
      },
      cluster: { id: cluster.id, kind: cluster.kind, title: cluster.title, count24h: counts.count24h },
    },
  };
}
