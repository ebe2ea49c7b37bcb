import { listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Funnel, FunnelStep } from '../../platform/database/tables/insights.table.ts';
import { decodeRecordCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { invalid, notFound } from '../../platform/http/errors.ts';
import { checkTimeRange, integerParameter, timeParameter } from '../../platform/http/query.ts';
import { createId } from '../../platform/ids.ts';
import { readSettings } from '../projects/index.ts';
import {
  countFunnels,
  deleteFunnel,
  findFunnel,
  findFunnelMatches,
  findFunnelsPage,
  findRouteSequences,
  findSessionStarts,
  insertFunnel,
  type RouteSequence,
  type TimeRange,
  updateFunnel,
} from './funnel-repository.ts';
import { countFunnel } from './funnels.ts';
import { normalizeRoute } from './route.ts';

/** Funnels a project may have. */
const MAX_FUNNELS = 200;
const MAX_FUNNELS_LIMIT = 200;
const DAY_MS = 24 * 3600 * 1000;
/** The conversion window by default: a day. */
const DEFAULT_WINDOW_MS = DAY_MS;
/** The longest conversion window: 90 days. */
const MAX_WINDOW_MS = 90 * DAY_MS;
/** The range of results and suggestions by default: the 7 days before `to` (default now). */
const DEFAULT_RANGE_MS = 7 * DAY_MS;
/** Sessions listed per step as dropped off there, at most (the latest). */
const MAX_DROPPED_OFF = 20;
/** Draft funnels suggested. */
const SUGGESTIONS = 5;
/** Route sequences read to choose the suggestions from. */
const SEQUENCES_READ = 200;
/** Suggestions look at the latest this many sessions of the range. */
const SUGGESTION_SAMPLE = 10_000;

const funnelIdSchema = z
  .string()
  .regex(/^fnl_[0-7][0-9A-HJKMNP-TV-Z]{25}$/, { message: 'Expected a funnel id' });

const propertyValueSchema = z.union([z.string().max(1024), z.number(), z.boolean()]);

const funnelStepSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('pageview'),
    /**
     * A route as page views record it: a path, normalized when saved with the project's route
     * patterns (`/users/42/` is saved as `/users/:id`).
     */
    route: z.string().min(1).max(1024).startsWith('/'),
  }),
  z.strictObject({
    type: z.literal('event'),
    /** A custom event's name (SDK `track(name, props)`). */
    name: z.string().min(1).max(256),
    /** Properties the event must have, each equal (a string is not a number). */
    properties: z
      .record(z.string().min(1).max(128), propertyValueSchema)
      .refine((value) => Object.keys(value).length <= 20, 'at most 20 properties')
      .optional(),
  }),
  z.strictObject({
    type: z.literal('click'),
    /** The clicked element's CSS selector, as click facts record it. */
    selector: z.string().min(1).max(1024),
  }),
]);

const nameSchema = z.string().trim().min(1).max(128);
const stepsSchema = z.array(funnelStepSchema).min(2).max(10);
const windowSchema = z.int().min(1).max(MAX_WINDOW_MS);
const countBySchema = z.enum(['session', 'user']);

const funnelCreateSchema = z.strictObject({
  name: nameSchema,
  steps: stepsSchema,
  /** Every step within this long after the first (default a day). */
  windowMs: windowSchema.default(DEFAULT_WINDOW_MS),
  countBy: countBySchema.default('session'),
});
const funnelUpdateSchema = z
  .strictObject({
    name: nameSchema.optional(),
    steps: stepsSchema.optional(),
    windowMs: windowSchema.optional(),
    countBy: countBySchema.optional(),
  })
  .refine((value) => Object.keys(value).length > 0, 'give at least one of name, steps, windowMs, countBy');

const funnelSchema = z.object({
  id: z.string(),
  name: z.string(),
  steps: z.array(funnelStepSchema),
  windowMs: z.int(),
  countBy: countBySchema,
  /** Who made it: a user's id (`usr_…`) or an API token's (`tok_…`). */
  createdBy: z.string().optional(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

const droppedOffSchema = z.object({
  sessionId: z.string(),
  /** Counting by user: the user's id (absent for a session without one, counted on its own). */
  userId: z.string().optional(),
  /** When it reached the last step it did (the previous one). */
  at: z.iso.datetime(),
  links: z.object({
    /** The replay at the moment of the last step it reached. */
    replay: z.string(),
  }),
});

const funnelResultsSchema = z.object({
  funnelId: z.string(),
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  windowMs: z.int(),
  countBy: countBySchema,
  steps: z.array(
    z.object({
      step: funnelStepSchema,
      /** Sessions (or users) that reached this step, in order, within the window. */
      count: z.int(),
      /** `count` over the previous step's (the first step: 1); null when that is 0. */
      conversionFromPrevious: z.number().nullable(),
      /** `count` over the first step's; null when that is 0. */
      conversionFromFirst: z.number().nullable(),
      /** Median time from the previous step; null for the first step or without any. */
      medianTimeFromPreviousMs: z.number().nullable(),
      /** Reached the previous step, not this one (0 for the first step). */
      droppedOffCount: z.int(),
      /** The latest 20 of them. */
      droppedOff: z.array(droppedOffSchema),
    }),
  ),
});

const suggestionsSchema = z.object({
  items: z.array(
    z.object({
      /** Sessions that walked these routes one after the other. */
      sessions: z.int(),
      /** A funnel body ready for `POST /v1/funnels`. */
      draft: z.object({
        name: z.string(),
        steps: z.array(funnelStepSchema),
        windowMs: z.int(),
        countBy: countBySchema,
      }),
    }),
  ),
});

const rangeQuerySchema = z
  .strictObject({
    from: timeParameter
      .optional()
      .describe('At or after: ISO 8601 or epoch milliseconds (default: `to` − 7 days)'),
    to: timeParameter.optional().describe('Before: ISO 8601 or epoch milliseconds (default: now)'),
  })
  .check(checkTimeRange);

const listQuerySchema = z.strictObject({
  limit: integerParameter(1, MAX_FUNNELS_LIMIT).optional(),
  cursor: z.string().max(256).optional(),
});

const idParams = z.object({ id: funnelIdSchema });

function parseSteps(steps: unknown): FunnelStep[] {
  return (typeof steps === 'string' ? JSON.parse(steps) : steps) as FunnelStep[];
}

function toFunnel(row: Funnel): z.infer<typeof funnelSchema> {
  return {
    id: row.id,
    name: row.name,
    steps: parseSteps(row.steps),
    windowMs: Number(row.window_ms),
    countBy: row.count_by,
    ...(row.created_by === null ? {} : { createdBy: row.created_by }),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/**
 * The steps with each page view's route normalized as the facts job names page views
 * (`normalizeRoute` with the project's route patterns), so `/product/123` is `/product/:id` and,
 * with the pattern `/docs/:slug`, `/docs/intro` is `/docs/:slug`. A normalized route stays as it is.
 */
function normalizeSteps(steps: readonly FunnelStep[], routePatterns: readonly string[]): FunnelStep[] {
  return steps.map((step) =>
    step.type === 'pageview' ? { ...step, route: normalizeRoute(step.route, routePatterns) } : step,
  );
}

/** The project's route patterns (`insights.routePatterns` of its settings). */
function routePatternsOf(project: { settings: unknown }): readonly string[] {
  return readSettings(project.settings).insights.routePatterns;
}

/** The query's range with its defaults; a 400 when a `from` alone is not before now. */
function rangeOf(query: { from?: Date | undefined; to?: Date | undefined }): TimeRange {
  const to = query.to ?? new Date();
  const from = query.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS);
  if (from.getTime() >= to.getTime())
    throw invalid('Invalid querystring: `from` must be before `to` (default: now)');
  return { from, to };
}

/**
 * The sequences worth suggesting: a sequence inside a longer one that as many sessions walked
 * says nothing more, so it is left out; then the first `count`.
 */
function chooseSuggestions(sequences: readonly RouteSequence[], count: number): RouteSequence[] {
  const inside = (short: readonly string[], long: readonly string[]) =>
    long.length > short.length &&
    long.some((_, start) => short.every((route, index) => long[start + index] === route));
  return sequences
    .filter(
      (sequence) =>
        !sequences.some(
          (other) => other.sessions === sequence.sessions && inside(sequence.routes, other.routes),
        ),
    )
    .slice(0, count);
}

const noFunnel = (id: string) => notFound(`No funnel ${id}`);

/**
 * `/v1/funnels`: the project's saved funnels, their results over the facts of a time range, and
 * draft funnels from the route sequences sessions walked. Funnels are read and written as
 * sessions are (`sessions:read`, `sessions:write`). Another project's funnel is a 404. The
 * counting is in funnels.ts, the storage in funnel-repository.ts.
 */
export default async function funnelRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));
  const database = fastify.database;
  const appUrl = fastify.configuration.appUrl;

  routes.get(
    '',
    {
      schema: {
        summary: 'List funnels, oldest first',
        querystring: listQuerySchema,
        response: { 200: listPageSchema(funnelSchema) },
      },
    },
    async (request) => {
      const { cursor, limit = 50 } = request.query;
      const page = await findFunnelsPage(database, request.auth.project.id, {
        after: cursor === undefined ? undefined : decodeRecordCursor(cursor, 'fnl'),
        limit,
      });
      return {
        items: page.funnels.map(toFunnel),
        nextCursor: page.next === undefined ? undefined : encodeIdCursor(page.next),
      };
    },
  );

  routes.post(
    '',
    {
      schema: {
        summary: 'Create a funnel: 2 to 10 ordered steps, a conversion window, counted per session or user',
        body: funnelCreateSchema,
        response: { 201: funnelSchema },
      },
    },
    async (request, reply) => {
      const projectId = request.auth.project.id;
      if ((await countFunnels(database, projectId)) >= MAX_FUNNELS)
        throw invalid(`A project has at most ${MAX_FUNNELS} funnels`, 409);
      const row = await insertFunnel(database, projectId, createId('fnl'), {
        ...request.body,
        steps: normalizeSteps(request.body.steps, routePatternsOf(request.auth.project)),
        createdBy: request.auth.caller.id,
      });
      return reply.code(201).send(toFunnel(row));
    },
  );

  routes.get(
    '/suggestions',
    {
      schema: {
        summary: 'Draft funnels from the route sequences most sessions walked',
        querystring: rangeQuerySchema,
        response: { 200: suggestionsSchema },
      },
    },
    async (request) => {
      const sequences = await findRouteSequences(database, request.auth.project.id, rangeOf(request.query), {
        sample: SUGGESTION_SAMPLE,
        limit: SEQUENCES_READ,
      });
      return {
        items: chooseSuggestions(sequences, SUGGESTIONS).map((sequence) => ({
          sessions: sequence.sessions,
          draft: {
            name: sequence.routes.join(' → ').slice(0, 128),
            steps: sequence.routes.map((route) => ({ type: 'pageview' as const, route })),
            windowMs: DEFAULT_WINDOW_MS,
            countBy: 'session' as const,
          },
        })),
      };
    },
  );

  routes.get(
    '/:id',
    { schema: { summary: 'One funnel', params: idParams, response: { 200: funnelSchema } } },
    async (request) => {
      const row = await findFunnel(database, request.auth.project.id, request.params.id);
      if (row === undefined) throw noFunnel(request.params.id);
      return toFunnel(row);
    },
  );

  routes.patch(
    '/:id',
    {
      schema: {
        summary: 'Rename a funnel, or change its steps, window or counting',
        params: idParams,
        body: funnelUpdateSchema,
        response: { 200: funnelSchema },
      },
    },
    async (request) => {
      const { steps } = request.body;
      const row = await updateFunnel(
        database,
        request.auth.project.id,
        request.params.id,
        {
          ...request.body,
          steps:
            steps === undefined ? undefined : normalizeSteps(steps, routePatternsOf(request.auth.project)),
        },
        new Date(),
      );
      if (row === undefined) throw noFunnel(request.params.id);
      return toFunnel(row);
    },
  );

  routes.delete(
    '/:id',
    { schema: { summary: 'Delete a funnel', params: idParams } },
    async (request, reply) => {
      const deleted = await deleteFunnel(database, request.auth.project.id, request.params.id);
      if (deleted === undefined) throw noFunnel(request.params.id);
      return reply.code(204).send();
    },
  );

  routes.get(
    '/:id/results',
    {
      schema: {
        summary: "A funnel's results: per step the count, conversions, median time and drop-offs",
        description:
          'Every fact (page view, click, custom event) of the range counts, the first step too: `from` inclusive, `to` exclusive.',
        params: idParams,
        querystring: rangeQuerySchema,
        response: { 200: funnelResultsSchema },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      const row = await findFunnel(database, projectId, request.params.id);
      if (row === undefined) throw noFunnel(request.params.id);
      const saved = toFunnel(row);
      // Routes saved before the project's patterns changed are matched as page views are named now.
      const funnel = { ...saved, steps: normalizeSteps(saved.steps, routePatternsOf(request.auth.project)) };
      const range = rangeOf(request.query);
      const units = await findFunnelMatches(database, projectId, funnel.steps, funnel.countBy, range);
      const counts = countFunnel(units, funnel.steps.length, funnel.windowMs);
      const listed = counts.map((count) => count.droppedOff.slice(0, MAX_DROPPED_OFF));
      const starts = await findSessionStarts(database, projectId, [
        ...new Set(listed.flat().map((unit) => unit.sessionId)),
      ]);
      return {
        funnelId: funnel.id,
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        windowMs: funnel.windowMs,
        countBy: funnel.countBy,
        steps: counts.map((count, index) => ({
          step: funnel.steps[index] as FunnelStep,
          count: count.count,
          conversionFromPrevious: count.conversionFromPrevious,
          conversionFromFirst: count.conversionFromFirst,
          medianTimeFromPreviousMs: count.medianTimeFromPreviousMs,
          droppedOffCount: count.droppedOff.length,
          droppedOff: (listed[index] ?? []).map((unit) => {
            const start = starts.get(unit.sessionId);
            const offset = start === undefined ? undefined : Math.max(0, Math.round(unit.t - start));
            return {
              sessionId: unit.sessionId,
              ...(unit.unit.startsWith('user:') ? { userId: unit.unit.slice('user:'.length) } : {}),
              at: new Date(unit.t).toISOString(),
              links: {
                replay: `${appUrl}/sessions/${unit.sessionId}${offset === undefined ? '' : `?t=${offset}`}`,
              },
            };
          }),
        })),
      };
    },
  );
}
