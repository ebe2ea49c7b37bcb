import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { ClusterStatus, IssueCluster } from '../../platform/database/tables/issues.table.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';

// The read side of issues and their status changes (`/v1/issues`, `/v1/errors`). Every query is
// scoped by a project id first, so a caller only ever reaches the rows of the project it passes
// (the routes pass the token's project). What matches nothing is `undefined` (or an empty list):
// the routes decide on the 404.

type Executor = Kysely<Database> | Transaction<Database>;

/** What `GET /v1/issues` can filter on. */
export interface ClusterFilters {
  kind?: string | undefined;
  status?: ClusterStatus | undefined;
}

/** A keyset position in the cluster list (most recently seen first): the last cluster of a page. */
export interface ClusterPosition {
  lastSeenAt: Date;
  id: string;
}

/** A page of the project's clusters, most recently seen first, after `after` when given. */
export async function findClustersPage(
  database: Executor,
  projectId: string,
  options: { filters: ClusterFilters; after?: ClusterPosition | undefined; limit: number },
): Promise<{ clusters: IssueCluster[]; next?: ClusterPosition }> {
  const { filters, after, limit } = options;
  let query = database
    .selectFrom('issue_clusters')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('last_seen_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (filters.kind !== undefined) query = query.where('kind', '=', filters.kind);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (after !== undefined)
    query = query.where(({ eb, or, and }) =>
      or([
        eb('last_seen_at', '<', after.lastSeenAt),
        and([eb('last_seen_at', '=', after.lastSeenAt), eb('id', '<', after.id)]),
      ]),
    );
  const { page, more } = keysetPage(await query.execute(), limit);
  return more === undefined
    ? { clusters: page }
    : { clusters: page, next: { lastSeenAt: new Date(more.last_seen_at), id: more.id } };
}

/** The project's cluster `id`, or `undefined` (another project's too). */
export async function findCluster(
  database: Executor,
  projectId: string,
  id: string,
): Promise<IssueCluster | undefined> {
  return database
    .selectFrom('issue_clusters')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The project's cluster of `fingerprint` (e.g. `error:<hash>`), or `undefined`. */
export async function findClusterByFingerprint(
  database: Executor,
  projectId: string,
  fingerprint: string,
): Promise<IssueCluster | undefined> {
  return database
    .selectFrom('issue_clusters')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
}

/** The occurrence counts of a cluster. */
export interface ClusterCounts {
  cluster_id: string;
  /** Occurrences recorded after `since`. */
  recent: number;
  occurrences: number;
  sessions: number;
  /** The distinct releases it occurred in, in no order. */
  releases: string[] | null;
}

/** The counts of the project's clusters `ids` (none for a cluster without occurrences). */
export async function countClusterOccurrences(
  database: Executor,
  projectId: string,
  ids: readonly string[],
  since: Date,
): Promise<ClusterCounts[]> {
  if (ids.length === 0) return [];
  return database
    .selectFrom('cluster_occurrences')
    .select(({ fn }) => [
      'cluster_id',
      sql<number>`count(*) filter (where seen_at > ${since})`.as('recent'),
      fn.countAll<number>().as('occurrences'),
      sql<number>`count(distinct session_id)`.as('sessions'),
      sql<string[] | null>`(array_agg(distinct release) filter (where release is not null))`.as('releases'),
    ])
    .where('project_id', '=', projectId)
    .where('cluster_id', 'in', ids)
    .groupBy('cluster_id')
    .execute();
}

/** A status change: with `resolved`, the release the fix ships in (default: the cluster's last). */
export interface StatusChange {
  status: ClusterStatus;
  resolvedInRelease?: string | undefined;
}

function statusValues(change: StatusChange, now: Date) {
  const resolved = change.status === 'resolved';
  return {
    status: change.status,
    status_changed_at: now,
    updated_at: now,
    resolved_at: resolved ? now : null,
    resolved_release: resolved
      ? change.resolvedInRelease === undefined
        ? sql<string | null>`last_release`
        : change.resolvedInRelease
      : null,
  };
}

/** Sets the status of the project's cluster `id`; `undefined` when there is no such cluster (any more). */
export async function setClusterStatus(
  database: Executor,
  projectId: string,
  id: string,
  change: StatusChange,
  now: Date,
): Promise<IssueCluster | undefined> {
  return database
    .updateTable('issue_clusters')
    .set(statusValues(change, now))
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Sets the status of those of `ids` that are clusters of the project; returns them, changed. */
export async function setClustersStatus(
  database: Executor,
  projectId: string,
  ids: readonly string[],
  change: StatusChange,
  now: Date,
): Promise<IssueCluster[]> {
  if (ids.length === 0) return [];
  return database
    .updateTable('issue_clusters')
    .set(statusValues(change, now))
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .returningAll()
    .execute();
}

/** A session a cluster occurred in. */
export interface ClusterSessionRow {
  session_id: string;
  occurrences: number;
  first_at: Date;
  last_at: Date;
  release: string | null;
  environment: string | null;
}

/**
 * A page of the sessions the project's cluster `clusterId` occurred in, most recently seen first
 * (`offset` rows skipped); `more` says whether another page follows. Empty for no such cluster.
 */
export async function findClusterSessionsPage(
  database: Executor,
  projectId: string,
  clusterId: string,
  options: { limit: number; offset: number },
): Promise<{ sessions: ClusterSessionRow[]; more: boolean }> {
  const rows = await database
    .selectFrom('cluster_occurrences')
    .select(({ fn }) => [
      'session_id',
      fn.countAll<number>().as('occurrences'),
      fn.min('t').as('first_at'),
      fn.max('t').as('last_at'),
      fn.max('release').as('release'),
      fn.max('environment').as('environment'),
      fn.max('seen_at').as('last_seen'),
    ])
    .where('project_id', '=', projectId)
    .where('cluster_id', '=', clusterId)
    .groupBy('session_id')
    .orderBy('last_seen', 'desc')
    .orderBy('session_id', 'desc')
    .limit(options.limit + 1)
    .offset(options.offset)
    .execute();
  return {
    sessions: rows.slice(0, options.limit),
    more: rows.length > options.limit,
  };
}

/** The error signal of a cluster's newest occurrence (`GET /v1/issues/{id}`'s `latestError`). */
export interface LatestErrorRow {
  session_id: string;
  t: Date;
  name: string;
  message: string | null;
  /** The signal's details: `stack` as printed, `frames` once symbolicated. */
  details: Record<string, unknown>;
}

/**
 * The error signal of the newest occurrence (by when the server recorded it, then when it
 * happened) of the project's error cluster `clusterId`; `undefined` for a detector cluster or
 * one without occurrences. An occurrence `error:<seq>:<event index>` is that signal of its session.
 *
 * @example
 * ```ts
 * const latest = await findLatestClusterError(database, project.id, 'cl_01JD2S5V8Q8C4Y3K2W9T7N6M5H');
 * latest?.details.frames; // the symbolicated frames, when a source map mapped them
 * ```
 */
export async function findLatestClusterError(
  database: Executor,
  projectId: string,
  clusterId: string,
): Promise<LatestErrorRow | undefined> {
  // The newest occurrence first (index cluster_occurrences_cluster), then its signal by key.
  const latest = database
    .selectFrom('cluster_occurrences')
    .select(['project_id', 'session_id', 'occurrence_key'])
    .where('project_id', '=', projectId)
    .where('cluster_id', '=', clusterId)
    .where('occurrence_key', 'like', 'error:%')
    .orderBy('seen_at', 'desc')
    .orderBy('t', 'desc')
    .orderBy('occurrence_key', 'desc')
    .limit(1)
    .as('latest');
  return database
    .selectFrom(latest)
    .innerJoin('session_signals as error', (join) =>
      join
        .onRef('error.project_id', '=', 'latest.project_id')
        .onRef('error.session_id', '=', 'latest.session_id'),
    )
    .select(['error.session_id', 'error.t', 'error.name', 'error.message', 'error.details'])
    .where('error.kind', '=', 'error')
    .where(
      'latest.occurrence_key',
      '=',
      sql<string>`'error:' || ${sql.ref('error.seq')} || ':' || ${sql.ref('error.event_index')}`,
    )
    .executeTakeFirst();
}
