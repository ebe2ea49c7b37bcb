import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkTimeRange, integerParameter, textParameter, timeParameter } from '../../platform/http/query.ts';
import {
  findBackdrop,
  findClickHeatmap,
  findScrollDepths,
  findVitals,
  type TimeRange,
  type VitalsRow,
} from './insight-queries.ts';
import { rateVital, type VitalName } from './vitals.ts';

// `GET /v1/vitals` and `GET /v1/heatmaps` (servers/api/README.md, Insights): reads of the facts
// tables that the facts job fills. Both need the `sessions` scope (they are made of sessions).

const DAY_MS = 24 * 3600 * 1000;
/** The default range: the last 7 days. */
const DEFAULT_RANGE_MS = 7 * DAY_MS;
/** The longest range a request may ask for. */
const MAX_RANGE_MS = 366 * DAY_MS;
const MAX_ROUTES = 200;
const DEFAULT_ROUTES = 50;
const HEATMAP_ELEMENTS = 100;
const POINTS_PER_ELEMENT = 50;
const SCROLL_STEP_PX = 100;

const rangeShape = {
  from: timeParameter
    .optional()
    .describe('Page views started at or after: ISO 8601 or epoch ms (default: `to` − 7 days)'),
  to: timeParameter.optional().describe('Page views started before: ISO 8601 or epoch ms (default: now)'),
};

function checkRangeLength(context: z.core.ParsePayload<{ from?: Date | undefined; to?: Date | undefined }>) {
  const { from, to } = context.value;
  if (from !== undefined && to !== undefined && to.getTime() - from.getTime() > MAX_RANGE_MS) {
    context.issues.push({
      code: 'custom',
      message: 'the range from `from` to `to` may be at most 366 days',
      path: ['from'],
      input: context.value,
    });
  }
}

const breakpointSchema = z.enum(['mobile', 'tablet', 'desktop']);

const vitalsQuerySchema = z
  .strictObject({
    ...rangeShape,
    route: textParameter(2048).optional().describe('Only this route (as listed, e.g. `/orders/:id`)'),
    device: textParameter().optional().describe('Device class: desktop, mobile, tablet'),
    browser: textParameter().optional().describe('Browser name, e.g. Chrome'),
    release: textParameter().optional(),
    environment: textParameter().optional(),
    limit: integerParameter(1, MAX_ROUTES)
      .optional()
      .describe(
        `Routes listed, those with most page views first (1..${MAX_ROUTES}, default ${DEFAULT_ROUTES})`,
      ),
  })
  .check(checkTimeRange)
  .check(checkRangeLength);

const ratingSchema = z.enum(['good', 'needs-improvement', 'poor']);

const vitalSummarySchema = z.object({
  /** Page views that reported this vital. */
  count: z.int(),
  /** The 75th percentile (nearest rank), ms (CLS unitless); absent without values. */
  p75: z.number().optional(),
  rating: ratingSchema.optional(),
  /** Shares (0..1) of the values rated good, needs-improvement and poor. */
  good: z.number(),
  needsImprovement: z.number(),
  poor: z.number(),
});

const metricsSchema = z.object({
  LCP: vitalSummarySchema,
  INP: vitalSummarySchema,
  CLS: vitalSummarySchema,
  FCP: vitalSummarySchema,
  TTFB: vitalSummarySchema,
});

const vitalsResponseSchema = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  overall: z.object({ pageViews: z.int(), metrics: metricsSchema }),
  routes: z.array(z.object({ route: z.string(), pageViews: z.int(), metrics: metricsSchema })),
  series: z.array(z.object({ day: z.iso.date(), pageViews: z.int(), metrics: metricsSchema })),
});

const heatmapQuerySchema = z
  .strictObject({
    ...rangeShape,
    route: textParameter(2048).describe('The route, as `GET /v1/vitals` lists it (e.g. `/orders/:id`)'),
    kind: z.enum(['click', 'rageclick', 'deadclick', 'scroll']),
    breakpoint: breakpointSchema.optional().describe('mobile (< 768 px wide), tablet (< 1024 px) or desktop'),
  })
  .check(checkTimeRange)
  .check(checkRangeLength);

const heatmapResponseSchema = z.object({
  route: z.string(),
  kind: z.enum(['click', 'rageclick', 'deadclick', 'scroll']),
  breakpoint: breakpointSchema.optional(),
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  /** Clicks of the kind in the range (click kinds). */
  total: z.int().optional(),
  /** Per element selector, most clicked first (click kinds). */
  elements: z
    .array(
      z.object({
        /** CSS selector below `body` (null: the click's target was not in the recorded snapshot). */
        selector: z.string().nullable(),
        count: z.int(),
        /** Recent clicks: on the page (px, scroll included) and within the element (fractions 0..1). */
        points: z.array(
          z.object({
            pageX: z.int(),
            pageY: z.int(),
            elementX: z.number().nullable(),
            elementY: z.number().nullable(),
          }),
        ),
      }),
    )
    .optional(),
  /** Page views of the route in the range (scroll). */
  pageViews: z.int().optional(),
  medianPageHeight: z.int().optional(),
  /** Per 100 px of depth, the page views that saw that far down, and their share (scroll). */
  depths: z.array(z.object({ depth: z.int(), reached: z.int(), share: z.number() })).optional(),
  /** A recent session on the route whose recorded page can be drawn under the heatmap. */
  backdrop: z
    .object({
      sessionId: z.string(),
      /** Milliseconds from the session's start to the page view. */
      offsetMs: z.int(),
      replay: z.string(),
    })
    .optional(),
});

/** The range of a query, with its defaults. */
function rangeOf(query: { from?: Date | undefined; to?: Date | undefined }): TimeRange {
  const to =
    query.to ?? (query.from === undefined ? new Date() : new Date(query.from.getTime() + DEFAULT_RANGE_MS));
  const from = query.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS);
  return { from, to };
}

function toMetrics(row: VitalsRow) {
  const metrics = {} as Record<VitalName, z.infer<typeof vitalSummarySchema>>;
  for (const [name, counts] of Object.entries(row.metrics) as Array<
    [VitalName, VitalsRow['metrics'][VitalName]]
  >) {
    const { count, p75, good, poor } = counts;
    metrics[name] = {
      count,
      ...(p75 === null ? {} : { p75, rating: rateVital(name, p75) }),
      good: count === 0 ? 0 : good / count,
      needsImprovement: count === 0 ? 0 : (count - good - poor) / count,
      poor: count === 0 ? 0 : poor / count,
    };
  }
  return metrics;
}

const HEATMAP_KINDS = { click: 'click', rageclick: 'rage', deadclick: 'dead' } as const;

export default async function insightRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '/vitals',
    {
      schema: {
        summary: 'Web vitals at p75 with the share of each rating: overall, per route and per day',
        description:
          'LCP, INP, CLS, FCP and TTFB of the page views in the range (default: the last 7 days), rated with web.dev thresholds. Filters combine with AND.',
        querystring: vitalsQuerySchema,
        response: { 200: vitalsResponseSchema },
      },
    },
    async (request) => {
      const { from: _from, to: _to, limit = DEFAULT_ROUTES, ...filters } = request.query;
      const range = rangeOf(request.query);
      const found = await findVitals(fastify.database, request.auth.project.id, range, filters, limit);
      return {
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        overall: { pageViews: found.overall.pageViews, metrics: toMetrics(found.overall) },
        routes: found.routes.map((row) => ({
          route: row.route,
          pageViews: row.pageViews,
          metrics: toMetrics(row),
        })),
        series: found.days.map((row) => ({
          day: row.day,
          pageViews: row.pageViews,
          metrics: toMetrics(row),
        })),
      };
    },
  );

  routes.get(
    '/heatmaps',
    {
      schema: {
        summary: 'Click, rage click, dead click or scroll heatmap of a route',
        description:
          'Clicks are counted per element selector with recent positions to draw; `scroll` gives the share of page views that reached each depth. `backdrop` names a recent session whose recording shows the page.',
        querystring: heatmapQuerySchema,
        response: { 200: heatmapResponseSchema },
      },
    },
    async (request) => {
      const { route, kind, breakpoint } = request.query;
      const range = rangeOf(request.query);
      const projectId = request.auth.project.id;
      const backdrop = await findBackdrop(fastify.database, projectId, { route, breakpoint, range });
      const common = {
        route,
        kind,
        ...(breakpoint === undefined ? {} : { breakpoint }),
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        ...(backdrop === undefined
          ? {}
          : {
              backdrop: {
                sessionId: backdrop.sessionId,
                offsetMs: Math.max(0, backdrop.startedAt.getTime() - backdrop.sessionStartedAt.getTime()),
                replay: `${fastify.configuration.appUrl}/sessions/${backdrop.sessionId}?t=${Math.max(
                  0,
                  backdrop.startedAt.getTime() - backdrop.sessionStartedAt.getTime(),
                )}`,
              },
            }),
      };
      if (kind === 'scroll') {
        const depths = await findScrollDepths(
          fastify.database,
          projectId,
          { route, breakpoint, range },
          SCROLL_STEP_PX,
        );
        return {
          ...common,
          pageViews: depths.pageViews,
          ...(depths.medianPageHeight === null
            ? {}
            : { medianPageHeight: Math.round(depths.medianPageHeight) }),
          depths: depths.steps.map((step) => ({
            ...step,
            share: depths.pageViews === 0 ? 0 : step.reached / depths.pageViews,
          })),
        };
      }
      const heatmap = await findClickHeatmap(
        fastify.database,
        projectId,
        { route, kind: HEATMAP_KINDS[kind], breakpoint, range },
        HEATMAP_ELEMENTS,
        POINTS_PER_ELEMENT,
      );
      return { ...common, total: heatmap.total, elements: heatmap.elements };
    },
  );
}
