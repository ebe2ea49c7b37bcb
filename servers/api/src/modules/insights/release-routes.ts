import { listPageSchema, releaseRegressionSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { decodeOffsetCursor, encodeOffsetCursor } from '../../platform/http/cursor.ts';
import { checkTimeRange, integerParameter, textParameter, timeParameter } from '../../platform/http/query.ts';
import { findReleaseRegressions } from './regressions.ts';
import { DEFAULT_RELEASES_LIMIT, findReleasesPage, MAX_RELEASES_LIMIT } from './release-repository.ts';
import { releaseSchema, toRelease } from './releases.ts';

/** A `release.regression` that fired for a release: the webhook's `data.regression`, and when. */
const firedRegressionSchema = releaseRegressionSchema.extend({
  /** When the regression check found it (and notified). */
  firedAt: z.iso.datetime(),
});

/** One release of `GET /v1/releases`, with the regressions that fired for it. */
const releaseListItemSchema = releaseSchema.extend({
  /**
   * The `release.regression` alerts recorded for it (`insight_alerts`), oldest first: the metric,
   * the release it was compared with and the numbers; empty when none fired. With `environment`,
   * that environment's only.
   */
  regressions: z.array(firedRegressionSchema),
});

const releaseListQuerySchema = z
  .strictObject({
    limit: integerParameter(1, MAX_RELEASES_LIMIT)
      .optional()
      .describe(`Page size, 1..${MAX_RELEASES_LIMIT} (default ${DEFAULT_RELEASES_LIMIT})`),
    cursor: z.string().max(256).optional().describe('nextCursor of the previous page'),
    from: timeParameter.optional().describe('First seen at or after: ISO 8601 or epoch milliseconds'),
    to: timeParameter.optional().describe('First seen before: ISO 8601 or epoch milliseconds'),
    environment: textParameter()
      .optional()
      .describe("Only this environment's sessions, calls and page views"),
  })
  .check(checkTimeRange);

/**
 * `/v1/releases`: the project's releases (the `release` its sessions reported), first seen newest
 * first, each with its sessions, users, error rate, new issues, call quality, web vitals and the
 * regressions that fired for it.
 */
export default async function releaseRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '',
    {
      schema: {
        summary: 'List releases, first seen newest first, with their health',
        description:
          'Pass `nextCursor` back as `cursor`. `from`/`to` select releases by when they were first seen; `environment` restricts every number to that environment. Unknown parameters are refused.',
        querystring: releaseListQuerySchema,
        response: { 200: listPageSchema(releaseListItemSchema) },
      },
    },
    async (request) => {
      const { cursor, limit = DEFAULT_RELEASES_LIMIT, from, to, environment } = request.query;
      const offset = cursor === undefined ? 0 : decodeOffsetCursor(cursor);
      const page = await findReleasesPage(fastify.database, request.auth.project.id, {
        filters: { from, to, environment },
        offset,
        limit,
      });
      const regressions = await findReleaseRegressions(
        fastify.database,
        request.auth.project.id,
        page.releases.map((release) => release.release),
        environment,
      );
      return {
        items: page.releases.map((release) => ({
          ...toRelease(release),
          regressions: regressions.get(release.release) ?? [],
        })),
        nextCursor: page.more ? encodeOffsetCursor(offset + limit) : undefined,
      };
    },
  );
}
