import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../platform/http/errors.ts';
import { visitIdSchema } from './query.ts';
import { findVisitSessions } from './session-queries.ts';
import { sessionSummarySchema, toSessionSummary } from './views.ts';

/** Most segments a VisitDetail lists (`truncated` says when there were more). */
const MAX_VISIT_SEGMENTS = 1000;

/** A visit: the sessions the SDK grouped under one `visitId`, oldest first. */
const visitDetailSchema = z.object({
  id: z.string(),
  startedAt: z.iso.datetime(),
  /** Start of the first segment to the end of the last one. */
  durationMs: z.int().min(0),
  segments: z.array(sessionSummarySchema),
  /** More than the segments listed exist. */
  truncated: z.boolean(),
});

/** `/v1/visits`: the token's project's visits. */
export default async function visitRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '/:id',
    {
      schema: {
        summary: "A visit's sessions as segments, oldest first",
        params: z.object({ id: visitIdSchema }),
        response: { 200: visitDetailSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { sessions, truncated } = await findVisitSessions(
        fastify.database,
        request.auth.project.id,
        id,
        MAX_VISIT_SEGMENTS,
      );
      const first = sessions[0];
      if (first === undefined) throw notFound(`No visit ${id}`);
      const end = Math.max(...sessions.map((session) => session.last_event_at.getTime()));
      return {
        id,
        startedAt: first.started_at.toISOString(),
        durationMs: Math.max(0, end - first.started_at.getTime()),
        segments: sessions.map(toSessionSummary),
        truncated,
      };
    },
  );
}
