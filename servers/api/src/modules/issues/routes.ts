import { idSchema, listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  decodeClusterCursor,
  decodeOffsetCursor,
  encodeClusterCursor,
  encodeOffsetCursor,
} from '../../platform/http/cursor.ts';
import { notFound } from '../../platform/http/errors.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { CLUSTER_KINDS } from '../notifications/index.ts';
import {
  findCluster,
  findClusterByFingerprint,
  findClusterSessionsPage,
  findClustersPage,
  findLatestClusterError,
  type LatestErrorRow,
  setClusterStatus,
  setClustersStatus,
} from './repository.ts';
import { clusterSchema, statusSchema, withCount, withCounts } from './views.ts';

const MAX_ISSUES_LIMIT = 200;

const clusterIdSchema = idSchema('cl');

const printedFrameSchema = z.object({
  file: z.string().optional(),
  line: z.int().optional(),
  column: z.int().optional(),
  function: z.string().optional(),
});

/** A frame of a session error as processing stored it (the shape of `POST /v1/symbolicate`'s). */
const storedFrameSchema = z.union([
  printedFrameSchema.extend({
    mapped: z.literal(true),
    file: z.string(),
    line: z.int(),
    column: z.int(),
    /** The frame as the browser printed it (minified). */
    generated: printedFrameSchema,
    /** Lines of the original source around `line`, when the map carries them. */
    context: z
      .object({ before: z.array(z.string()), line: z.string(), after: z.array(z.string()) })
      .optional(),
  }),
  printedFrameSchema.extend({ mapped: z.literal(false) }),
]);

/** The error of a cluster's newest occurrence: its stack as printed, its frames once symbolicated. */
const latestErrorSchema = z.object({
  sessionId: z.string(),
  t: z.iso.datetime(),
  name: z.string(),
  message: z.string().optional(),
  stack: z.string().optional(),
  /** Top frame first; only when a source map mapped at least one frame. */
  frames: z.array(storedFrameSchema).optional(),
});

/** `GET /v1/issues/{id}`: the cluster, and for an error cluster its latest error. */
const clusterDetailSchema = clusterSchema.extend({ latestError: latestErrorSchema.optional() });

/** The latest error's view; frames that do not read as stored frames are left out. */
function toLatestErrorView(row: LatestErrorRow): z.infer<typeof latestErrorSchema> {
  const { stack, frames } = row.details;
  const parsedFrames = z.array(storedFrameSchema).safeParse(frames);
  return {
    sessionId: row.session_id,
    t: new Date(row.t).toISOString(),
    name: row.name,
    message: row.message ?? undefined,
    stack: typeof stack === 'string' ? stack : undefined,
    frames: parsedFrames.success ? parsedFrames.data : undefined,
  };
}

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

/**
 * `/v1/issues`: the project's issue clusters (findings and errors grouped by fingerprint), and
 * `/v1/errors`, the legacy lookup of error clusters by fingerprint. Changing a status never
 * notifies; a resolved cluster seen again does (`cluster.regressed` / `cluster.reopened`). A
 * cluster of another project, or none, is a 404. The storage is in repository.ts.
 */
export default async function issueRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('issues'));
  const database = fastify.database;

  const listClusters = async (
    projectId: string,
    query: z.infer<typeof listQuerySchema>,
    onlyKind?: string,
  ) => {
    const page = await findClustersPage(database, projectId, {
      filters: { kind: onlyKind ?? query.kind, status: query.status },
      after: query.cursor === undefined ? undefined : decodeClusterCursor(query.cursor),
      limit: query.limit ?? 50,
    });
    return {
      items: await withCounts(database, projectId, page.clusters),
      nextCursor: page.next === undefined ? undefined : encodeClusterCursor(page.next),
    };
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
      const projectId = request.auth.project.id;
      const { ids, ...change } = request.body;
      const unique = [...new Set(ids)];
      // All or nothing: an id that is not the project's cluster rolls the others back (404).
      const changed = await database.transaction().execute(async (transaction) => {
        const rows = await setClustersStatus(transaction, projectId, unique, change, new Date());
        const found = new Set(rows.map((row) => row.id));
        const missing = unique.filter((id) => !found.has(id));
        if (missing.length > 0) throw notFound(`No issue ${missing.join(', ')}`);
        return rows;
      });
      return { items: await withCounts(database, projectId, changed) };
    },
  );

  routes.get(
    '/v1/issues/:id',
    {
      schema: {
        summary:
          'One issue cluster; an error cluster with its latest error (original frames once symbolicated)',
        params: z.object({ id: clusterIdSchema }),
        response: { 200: clusterDetailSchema },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      const cluster = await findCluster(database, projectId, request.params.id);
      if (cluster === undefined) throw notFound(`No issue ${request.params.id}`);
      const view = await withCount(database, projectId, cluster);
      if (cluster.kind !== 'error') return view;
      const latest = await findLatestClusterError(database, projectId, cluster.id);
      return latest === undefined ? view : { ...view, latestError: toLatestErrorView(latest) };
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
      const changed = await setClusterStatus(
        database,
        request.auth.project.id,
        request.params.id,
        request.body,
        new Date(),
      );
      if (changed === undefined) throw notFound(`No issue ${request.params.id}`);
      return withCount(database, request.auth.project.id, changed);
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
      if ((await findCluster(database, projectId, request.params.id)) === undefined)
        throw notFound(`No issue ${request.params.id}`);
      const limit = request.query.limit ?? 50;
      const offset = request.query.cursor === undefined ? 0 : decodeOffsetCursor(request.query.cursor);
      const page = await findClusterSessionsPage(database, projectId, request.params.id, { limit, offset });
      return {
        items: page.sessions.map((row) => ({
          sessionId: row.session_id,
          occurrences: Number(row.occurrences),
          firstAt: new Date(row.first_at).toISOString(),
          lastAt: new Date(row.last_at).toISOString(),
          release: row.release ?? undefined,
          environment: row.environment ?? undefined,
        })),
        nextCursor: page.more ? encodeOffsetCursor(offset + limit) : undefined,
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
      const cluster = await findClusterByFingerprint(database, request.auth.project.id, key);
      if (cluster === undefined) throw notFound(`No error with fingerprint ${fingerprint}`);
      return withCount(database, request.auth.project.id, cluster);
    },
  );
}
