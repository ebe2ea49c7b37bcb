import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../platform/http/errors.ts';
import { aiJobSchema, findAiJob, toAiJobView } from './jobs.ts';

const jobIdSchema = z
  .string()
  .regex(/^job_[0-7][0-9A-HJKMNP-TV-Z]{25}$/, { message: 'Expected an AI job id (job_…)' });

/**
 * `/v1/ai/jobs/{id}`: where an AI job of the caller's project stands (`ai:read`). Another
 * project's job is a 404, as one that does not exist.
 */
export default async function aiJobRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('ai'));

  routes.get(
    '/jobs/:id',
    {
      schema: {
        summary: 'An AI job: its kind, status, attempts, error and result',
        params: z.object({ id: jobIdSchema }),
        response: { 200: aiJobSchema },
      },
    },
    async (request) => {
      const job = await findAiJob(fastify.database, request.auth.project.id, request.params.id);
      if (job === undefined) throw notFound(`No AI job ${request.params.id}`);
      return toAiJobView(job);
    },
  );
}
