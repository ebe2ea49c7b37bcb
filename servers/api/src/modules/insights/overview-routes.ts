import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import { checkTimeRange, timeParameter } from '../../platform/http/query.ts';
import { callOverview } from '../calls/index.ts';
import {
  callTotals,
  clickTotals,
  NO_VITALS,
  sessionTotals,
  topIssues,
  vitalPercentiles,
} from './release-repository.ts';
import { overviewSchema, type PeriodFacts, toOverview } from './releases.ts';

/** The overview's period when the query names none: the 7 days before now. */
const DEFAULT_PERIOD_MS = 7 * 24 * 3600 * 1000;
/** Issues listed by the overview. */
const TOP_ISSUES = 5;

const overviewQuerySchema = z
  .strictObject({
    from: timeParameter.optional().describe('Period start (inclusive; default: 7 days before `to`)'),
    to: timeParameter.optional().describe('Period end (exclusive; default: now)'),
  })
  .check(checkTimeRange);

/** Everything the overview reads of one period `[from, to)`. */
async function periodFacts(
  database: Kysely<Database>,
  projectId: string,
  range: { from: Date; to: Date },
): Promise<PeriodFacts> {
  const [sessions, clicks, vitals, calls, connect] = await Promise.all([
    sessionTotals(database, projectId, range, false),
    clickTotals(database, projectId, range),
    vitalPercentiles(database, projectId, range, false),
    callTotals(database, projectId, range, false),
    callOverview(database, projectId, range),
  ]);
  return {
    sessions: sessions.get(null) ?? { sessions: 0, users: 0, sessionsWithErrors: 0 },
    clicks,
    vitals: vitals.get(null) ?? NO_VITALS,
    calls: calls.get(null) ?? { calls: 0, scored: 0, poor: 0, medianQuality: null },
    connect: { calls: connect.calls, failedToConnect: connect.failedToConnect },
  };
}

/**
 * `/v1/dashboard/overview`: the project's health over a period (default the last 7 days) next to
 * the period of equal length before it.
 */
export default async function overviewRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '/overview',
    {
      schema: {
        summary:
          'Sessions, users, error rate, rage and dead clicks, web vitals, call quality, connect failures and top issues of a period, against the period before',
        querystring: overviewQuerySchema,
        response: { 200: overviewSchema },
      },
    },
    async (request) => {
      const to = request.query.to ?? new Date();
      const from = request.query.from ?? new Date(to.getTime() - DEFAULT_PERIOD_MS);
      const previousFrom = new Date(from.getTime() - (to.getTime() - from.getTime()));
      const projectId = request.auth.project.id;
      const [current, previous, issues] = await Promise.all([
        periodFacts(fastify.database, projectId, { from, to }),
        periodFacts(fastify.database, projectId, { from: previousFrom, to: from }),
        topIssues(fastify.database, projectId, { previousFrom, from, to }, TOP_ISSUES),
      ]);
      return toOverview({ previousFrom, from, to }, current, previous, issues);
    },
  );
}
