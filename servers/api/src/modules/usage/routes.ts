import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import { forPeopleOnly } from '../../platform/http/authentication.ts';
import { invalid } from '../../platform/http/errors.ts';
import { checkMembership, membershipOf } from '../orgs/index.ts';
import { type Caps, effectiveCaps, readCaps } from './caps.ts';
import {
  CAPPED_METRICS,
  type CappedMetric,
  dayOf,
  monthOf,
  USAGE_METRICS,
  type UsageMetric,
} from './metrics.ts';
import { type UsageTotals, usageReport } from './repository.ts';

/** The API's name of each metric. */
const API_NAMES = {
  sessions: 'sessions',
  chunks: 'chunks',
  ingested_bytes: 'ingestedBytes',
  stored_bytes: 'storedBytes',
  calls: 'calls',
  call_seconds: 'callSeconds',
  spans: 'spans',
  log_records: 'logRecords',
  ai_tokens: 'aiTokens',
} as const satisfies Record<UsageMetric, string>;

const totalsSchema = z.object(
  Object.fromEntries(USAGE_METRICS.map((metric) => [API_NAMES[metric], z.number()])) as Record<
    (typeof API_NAMES)[UsageMetric],
    z.ZodNumber
  >,
);

const toApi = (totals: UsageTotals) =>
  Object.fromEntries(USAGE_METRICS.map((metric) => [API_NAMES[metric], totals[metric]])) as z.infer<
    typeof totalsSchema
  >;

const capsSchema = z.object({
  sessions: z.number().nullable(),
  storedBytes: z.number().nullable(),
  aiTokens: z.number().nullable(),
});

const metricStateSchema = z.object({
  used: z.number(),
  cap: z.number().nullable(),
  percent: z.number().nullable(),
});

const monthSchema = z.object({
  month: z.string().describe('YYYY-MM (UTC)'),
  /** The caps that apply: the lower of the organization's own and its plan's. */
  caps: capsSchema,
  /** The organization's own caps (`PATCH /billing/caps`); null: the plan's only. */
  ownCaps: capsSchema,
  usage: z.object({
    sessions: metricStateSchema,
    storedBytes: metricStateSchema,
    aiTokens: metricStateSchema,
  }),
  /** New sessions are refused (a session or stored-bytes cap is reached). */
  recordingPaused: z.boolean(),
  /** The AI token cap is reached. */
  aiPaused: z.boolean(),
  resetsAt: z.string(),
});

const usageSchema = z.object({
  organizationId: z.string(),
  from: z.string(),
  to: z.string(),
  totals: totalsSchema,
  byProject: z.array(totalsSchema.extend({ projectId: z.string(), name: z.string().nullable() })),
  days: z.array(totalsSchema.extend({ day: z.string() })),
  month: monthSchema,
});

const daySchema = z.iso.date().describe('YYYY-MM-DD (UTC)');
const orgParams = z.object({ orgId: z.string().max(64) });

/** A range of at most this many days. */
const MAX_RANGE_DAYS = 366;

const capValue = z.int().min(0).max(Number.MAX_SAFE_INTEGER).nullable();
const capsChangeSchema = z
  .strictObject({
    sessions: capValue.optional().describe('Sessions started per month; null: no cap of your own'),
    storedBytes: capValue.optional().describe('Bytes stored; null: no cap of your own'),
    aiTokens: capValue.optional().describe('AI tokens per month; null: no cap of your own'),
  })
  .refine((change) => Object.keys(change).length > 0, {
    message: 'give at least one of sessions, storedBytes, aiTokens',
  });

/**
 * `GET /v1/orgs/{orgId}/usage` (members): what the organization used per day and project, and this
 * month against its caps; `PATCH /v1/orgs/{orgId}/billing/caps` (admins and owners, audited as
 * `usage.caps_changed`): the organization's own monthly caps. servers/api/README.md, Usage and caps.
 */
export default async function usageRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);

  async function month(organizationId: string): Promise<z.infer<typeof monthSchema>> {
    const [state, own] = await Promise.all([
      fastify.usageGate.refresh(organizationId),
      readCaps(database, organizationId),
    ]);
    const caps = Object.fromEntries(
      (Object.keys(CAPPED_METRICS) as CappedMetric[]).map((metric) => [metric, state.metrics[metric].cap]),
    ) as Caps;
    return {
      month: monthOf(new Date()).slice(0, 7),
      caps,
      ownCaps: own,
      usage: state.metrics,
      recordingPaused: state.refusedSince !== undefined,
      aiPaused: state.aiRefused,
      resetsAt: state.resetsAt.toISOString(),
    };
  }

  routes.get(
    '/:orgId/usage',
    {
      schema: {
        summary: 'What the organization used, per day and project, and this month against its caps',
        params: orgParams,
        querystring: z.strictObject({
          from: daySchema.optional().describe('First day (UTC), default the first of this month'),
          to: daySchema.optional().describe('Last day (UTC, included), default today'),
          projectId: z.string().max(64).optional().describe('One project only'),
        }),
        response: { 200: usageSchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const today = dayOf(new Date());
      const from = request.query.from ?? monthOf(new Date());
      const to = request.query.to ?? today;
      const days = (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
      if (days < 1) throw invalid('`from` must not be after `to`');
      if (days > MAX_RANGE_DAYS) throw invalid(`A range of at most ${MAX_RANGE_DAYS} days`);
      const [report, current] = await Promise.all([
        usageReport(database, orgId, { from, to, projectId: request.query.projectId }),
        month(orgId),
      ]);
      return {
        organizationId: orgId,
        from,
        to,
        totals: toApi(report.totals),
        byProject: report.byProject.map((project) => ({
          projectId: project.projectId,
          name: project.name,
          ...toApi(project),
        })),
        days: report.days.map((day) => ({ day: day.day, ...toApi(day) })),
        month: current,
      };
    },
  );

  routes.patch(
    '/:orgId/billing/caps',
    {
      config: { administer: true },
      schema: {
        summary: "Set the organization's own monthly caps (admins and owners)",
        description:
          'Caps of sessions started per month, bytes stored and AI tokens per month; null removes a cap of your own (the plan may still cap). At 80 % and 100 % `usage.threshold` is sent once per month and cap; at 100 % new sessions are refused (429) and the SDK stops starting them.',
        params: orgParams,
        body: capsChangeSchema,
        response: { 200: monthSchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const membership = membershipOf(request);
      const change = request.body;
      // Read before the transaction: on the embedded store it holds the one connection.
      const plan = await fastify.usagePlanCaps(orgId);
      await database.transaction().execute(async (transaction) => {
        const current = await readCaps(transaction, orgId);
        const next: Caps = {
          sessions: change.sessions === undefined ? current.sessions : change.sessions,
          storedBytes: change.storedBytes === undefined ? current.storedBytes : change.storedBytes,
          aiTokens: change.aiTokens === undefined ? current.aiTokens : change.aiTokens,
        };
        const values = {
          sessions: next.sessions,
          stored_bytes: next.storedBytes,
          ai_tokens: next.aiTokens,
          updated_by: membership.person.userId,
        };
        await transaction
          .insertInto('usage_caps')
          .values({ organization_id: orgId, ...values })
          .onConflict((conflict) =>
            conflict.column('organization_id').doUpdateSet({ ...values, updated_at: sql`now()` }),
          )
          .execute();
        // A changed cap is a new cap: its thresholds of this month are armed again.
        const before = effectiveCaps(current, plan);
        const after = effectiveCaps(next, plan);
        const changed = (Object.keys(CAPPED_METRICS) as CappedMetric[]).filter(
          (metric) => before[metric] !== after[metric],
        );
        if (changed.length > 0)
          await transaction
            .deleteFrom('usage_thresholds')
            .where('organization_id', '=', orgId)
            .where('month', '=', sql<Date>`${monthOf(new Date())}::date`)
            .where('metric', 'in', changed)
            .execute();
        await recordAudit(
          transaction,
          orgId,
          { type: 'user', id: membership.person.userId },
          auditOrigin(request),
          {
            action: 'usage.caps_changed',
            target: { type: 'organization', id: orgId },
            details: { from: current, to: next },
          },
        );
      });
      return month(orgId);
    },
  );
}
