import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type SearchQuery, searchQuerySchema } from './query.ts';
import { SEARCH_SCOPES, search } from './search.ts';
import { searchAnswerSchema } from './views.ts';

/** The body: a structured query, or a question in words (with, optionally, the types, limit and cursor). */
const searchBodySchema = searchQuerySchema.safeExtend({
  question: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .describe(
      'A question in natural language ("failed calls on Safari last week"), turned into the structured query by the model (which then replaces q, from, to and filters); without a model its words are the free text',
    )
    .optional(),
});

/** How a question was turned into the query that ran, and whether a model did it. */
const interpretedSchema = z.object({
  query: searchQuerySchema,
  ai: z.object({ used: z.boolean(), model: z.string().optional(), reason: z.string().optional() }),
});

/** What turns a question into a structured query (the ai module's model, passed in by app.ts). */
export type InterpretQuestion = (
  request: FastifyRequest,
  question: string,
) => Promise<{ query: SearchQuery; ai: { used: boolean; model?: string; reason?: string } }>;

/** Without an interpreter: the question's words are the free text. */
const wordsOnly: InterpretQuestion = async (_request, question) => ({
  query: { q: question.slice(0, 256) },
  ai: { used: false, reason: 'No model takes part here: the question is searched as free text.' },
});

/**
 * `POST /v1/search`: one ranked, paginated query over the project's sessions, calls and issues
 * (servers/api/README.md, Search). A caller needs one of `sessions:read`, `calls:read`,
 * `issues:read` and searches the types it holds the scope of. Every statement is scoped by
 * `request.auth.project`.
 */
export default async function searchRoutes(
  fastify: FastifyInstance,
  options: { interpret?: InterpretQuestion } = {},
) {
  const interpret = options.interpret ?? wordsOnly;
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.post(
    '/v1/search',
    {
      config: { anyScope: Object.values(SEARCH_SCOPES) },
      schema: {
        summary: 'Search sessions, calls and issues: free text and filters, ranked',
        description:
          'Full-text and substring matches, ranked by where the text matched (errors and custom events, call failures and findings, issue titles above URLs and users above substrings), then by time; without `q`, newest first. Pass `nextCursor` back as `cursor` with the same query. Each result type needs its read scope (sessions:read, calls:read, issues:read): the default `types` are those the caller holds.',
        body: searchBodySchema,
        response: { 200: searchAnswerSchema.extend({ interpreted: interpretedSchema.optional() }) },
      },
    },
    async (request) => {
      const access = { projectId: request.auth.project.id, scopes: request.auth.scopes };
      const { question, ...query } = request.body;
      if (question === undefined) return search(fastify.database, access, query);
      const interpreted = await interpret(request, question);
      const { types, limit, cursor } = query;
      const combined: SearchQuery = {
        ...interpreted.query,
        ...(types === undefined ? {} : { types }),
        ...(limit === undefined ? {} : { limit }),
        ...(cursor === undefined ? {} : { cursor }),
      };
      return {
        ...(await search(fastify.database, access, combined)),
        interpreted: { ...interpreted, query: combined },
      };
    },
  );
}
