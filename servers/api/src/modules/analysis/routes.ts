import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../platform/http/errors.ts';
import { sessionIdSchema } from '../sessions/index.ts';
import { readReproduction, readTranscript } from './session-source.ts';
import { reproductionSchema, transcriptSchema } from './views.ts';

const sessionParams = z.object({ id: sessionIdSchema });

/**
 * `/v1/sessions/{id}/transcript` and `/v1/sessions/{id}/repro`: a session's transcript (JSON, or
 * `?format=text`) and its reproduction (steps and a Playwright script). Both read the session's
 * chunks; area `sessions` (`sessions:read`, also for the POST, which changes nothing). Another
 * project's session, or none, is a 404. servers/api/README.md, Transcripts and reproductions.
 */
export default async function analysisRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '/:id/transcript',
    {
      schema: {
        summary:
          "A session's transcript: a compact timeline with evidence ids (JSON, or text with ?format=text)",
        params: sessionParams,
        querystring: z.strictObject({ format: z.enum(['json', 'text']).optional() }),
        response: { 200: transcriptSchema },
      },
    },
    async (request, reply) => {
      const transcript = await readTranscript(fastify, request.log, request.auth.project, request.params.id);
      if (transcript === undefined) throw notFound(`No session ${request.params.id}`);
      if (request.query.format === 'text') {
        // Plain text, past the JSON response schema's serializer.
        const plain = reply as FastifyReply;
        return plain
          .type('text/plain; charset=utf-8')
          .serializer((text: string) => text)
          .send(transcript.text);
      }
      return transcript;
    },
  );

  routes.post(
    '/:id/repro',
    {
      config: { scope: 'sessions:read' },
      schema: {
        summary:
          "A session's reproduction: the steps, and a Playwright test script walking its navigation, clicks and typing",
        params: sessionParams,
        response: { 200: reproductionSchema },
      },
    },
    async (request) => {
      const reproduction = await readReproduction(
        fastify,
        request.log,
        request.auth.project,
        request.params.id,
      );
      if (reproduction === undefined) throw notFound(`No session ${request.params.id}`);
      return reproduction;
    },
  );
}
