import { deviceClassSchema, idSchema, listPageSchema, networkTypeSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { decodeCallCursor, encodeCallCursor } from '../../platform/http/cursor.ts';
import { notFound } from '../../platform/http/errors.ts';
import {
  booleanParameter,
  checkTimeRange,
  integerParameter,
  textParameter,
  timeParameter,
} from '../../platform/http/query.ts';
import {
  type CallFilters,
  callOverview,
  DEFAULT_CALLS_LIMIT,
  findCallDetail,
  findCallsPage,
  MAX_CALLS_LIMIT,
} from './call-queries.ts';
import {
  callDetailSchema,
  callOverviewSchema,
  callSummarySchema,
  toCallDetail,
  toCallOverview,
  toCallSummary,
} from './views.ts';

const rangeShape = {
  from: timeParameter.optional().describe('Started at or after: ISO 8601 or epoch milliseconds'),
  to: timeParameter.optional().describe('Started before: ISO 8601 or epoch milliseconds'),
};

export const callListQuerySchema = z
  .strictObject({
    limit: integerParameter(1, MAX_CALLS_LIMIT)
      .optional()
      .describe(`Page size, 1..${MAX_CALLS_LIMIT} (default ${DEFAULT_CALLS_LIMIT})`),
    cursor: z.string().max(256).optional().describe('nextCursor of the previous page'),
    ...rangeShape,
    relayed: booleanParameter.optional().describe('true: calls whose path went through a TURN relay'),
    failedToConnect: booleanParameter.optional().describe('true: calls that never connected'),
    networkType: networkTypeSchema.optional().describe('wifi | cellular | ethernet | vpn | unknown'),
    minQuality: integerParameter(0, 100).optional().describe('Quality score at least (0..100)'),
    maxQuality: integerParameter(0, 100).optional().describe('Quality score at most (0..100)'),
    browser: textParameter().optional().describe('Browser name, case-insensitive'),
    os: textParameter().optional().describe('OS name, case-insensitive'),
    device: deviceClassSchema.optional().describe('desktop | mobile | tablet'),
    release: textParameter().optional().describe('Exact release'),
    endUser: textParameter().optional().describe("The session's user id"),
    hasIssue: booleanParameter
      .optional()
      .describe('true: calls with a finding of severity low or higher; false: none'),
  })
  .check((context) => {
    checkTimeRange(context);
    const { minQuality, maxQuality } = context.value;
    if (minQuality !== undefined && maxQuality !== undefined && minQuality > maxQuality) {
      context.issues.push({
        code: 'custom',
        message: '`maxQuality` must be at least `minQuality`',
        path: ['maxQuality'],
        input: context.value,
      });
    }
  });
type CallListQuery = z.output<typeof callListQuerySchema>;

const overviewQuerySchema = z.strictObject(rangeShape).check(checkTimeRange);

function toCallFilters(query: CallListQuery): CallFilters {
  const { limit: _limit, cursor: _cursor, ...filters } = query;
  return filters;
}

/**
 * `/v1/calls`: the token's project's calls (one per peer connection), as processing derived
 * them from `call.sample` and `call.event` items. Another project's call is a 404.
 */
export default async function callRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('calls'));

  routes.get(
    '',
    {
      schema: {
        summary: 'List calls, newest first',
        description:
          'Keyset pagination: pass `nextCursor` back as `cursor`. Filters combine with AND. Unknown parameters are refused.',
        querystring: callListQuerySchema,
        response: { 200: listPageSchema(callSummarySchema) },
      },
    },
    async (request) => {
      const { cursor, limit = DEFAULT_CALLS_LIMIT } = request.query;
      const page = await findCallsPage(fastify.database, request.auth.project.id, {
        filters: toCallFilters(request.query),
        after: cursor === undefined ? undefined : decodeCallCursor(cursor),
        limit,
      });
      return {
        items: page.calls.map(toCallSummary),
        nextCursor: page.next === undefined ? undefined : encodeCallCursor(page.next),
      };
    },
  );

  routes.get(
    '/overview',
    {
      schema: {
        summary:
          'Connect failure rate, relay rate, setup time percentiles, quality distribution, top failure reasons and breakdowns',
        querystring: overviewQuerySchema,
        response: { 200: callOverviewSchema },
      },
    },
    async (request) => {
      const range = { from: request.query.from, to: request.query.to };
      return toCallOverview(await callOverview(fastify.database, request.auth.project.id, range), range);
    },
  );

  routes.get(
    '/:id',
    {
      schema: {
        summary: 'One call: summary, per-track metric series, connection series, event markers, findings',
        params: z.object({ id: idSchema('call') }),
        response: { 200: callDetailSchema },
      },
    },
    async (request) => {
      const detail = await findCallDetail(fastify.database, request.auth.project.id, request.params.id);
      if (detail === undefined) throw notFound(`No call ${request.params.id}`);
      return toCallDetail(detail);
    },
  );
}
