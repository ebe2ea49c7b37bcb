import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../platform/http/errors.ts';
import { hashSecret } from '../../platform/secrets.ts';
import { findActiveShareLink } from '../sessions/index.ts';
import { cssReferences, rewriteCssUrls } from './references.ts';
import { archivedAlongside, archivedContentType, assetBlobKey, readSessionAssets } from './repository.ts';

const sessionParams = z.object({ id: z.string().min(1).max(128) });
const assetParams = z.object({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'),
});

/** One URL a session's snapshots referenced, and where its archived content is served. */
const sessionAssetSchema = z.object({
  url: z.string(),
  kind: z.enum(['stylesheet', 'font', 'image']),
  /** `/v1/assets/{sha256}` (relative to the API); null unless archived. */
  archivedUrl: z.string().nullable(),
  contentType: z.string().nullable(),
  bytes: z.int().nullable(),
  sha256: z.string().nullable(),
  status: z.enum(['archived', 'failed', 'refused']),
  /** Why it is not archived. */
  error: z.string().nullable(),
  fetchedAt: z.iso.datetime(),
});

/** `GET /v1/sessions/{id}/assets`. */
const sessionAssetsSchema = z.object({ assets: z.array(sessionAssetSchema) });

type SessionAssets = z.infer<typeof sessionAssetsSchema>;

/** The API path an archived content is served at. */
const archivedPath = (sha256: string) => `/v1/assets/${sha256}`;

/**
 * The session's asset map (see {@link sessionAssetsSchema}) for a project's session, or undefined
 * when the project has no such session.
 *
 * @example
 * ```ts
 * const map = await sessionAssetMap(fastify.database, project.id, sessionId);
 * map?.assets[0]?.archivedUrl; // '/v1/assets/3a7b…'
 * ```
 */
async function sessionAssetMap(
  database: FastifyInstance['database'],
  projectId: string,
  sessionId: string,
  path: (sha256: string) => string = archivedPath,
): Promise<SessionAssets | undefined> {
  const session = await database
    .selectFrom('sessions')
    .select('id')
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (session === undefined) return undefined;
  const rows = await readSessionAssets(database, projectId, sessionId);
  return {
    assets: rows.map((row) => ({
      url: row.url,
      kind: row.kind,
      archivedUrl: row.status === 'archived' && row.sha256 !== null ? path(row.sha256) : null,
      contentType: row.content_type,
      bytes: row.bytes,
      sha256: row.sha256,
      status: row.status,
      error: row.error,
      fetchedAt: row.fetched_at.toISOString(),
    })),
  };
}

/**
 * The archived content `sha256` of the project as served: its stored media type, immutable
 * cache headers, and for a stylesheet its `url()`s and `@import`s rewritten to the archived
 * contents of the same sessions (relative `path`s). Undefined when the project has no such content.
 *
 * @example
 * ```ts
 * const served = await servedAsset(fastify, project.id, sha256);
 * if (served !== undefined) reply.type(served.contentType).send(served.body);
 * ```
 */
async function servedAsset(
  fastify: Pick<FastifyInstance, 'database' | 'blobStore'>,
  projectId: string,
  sha256: string,
  path: (sha256: string) => string = archivedPath,
): Promise<{ contentType: string; body: Buffer } | undefined> {
  const contentType = await archivedContentType(fastify.database, projectId, sha256);
  if (contentType === undefined) return undefined;
  const bytes = await fastify.blobStore.get(assetBlobKey(projectId, sha256));
  if (bytes === null) return undefined;
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (contentType !== 'text/css') return { contentType, body };
  // Its references resolve against the URL it was archived from, as they did when archived.
  const source = await fastify.database
    .selectFrom('session_assets')
    .select('url')
    .where('project_id', '=', projectId)
    .where('sha256', '=', sha256)
    .limit(1)
    .executeTakeFirst();
  const css = body.toString('utf8');
  const base = source?.url;
  const mapped = await archivedAlongside(
    fastify.database,
    projectId,
    sha256,
    cssReferences(css, base).map((reference) => reference.url),
  );
  const rewritten = rewriteCssUrls(css, base, (url) => {
    const archived = mapped.get(url);
    return archived === undefined ? undefined : path(archived);
  });
  return { contentType: 'text/css; charset=utf-8', body: Buffer.from(rewritten, 'utf8') };
}

/** Headers of an archived content: it never changes under its hash, and is never a page. */
const ARCHIVED_HEADERS = {
  'cache-control': 'private, max-age=31536000, immutable',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  'cross-origin-resource-policy': 'same-origin',
} as const;

/**
 * `GET /v1/sessions/{id}/assets` (the session's archived asset map) and `GET /v1/assets/{sha256}`
 * (an archived content), for the session's project with `sessions:read`.
 */
export default async function assetRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.get(
    '/v1/sessions/:id/assets',
    {
      onRequest: fastify.authorize('sessions'),
      schema: {
        summary: "The session's archived assets: original URL to archived URL",
        description:
          "The stylesheets (and, by the project settings `assets.archiveFonts` and `assets.archiveImages`, fonts and images) that the session's snapshots referenced, each with where its archived content is served (`archivedUrl`, relative to the API) or why it was not archived (`status` `failed` or `refused`, `error`). Filled by the archiving job after ingest; empty until it ran.",
        params: sessionParams,
        response: { 200: sessionAssetsSchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const map = await sessionAssetMap(fastify.database, request.auth.project.id, request.params.id);
      if (map === undefined) throw notFound(`No session ${request.params.id}`);
      return map;
    },
  );
  routes.get(
    '/v1/assets/:sha256',
    {
      onRequest: fastify.authorize('sessions'),
      schema: {
        summary: 'An archived asset of a session replay',
        description:
          "The content archived under this SHA-256 by one of the project's sessions, with its stored media type and immutable cache headers. A stylesheet is served as `text/css` with its `url()`s and `@import`s rewritten to the archived contents where those were archived.",
        params: assetParams,
      },
    },
    async (request, reply) => {
      const served = await servedAsset(fastify, request.auth.project.id, request.params.sha256);
      if (served === undefined) throw notFound(`No archived asset ${request.params.sha256}`);
      return reply.headers(ARCHIVED_HEADERS).type(served.contentType).send(served.body);
    },
  );
}

const shareParams = z.object({ token: z.string().min(1).max(100) });

/**
 * `GET /share/{token}/assets` and `GET /share/{token}/assets/{sha256}`: the archived assets of a
 * shared session, public for as long as its share link, as the share view's player needs them.
 * Only the contents that session archived are served through the link.
 */
export async function shareAssetRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const gone = () => notFound('This share link does not exist or has expired');

  async function linkOf(token: string, reply: FastifyReply) {
    // As the share routes: a secret in the URL is never cached or sent on as a referrer.
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const link = await findActiveShareLink(fastify.database, hashSecret(token), new Date());
    if (link === undefined) throw gone();
    return link;
  }
  const sharedPath = (token: string) => (sha256: string) =>
    `/share/${encodeURIComponent(token)}/assets/${sha256}`;

  routes.get(
    '/share/:token/assets',
    {
      schema: {
        summary: "A shared session's archived assets (public, read-only, expires)",
        params: shareParams,
        response: { 200: sessionAssetsSchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const link = await linkOf(request.params.token, reply);
      const map = await sessionAssetMap(
        fastify.database,
        link.project_id,
        link.session_id,
        sharedPath(request.params.token),
      );
      if (map === undefined) throw gone();
      return map;
    },
  );
  routes.get(
    '/share/:token/assets/:sha256',
    {
      schema: {
        summary: 'An archived asset of a shared session (public, read-only, expires)',
        params: shareParams.extend(assetParams.shape),
      },
    },
    async (request, reply) => {
      const { token, sha256 } = request.params;
      const link = await linkOf(token, reply);
      const linked = await fastify.database
        .selectFrom('session_assets')
        .select('sha256')
        .where('project_id', '=', link.project_id)
        .where('session_id', '=', link.session_id)
        .where('sha256', '=', sha256)
        .executeTakeFirst();
      const served =
        linked === undefined
          ? undefined
          : await servedAsset(fastify, link.project_id, sha256, sharedPath(token));
      if (served === undefined) throw notFound(`No archived asset ${sha256} in the shared session`);
      // Not cached: the link expires, and its URL carries its secret.
      return reply
        .headers({ ...ARCHIVED_HEADERS, 'cache-control': 'no-store' })
        .type(served.contentType)
        .send(served.body);
    },
  );
}
