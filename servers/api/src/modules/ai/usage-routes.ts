import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { z } from 'zod';
import { createId } from '../../platform/ids.ts';
import { monthOf, readAiSettings } from './model.ts';

const monthSchema = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM')
  .describe('The calendar month (UTC), YYYY-MM; default: this month');

const tokensSchema = z.object({ requests: z.int(), inputTokens: z.int(), outputTokens: z.int() });

const usageSchema = z.object({
  organizationId: z.string(),
  month: z.string(),
  /** The organization's use of the model this month (every project). */
  organization: tokensSchema.extend({ totalTokens: z.int() }),
  /** This project's part of it. */
  project: tokensSchema,
  byFeature: z.array(tokensSchema.extend({ feature: z.string() })),
  /** The organization's monthly cap (null: none) and what is left of it. */
  cap: z.int().nullable(),
  remaining: z.int().nullable(),
});

/** What is rated. */
const feedbackSchema = z.strictObject({
  feature: z.enum(['summary', 'explain', 'search', 'chat', 'draft_pr', 'digest', 'anomaly']),
  /** What was rated: a session, issue, job or digest id, or a chat's id. */
  subjectId: z.string().trim().min(1).max(128),
  rating: z.enum(['up', 'down']),
  comment: z.string().trim().max(2000).optional(),
  /** The model that answered (`ai.model` of the answer), when one did. */
  model: z.string().trim().max(200).optional(),
});

/**
 * `GET /v1/ai/usage` (`ai:read`): the tokens the model used this month for the project's
 * organization (and this project, and per feature) against the cap; `POST /v1/ai/feedback`
 * (`ai:write`): a rating of an AI answer. servers/api/README.md, The model.
 */
export default async function aiUsageRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authorize('ai'));

  routes.get(
    '/usage',
    {
      schema: {
        summary:
          "Tokens the model used in a month for the project's organization, this project and each feature, against the cap",
        querystring: z.strictObject({ month: monthSchema.optional() }),
        response: { 200: usageSchema },
      },
    },
    async (request) => {
      const { organizationId, project } = request.auth;
      const month = request.query.month ?? monthOf(new Date()).slice(0, 7);
      const rows = await database
        .selectFrom('ai_usage')
        .select([
          'feature',
          'project_id',
          sql<number>`sum(requests)::int`.as('requests'),
          sql<number>`sum(input_tokens)::bigint`.as('input_tokens'),
          sql<number>`sum(output_tokens)::bigint`.as('output_tokens'),
        ])
        .where('organization_id', '=', organizationId)
        .where('month', '=', sql<Date>`${`${month}-01`}::date`)
        .groupBy(['feature', 'project_id'])
        .execute();
      const sum = (selected: typeof rows) =>
        selected.reduce(
          (total, row) => ({
            requests: total.requests + Number(row.requests),
            inputTokens: total.inputTokens + Number(row.input_tokens),
            outputTokens: total.outputTokens + Number(row.output_tokens),
          }),
          { requests: 0, inputTokens: 0, outputTokens: 0 },
        );
      const organization = sum(rows);
      const features = [...new Set(rows.map((row) => row.feature))].sort();
      const { monthlyTokenCap } = await readAiSettings(database, organizationId);
      const totalTokens = organization.inputTokens + organization.outputTokens;
      return {
        organizationId,
        month,
        organization: { ...organization, totalTokens },
        project: sum(rows.filter((row) => row.project_id === project.id)),
        byFeature: features.map((feature) => ({
          feature,
          ...sum(rows.filter((row) => row.feature === feature)),
        })),
        cap: monthlyTokenCap,
        remaining: monthlyTokenCap === null ? null : Math.max(0, monthlyTokenCap - totalTokens),
      };
    },
  );

  routes.post(
    '/feedback',
    {
      schema: {
        summary: 'Rate an AI answer (a summary, an explanation, a chat answer, a draft, a digest)',
        body: feedbackSchema,
        response: { 201: z.object({ id: z.string(), createdAt: z.iso.datetime() }) },
      },
    },
    async (request, reply) => {
      const { caller, project } = request.auth;
      const feedback = request.body;
      const row = await database
        .insertInto('ai_feedback')
        .values({
          project_id: project.id,
          id: createId('fb'),
          feature: feedback.feature,
          subject_id: feedback.subjectId,
          rating: feedback.rating,
          comment: feedback.comment ?? null,
          model: feedback.model ?? null,
          created_by: `${caller.type}:${caller.id}`,
        })
        .returning(['id', 'created_at'])
        .executeTakeFirstOrThrow();
      return reply.code(201).send({ id: row.id, createdAt: new Date(row.created_at).toISOString() });
    },
  );
}
