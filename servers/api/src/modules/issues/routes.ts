import { idSchema, listPageSchema, severitySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { type Kysely, sql } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import type { ClusterStatus, IssueCluster } from '../../platform/database/tables/issues.table.ts';
import {
  decodeClusterCursor,
  decodeOffsetCursor,
  encodeClusterCursor,
  encodeOffsetCursor,
} from '../../platform/http/cursor.ts';
import { notFound } from '../../platform/http/errors.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { CLUSTER_KINDS } from '../notifications/index.ts';

const MAX_ISSUES_LIMIT = 200;
const DAY_MS = 24 * 3600 * 1000;
/** Releases listed per cluster at most (the most recent). */
const MAX_RELEASES = 20;

const statusSchema = z.enum(['open', 'resolved', 'ignored']);
const clusterIdSchema = idSchema('cl');

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

const listQuerySchema = z.strictObject({
  limit: integerParameter(1, MAX_ISSUES_LIMIT).optional(),
  cursor: z.string().max(256).optional(),
  status: statusSchema.optional(),
  kind: z.enum(CLUSTER_KINDS).optional(),
});

const statusChangeShape = {
  status: statusSchema,
  /** With `resolved`: the release the fix ships in (default: the newest release it was seen in). */
  resolvedInRelease: z.string().trim().min(1).max(128).optional(),
};
const statusChangeSchema = z.strictObject(statusChangeShape);
const bulkStatusChangeSchema = z.strictObject({
  ids: z.array(clusterIdSchema).min(1).max(100),
  ...statusChangeShape,
});

const clusterSessionSchema = z.object({
  sessionId: z.string(),
  occurrences: z.int(),
  firstAt: z.iso.datetime(),
  lastAt: z.iso.datetime(),
  release: z.string().optional(),
  environment: z.string().optional(),
});

/** Clusters of a page with their counts (one grouped statement). */
async function withCounts(
  database: Kysely<Database>,
  projectId: string,
  clusters: readonly IssueCluster[],
  now: number,
): Promise<ClusterView[]> {
  if (clusters.length === 0) return [];
  const ids = clusters.map((cluster) => cluster.id);
  const counts = await database
    .selectFrom('cluster_occurrences')
    .select(({ fn }) => [
      'cluster_id',
      sql<number>`count(*) filter (where seen_at > ${new Date(now - DAY_MS)})`.as('count24h'),
      fn.countAll<number>().as('occurrences'),
      sql<number>`count(distinct session_id)`.as('sessions'),
      sql<string[]>`(array_agg(distinct release) filter (where release is not null))`.as('releases'),
    ])
    .where('project_id', '=', projectId)
    .where('cluster_id', 'in', ids)
    .groupBy('cluster_id')
    .execute();
  const byId = new Map(counts.map((row) => [row.cluster_id, row]));
  return clusters.map((cluster) => {
    const count = byId.get(cluster.id);
    return {
      id: cluster.id,
      kind: cluster.kind,
      fingerprint: cluster.fingerprint,
      title: cluster.title,
      severity: cluster.severity,
      status: cluster.status,
      firstSeenAt: new Date(cluster.first_seen_at).toISOString(),
      lastSeenAt: new Date(cluster.last_seen_at).toISOString(),
      count24h: Number(count?.count24h ?? 0),
      occurrences: Number(count?.occurrences ?? 0),
      sessions: Number(count?.sessions ?? 0),
      releases: [...(count?.releases ?? [])].sort().reverse().slice(0, MAX_RELEASES),
      lastRelease: cluster.last_release ?? undefined,
      resolvedAt: cluster.resolved_at === null ? undefined : new Date(cluster.resolved_at).toISOString(),
      resolvedRelease: cluster.resolved_release ?? undefined,
    };
  });
}

/** Sets the status of the project's clusters `ids`; returns the changed clusters. */
async function changeStatus(
  database: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
  change: { status: ClusterStatus; resolvedInRelease?: string | undefined },
): Promise<IssueCluster[]> {
  const now = new Date();
  const resolved = change.status === 'resolved';
  return database
    .updateTable('issue_clusters')
    .set({
      status: change.status,
      status_changed_at: now,
      updated_at: now,
      resolved_at: resolved ? now : null,
      resolved_release: resolved
        ? change.resolvedInRelease === undefined
          ? sql<string | null>`last_release`
          : change.resolvedInRelease
        : null,
    })
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .returningAll()
    .execute();
}

/**
 * `/v1/issues`: the project's issue clusters (findings and errors grouped by fingerprint), and
 * `/v1/errors`, the legacy lookup of error clusters by fingerprint. Changing a status never
 * notifies; a resolved cluster seen again does (`cluster.regressed` / `cluster.reopened`).
 */
export default async function issueRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authenticate);
  const database = fastify.database;

  const listClusters = async (
    projectId: string,
    query: z.infer<typeof listQuerySchema>,
    onlyKind?: string,
  ) => {
    const limit = query.limit ?? 50;
    let select = database
      .selectFrom('issue_clusters')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('last_seen_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1);
    const kind = onlyKind ?? query.kind;
    if (kind !== undefined) select = select.where('kind', '=', kind);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    if (query.cursor !== undefined) {
      const after = decodeClusterCursor(query.cursor);
      select = select.where(({ eb, or, and }) =>
        or([
          eb('last_seen_at', '<', after.lastSeenAt),
          and([eb('last_seen_at', '=', after.lastSeenAt), eb('id', '<', after.id)]),
        ]),
      );
    }
    const rows = await select.execute();
    const { page, more } = keysetPage(rows, limit);
    return {
      items: await withCounts(database, projectId, page, Date.now()),
      nextCursor:
        more === undefined
          ? undefined
          : encodeClusterCursor({ lastSeenAt: new Date(more.last_seen_at), id: more.id }),
    };
  };

  const findCluster = async (projectId: string, id: string) => {
    const row = await database
      .selectFrom('issue_clusters')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) throw notFound(`No issue ${id}`);
    return row;
  };

  routes.get(
    '/v1/issues',
    {
      schema: {
        summary: 'List issue clusters, most recently seen first',
        querystring: listQuerySchema,
        response: { 200: listPageSchema(clusterSchema) },
      },
    },
    async (request) => listClusters(request.auth.project.id, request.query),
  );

  routes.patch(
    '/v1/issues',
    {
      schema: {
        summary: 'Set the status of several clusters',
        body: bulkStatusChangeSchema,
        response: { 200: listPageSchema(clusterSchema) },
      },
    },
    async (request) => {
      const { ids, ...change } = request.body;
      const changed = await changeStatus(database, request.auth.project.id, [...new Set(ids)], change);
      if (changed.length !== new Set(ids).size) {
        const found = new Set(changed.map((row) => row.id));
        throw notFound(`No issue ${ids.filter((id) => !found.has(id)).join(', ')}`);
      }
      return { items: await withCounts(database, request.auth.project.id, changed, Date.now()) };
    },
  );

  routes.get(
    '/v1/issues/:id',
    {
      schema: {
        summary: 'One issue cluster',
        params: z.object({ id: clusterIdSchema }),
        response: { 200: clusterSchema },
      },
    },
    async (request) => {
      const cluster = await findCluster(request.auth.project.id, request.params.id);
      return (await withCounts(database, request.auth.project.id, [cluster], Date.now()))[0] as ClusterView;
    },
  );

  routes.patch(
    '/v1/issues/:id',
    {
      schema: {
        summary: 'Resolve, ignore or reopen a cluster',
        params: z.object({ id: clusterIdSchema }),
        body: statusChangeSchema,
        response: { 200: clusterSchema },
      },
    },
    async (request) => {
      await findCluster(request.auth.project.id, request.params.id);
      const [changed] = await changeStatus(
        database,
        request.auth.project.id,
        [request.params.id],
        request.body,
      );
      return (
        await withCounts(database, request.auth.project.id, [changed as IssueCluster], Date.now())
      )[0] as ClusterView;
    },
  );

  routes.get(
    '/v1/issues/:id/sessions',
    {
      schema: {
        summary: 'The sessions a cluster occurred in, most recent first',
        params: z.object({ id: clusterIdSchema }),
        querystring: z.strictObject({
          limit: integerParameter(1, MAX_ISSUES_LIMIT).optional(),
          cursor: z.string().max(256).optional(),
        }),
        response: { 200: listPageSchema(clusterSessionSchema) },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      await findCluster(projectId, request.params.id);
      const limit = request.query.limit ?? 50;
      const offset = request.query.cursor === undefined ? 0 : decodeOffsetCursor(request.query.cursor);
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
        .where('cluster_id', '=', request.params.id)
        .groupBy('session_id')
        .orderBy('last_seen', 'desc')
        .orderBy('session_id', 'desc')
        .limit(limit + 1)
        .offset(offset)
        .execute();
      return {
        items: rows.slice(0, limit).map((row) => ({
          sessionId: row.session_id,
          occurrences: Number(row.occurrences),
          firstAt: new Date(row.first_at).toISOString(),
          lastAt: new Date(row.last_at).toISOString(),
          release: row.release ?? undefined,
          environment: row.environment ?? undefined,
        })),
        nextCursor: rows.length > limit ? encodeOffsetCursor(offset + limit) : undefined,
      };
    },
  );

  // Legacy: error triage is part of issues; these read the same clusters.
  routes.get(
    '/v1/errors',
    {
      schema: {
        summary: 'Legacy: error clusters (the same as GET /v1/issues?kind=error)',
        querystring: listQuerySchema.omit({ kind: true }),
        response: { 200: listPageSchema(clusterSchema) },
      },
    },
    async (request) => listClusters(request.auth.project.id, request.query, 'error'),
  );

  routes.get(
    '/v1/errors/:fingerprint',
    {
      schema: {
        summary: 'Legacy: the error cluster of a fingerprint (`error:<hash>` or the hash)',
        params: z.object({ fingerprint: z.string().regex(/^(error:)?[0-9a-f]{32}$/) }),
        response: { 200: clusterSchema },
      },
    },
    async (request) => {
      const { fingerprint } = request.params;
      const key = fingerprint.startsWith('error:') ? fingerprint : `error:${fingerprint}`;
      const row = await database
        .selectFrom('issue_clusters')
        .selectAll()
        .where('project_id', '=', request.auth.project.id)
        .where('fingerprint', '=', key)
        .executeTakeFirst();
      if (row === undefined) throw notFound(`No error with fingerprint ${fingerprint}`);
      return (await withCounts(database, request.auth.project.id, [row], Date.now()))[0] as ClusterView;
    },
  );
}
