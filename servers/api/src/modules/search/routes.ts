import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { searchQuerySchema } from './query.ts';
import { SEARCH_SCOPES, search } from './search.ts';
import { searchAnswerSchema } from './views.ts';

/**
 * `POST /v1/search`: one ranked, paginated query over the project's sessions, calls and issues
 * (servers/api/README.md, Search). A caller needs one of `sessions:read`, `calls:read`,
 * `issues:read` and searches the types it holds the scope of. Every statement is scoped by
 * `request.auth.project`.
 */
export default async function searchRoutes(fastify: FastifyInstance) {
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
        body: searchQuerySchema,
        response: { 200: searchAnswerSchema },
      },
    },
    async (request) =>
      search(
        fastify.database,
        { projectId: request.auth.project.id, scopes: request.auth.scopes },
        request.body,
      ),
  );
}
