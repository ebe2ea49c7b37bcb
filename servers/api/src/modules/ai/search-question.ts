import { generateText, stepCountIs, tool } from 'ai';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type InterpretQuestion, type SearchQuery, searchQuerySchema } from '../search/index.ts';
import { modelAccess, recordUsage } from './model.ts';
import { scrubText } from './scrub.ts';

// Natural-language search (servers/api/README.md, The model): the model turns a question into the
// structured query of `POST /v1/search` by calling a search tool whose parameters are that query's
// schema; the server runs the query. Without a model, or when the model's query is not valid, the
// question's words are the free text.

const INSTRUCTIONS =
  'You turn a question about recorded web sessions, WebRTC calls and issues into exactly one call of the search tool. Use its filters for browsers, operating systems, devices, releases, environments, users, call properties (relayed, failed to connect, quality) and time ranges; put the remaining words in q; leave out what the question does not say. Never answer in prose.';

/**
 * The interpreter `searchRoutes` is given (app.ts): the model's structured query for a question
 * when the organization's settings let the model answer `search`, its tokens counted.
 */
export function questionInterpreter(fastify: FastifyInstance): InterpretQuestion {
  return async (request: FastifyRequest, question: string) => {
    const words: SearchQuery = { q: question.slice(0, 256) };
    const access = await modelAccess(fastify.database, fastify.configuration, {
      organizationId: request.auth.organizationId,
      projectId: request.auth.project.id,
      feature: 'search',
    });
    if (!access.allowed) return { query: words, ai: { used: false, reason: access.reason } };
    try {
      const result = await generateText({
        model: access.model,
        system: `${INSTRUCTIONS} Now is ${new Date().toISOString()}.`,
        prompt: scrubText(question).text,
        tools: {
          search: tool({
            description:
              "Search the project's sessions, calls and issues: free text, filters and a time range",
            inputSchema: searchQuerySchema,
          }),
        },
        toolChoice: { type: 'tool', toolName: 'search' },
        stopWhen: stepCountIs(1),
        maxOutputTokens: 400,
        temperature: 0,
        maxRetries: 1,
      });
      await recordUsage(fastify.database, access, result.usage);
      const parsed = searchQuerySchema.safeParse(result.toolCalls[0]?.input);
      if (!parsed.success) {
        return {
          query: words,
          ai: {
            used: true,
            model: access.name,
            reason: "The model's query was not valid: the question's words were searched.",
          },
        };
      }
      const { cursor: _cursor, limit: _limit, ...query } = parsed.data;
      return { query, ai: { used: true, model: access.name } };
    } catch (error) {
      request.log.warn({ err: error }, 'the model did not answer');
      return {
        query: words,
        ai: {
          used: false,
          reason: `The model did not answer (${error instanceof Error ? error.message.slice(0, 200) : 'error'}): the question's words were searched.`,
        },
      };
    }
  };
}
