import { listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { decodeRecordCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { findDigestsPage } from './digest-repository.ts';
import { digestSchema, toDigestView } from './digests.ts';

/** Digests of one page at most. */
const MAX_DIGESTS_LIMIT = 100;
const DEFAULT_DIGESTS_LIMIT = 20;

/** `/v1/ai/digests`: the project's daily and weekly digests, newest first (`ai:read`). */
export default async function digestRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('ai'));

  routes.get(
    '/digests',
    {
      schema: {
        summary: "The project's daily and weekly digests, newest first",
        querystring: z.strictObject({
          period: z.enum(['daily', 'weekly']).optional().describe('Only digests of this period'),
          limit: integerParameter(1, MAX_DIGESTS_LIMIT).optional(),
          cursor: z.string().max(256).optional(),
        }),
        response: { 200: listPageSchema(digestSchema) },
      },
    },
    async (request) => {
      const { period, limit = DEFAULT_DIGESTS_LIMIT, cursor } = request.query;
      const rows = await findDigestsPage(fastify.database, request.auth.project.id, {
        period,
        before: cursor === undefined ? undefined : decodeRecordCursor(cursor, 'dig'),
        limit,
      });
      const { page, more } = keysetPage(rows, limit);
      return {
        items: page.map(toDigestView),
        nextCursor: more === undefined ? undefined : encodeIdCursor(more.id),
      };
    },
  );
}
