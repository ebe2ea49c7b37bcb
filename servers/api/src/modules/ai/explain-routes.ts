import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../platform/http/errors.ts';
import {
  clusterExplanationSchema,
  explainCall,
  explainCluster,
  explainSession,
  explanationSchema,
  readTranscriptSources,
} from '../analysis/index.ts';
import { findCluster, findLatestClusterError } from '../issues/index.ts';
import { sessionIdSchema } from '../sessions/index.ts';
import { type ModelNote, modelNoteSchema, noModel } from './model-note.ts';
import { summarizeSession, summarySchema } from './summary.ts';

const sessionParams = z.object({ id: sessionIdSchema });
const clusterParams = z.object({ id: z.string().regex(/^cl_[0-9A-HJKMNP-TV-Z]{26}$/, 'an issue id (cl_…)') });

const explainBodySchema = z
  .strictObject({
    callId: z
      .string()
      .regex(/^call_[0-9A-HJKMNP-TV-Z]{26}$/, 'a call id (call_…)')
      .optional()
      .describe('Explain this call of the session instead of the whole session'),
  })
  .nullish();

/** A frame of the latest error, as processing stored it (symbolicated where a map matched). */
const frameSchema = z.object({
  function: z.string().optional(),
  file: z.string().optional(),
  line: z.int().optional(),
  column: z.int().optional(),
  mapped: z.boolean(),
  context: z.object({ before: z.array(z.string()), line: z.string(), after: z.array(z.string()) }).optional(),
});

const draftSchema = z.object({
  issueId: z.string(),
  /** The error the patch would fix: the latest occurrence's name, message and frames. */
  error: z
    .object({
      sessionId: z.string(),
      name: z.string(),
      message: z.string().optional(),
      frames: z.array(frameSchema),
    })
    .optional(),
  /** Where a fix would go: the top frame that a source map mapped, with its source lines. */
  location: frameSchema.optional(),
  /** A proposed patch as a unified diff (never applied); null without a model. */
  diff: z.string().nullable(),
  reason: z.string().optional(),
  ai: modelNoteSchema,
});

function framesOf(details: Record<string, unknown>): z.infer<typeof frameSchema>[] {
  const frames = Array.isArray(details.frames) ? details.frames : [];
  return frames.flatMap((frame) => {
    const parsed = frameSchema.safeParse({
      ...(frame as object),
      mapped: (frame as { mapped?: unknown }).mapped === true,
    });
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * The explanations of sessions (`GET /v1/sessions/{id}/summary`, `POST /v1/sessions/{id}/explain`,
 * area `sessions`) and issues (`POST /v1/issues/{id}/explain`, `/draft-pr`, area `issues`). Each
 * answers its deterministic result (servers/api/README.md, Explanations), with `ai` saying whether a
 * model added prose; without a model (the default) they answer the same and say so. Read-only: the
 * POSTs take the `:read` scope.
 */
export async function sessionExplainRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '/:id/summary',
    {
      schema: {
        summary:
          'A summary of a session: what happened and its main problems (deterministic; prose with a model)',
        params: sessionParams,
        response: { 200: summarySchema },
      },
    },
    async (request) => {
      const sources = await readTranscriptSources(
        fastify,
        request.log,
        request.auth.project,
        request.params.id,
      );
      if (sources === undefined) throw notFound(`No session ${request.params.id}`);
      return { ...summarizeSession(sources), ai: noModel() };
    },
  );

  routes.post(
    '/:id/explain',
    {
      config: { scope: 'sessions:read' },
      schema: {
        summary:
          "Explain a session's (or one of its calls') problems: evidence, likely causes and what to try",
        params: sessionParams,
        body: explainBodySchema,
        response: { 200: z.object({ explanation: explanationSchema, ai: modelNoteSchema }) },
      },
    },
    async (request) => {
      const sources = await readTranscriptSources(
        fastify,
        request.log,
        request.auth.project,
        request.params.id,
      );
      if (sources === undefined) throw notFound(`No session ${request.params.id}`);
      const callId = request.body?.callId;
      const explanation = callId === undefined ? explainSession(sources) : explainCall(sources, callId);
      if (explanation === undefined) throw notFound(`No call ${callId} in session ${request.params.id}`);
      const ai: ModelNote = noModel();
      return { explanation, ai };
    },
  );
}

export async function issueExplainRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('issues'));

  routes.post(
    '/:id/explain',
    {
      config: { scope: 'issues:read' },
      schema: {
        summary:
          'Explain an issue over its occurrences: where it concentrates, likely causes and what to try',
        params: clusterParams,
        response: { 200: z.object({ explanation: clusterExplanationSchema, ai: modelNoteSchema }) },
      },
    },
    async (request) => {
      const cluster = await findCluster(fastify.database, request.auth.project.id, request.params.id);
      if (cluster === undefined) throw notFound(`No issue ${request.params.id}`);
      const explanation = await explainCluster(fastify.database, request.auth.project.id, cluster);
      return { explanation, ai: noModel() };
    },
  );

  routes.post(
    '/:id/draft-pr',
    {
      config: { scope: 'issues:read' },
      schema: {
        summary:
          "Draft a fix for an error issue from its symbolicated frames and the maps' sources, as a unified diff (never applied)",
        params: clusterParams,
        response: { 200: draftSchema },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      const cluster = await findCluster(fastify.database, projectId, request.params.id);
      if (cluster === undefined) throw notFound(`No issue ${request.params.id}`);
      const ai = noModel();
      if (cluster.kind !== 'error') {
        return {
          issueId: cluster.id,
          diff: null,
          reason: 'A call-quality issue has no source code to patch.',
          ai,
        };
      }
      const latest = await findLatestClusterError(fastify.database, projectId, cluster.id);
      if (latest === undefined)
        return { issueId: cluster.id, diff: null, reason: 'The issue has no occurrence left.', ai };
      const frames = framesOf(latest.details);
      const location = frames.find((frame) => frame.mapped && frame.context !== undefined);
      return {
        issueId: cluster.id,
        error: {
          sessionId: latest.session_id,
          name: latest.name,
          ...(latest.message === null ? {} : { message: latest.message }),
          frames,
        },
        ...(location === undefined ? {} : { location }),
        diff: null,
        reason:
          location === undefined
            ? 'No frame of the latest error was mapped to its source: upload the source maps (with sources) of its release.'
            : 'A patch needs a model; the location above is where the error was thrown.',
        ai,
      };
    },
  );
}
