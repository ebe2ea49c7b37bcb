import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import type { ShareLink } from '../../platform/database/tables/share-links.table.ts';
import { notFound } from '../../platform/http/errors.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { prefersHtml } from '../../platform/http/web-app.ts';
import { hashSecret } from '../../platform/secrets.ts';
import { findProjectById } from '../projects/index.ts';
import { readChunkBytes } from './chunk-reader.ts';
import { loadSessionDetail } from './detail.ts';
import { findActiveShareLink, findChunk } from './session-queries.ts';
import { chunkManifestEntrySchema, sessionDetailSchema } from './views.ts';

/** The public view of a shared session: its SessionDetail, with a URL for each chunk. */
const sharedSessionSchema = sessionDetailSchema.extend({
  chunks: z.array(chunkManifestEntrySchema.extend({ url: z.string() })),
  share: z.object({ expiresAt: z.iso.datetime() }),
});

const tokenParams = z.object({ token: z.string().min(1).max(100) });

const gone = () => notFound('This share link does not exist or has expired');

/**
 * `/share/{token}`: public (no API token), read-only. A browser's navigation (`Accept` preferring
 * `text/html` to JSON) gets the dashboard's page instead, the share view; API clients get JSON. The token reaches exactly one session of
 * one project; an unknown or expired token is a 404. Only the token's hash is stored, so a
 * database leak does not leak working links.
 */
export default async function shareRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();

  /** The link and its project, or a 404 for an unknown or expired token. */
  async function resolve(token: string, reply: FastifyReply): Promise<{ link: ShareLink; project: Project }> {
    // Share pages carry a secret in their URL: never cache them, never leak it as a referrer.
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const link = await findActiveShareLink(fastify.database, hashSecret(token), new Date());
    if (link === undefined) throw gone();
    const project = await findProjectById(fastify.database, link.project_id);
    if (project === undefined) throw gone();
    return { link, project };
  }

  routes.get(
    '/:token',
    {
      schema: {
        summary: 'A shared session (public, read-only, expires)',
        params: tokenParams,
        response: { 200: sharedSessionSchema },
      },
    },
    async (request, reply) => {
      const { token } = request.params;
      if (prefersHtml(request)) {
        // A browser opening the link gets the dashboard's share page, which asks this same URL
        // for JSON (and says so when the link has expired). The page holds no session data.
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
        return reply.callNotFound();
      }
      const { link } = await resolve(token, reply);
      const found = await loadSessionDetail(fastify.database, link.project_id, link.session_id);
      if (found === undefined) throw gone();
      // A share link is public: who the end user is (id, email, name) stays out of it.
      const { user: _user, ...detail } = found;
      const base = `${fastify.configuration.publicUrl}/share/${encodeURIComponent(token)}`;
      return {
        ...detail,
        chunks: detail.chunks.map((chunk) => ({ ...chunk, url: `${base}/chunks/${chunk.seq}` })),
        share: { expiresAt: link.expires_at.toISOString() },
      };
    },
  );

  routes.get(
    '/:token/chunks/:seq',
    {
      schema: {
        summary: "A shared session's chunk JSON (public, read-only, expires)",
        params: tokenParams.extend({ seq: integerParameter(0, 2_147_483_647) }),
      },
    },
    async (request, reply) => {
      const { token, seq } = request.params;
      const { link, project } = await resolve(token, reply);
      const chunk = await findChunk(fastify.database, link.project_id, link.session_id, seq);
      if (chunk === undefined) throw notFound(`No chunk ${seq} in the shared session`);
      const bytes = await readChunkBytes(fastify, request.log, project, chunk);
      return reply.type('application/json').send(withoutEndUserIdentity(bytes));
    },
  );
}

/**
 * A shared chunk without who the end user is: `meta.user` and `identify` events are removed
 * (the recording itself was already masked by the SDK's privacy rules). The rest is re-serialized
 * unchanged.
 */
export function withoutEndUserIdentity(bytes: Uint8Array): string {
  const chunk = JSON.parse(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  ) as {
    meta?: { user?: unknown };
    events?: Array<{ type?: unknown }>;
  };
  if (chunk.meta !== undefined) delete chunk.meta.user;
  if (Array.isArray(chunk.events)) chunk.events = chunk.events.filter((event) => event?.type !== 'identify');
  return JSON.stringify(chunk);
}
