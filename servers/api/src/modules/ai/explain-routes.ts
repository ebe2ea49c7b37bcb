import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AiFeature } from '../../platform/database/tables/ai-settings.table.ts';
import { notFound } from '../../platform/http/errors.ts';
import {
  buildTranscript,
  clusterExplanationSchema,
  explainCall,
  explainCluster,
  explainSession,
  explanationSchema,
  readTranscriptSources,
} from '../analysis/index.ts';
import { findCluster, findLatestClusterError } from '../issues/index.ts';
import { sessionIdSchema } from '../sessions/index.ts';
import { draftPatch } from './draft.ts';
import { aiJobSchema, queueAiJob, toAiJobView } from './jobs.ts';
import { modelAccess } from './model.ts';
import { type ModelNote, modelNoteSchema, noModel } from './model-note.ts';
import { clusterPrompt, evidenceIdsOf, sessionPrompt, writeProse } from './prose.ts';
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
    async: z
      .boolean()
      .optional()
      .describe('Queue the explanation as an AI job (202); ai.deep_analysis_ready announces it when done'),
  })
  .nullish();

const issueExplainBodySchema = z
  .strictObject({
    async: z
      .boolean()
      .optional()
      .describe('Queue the explanation as an AI job (202); ai.deep_analysis_ready announces it when done'),
  })
  .nullish();

/** The answer of an explanation queued as a job. */
const queuedSchema = z.object({ job: aiJobSchema });

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

/**
 * The model's part of an answer: its prose when the organization's settings let the model answer
 * `feature`, else why not.
 */
async function proseFor(
  fastify: FastifyInstance,
  request: FastifyRequest,
  feature: AiFeature,
  ask: () => Promise<{ prompt: string; known: ReadonlySet<string> }>,
): Promise<ModelNote> {
  const access = await modelAccess(fastify.database, fastify.configuration, {
    organizationId: request.auth.organizationId,
    projectId: request.auth.project.id,
    feature,
  });
  if (!access.allowed) return noModel(access.reason);
  const { prompt, known } = await ask();
  return writeProse(fastify.database, access, { prompt, known, log: request.log as FastifyBaseLogger });
}

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
      const ai = await proseFor(fastify, request, 'summary', async () => {
        const transcript = buildTranscript(sources);
        return {
          prompt: sessionPrompt(
            transcript,
            explainSession(sources),
            request.auth.project,
            'Summarize this session for a developer in 3 to 5 sentences: what the person did, what went wrong, and its most likely cause. Cite evidence ids.',
          ),
          known: evidenceIdsOf(transcript),
        };
      });
      return { ...summarizeSession(sources), ai };
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
        response: {
          200: z.object({ explanation: explanationSchema, ai: modelNoteSchema }),
          202: queuedSchema,
        },
      },
    },
    async (request, reply) => {
      const sources = await readTranscriptSources(
        fastify,
        request.log,
        request.auth.project,
        request.params.id,
      );
      if (sources === undefined) throw notFound(`No session ${request.params.id}`);
      const callId = request.body?.callId;
      if (request.body?.async === true) {
        const job = await queueAiJob(fastify.database, {
          projectId: request.auth.project.id,
          kind: 'explain_session',
          input: { sessionId: request.params.id, ...(callId === undefined ? {} : { callId }) },
        });
        fastify.aiJobWorker.wake();
        return reply.code(202).send({ job: toAiJobView(job) });
      }
      const explanation = callId === undefined ? explainSession(sources) : explainCall(sources, callId);
      if (explanation === undefined) throw notFound(`No call ${callId} in session ${request.params.id}`);
      const ai = await proseFor(fastify, request, 'explain', async () => {
        const transcript = buildTranscript(sources);
        return {
          prompt: sessionPrompt(
            transcript,
            explanation,
            request.auth.project,
            `Explain the problems of this ${callId === undefined ? 'session' : `call (${callId})`} to a developer, most severe first: what happened, with its evidence, the most likely cause and what to try first. Use the deterministic causes unless the transcript clearly points elsewhere. Cite evidence ids.`,
          ),
          known: evidenceIdsOf(transcript),
        };
      });
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
        body: issueExplainBodySchema,
        response: {
          200: z.object({ explanation: clusterExplanationSchema, ai: modelNoteSchema }),
          202: queuedSchema,
        },
      },
    },
    async (request, reply) => {
      const cluster = await findCluster(fastify.database, request.auth.project.id, request.params.id);
      if (cluster === undefined) throw notFound(`No issue ${request.params.id}`);
      if (request.body?.async === true) {
        const job = await queueAiJob(fastify.database, {
          projectId: request.auth.project.id,
          kind: 'explain_issue',
          input: { clusterId: cluster.id },
        });
        fastify.aiJobWorker.wake();
        return reply.code(202).send({ job: toAiJobView(job) });
      }
      const explanation = await explainCluster(fastify.database, request.auth.project.id, cluster);
      const ai = await proseFor(fastify, request, 'explain', () =>
        clusterPrompt(fastify, request.log, request.auth.project, explanation),
      );
      return { explanation, ai };
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
      if (cluster.kind !== 'error') {
        const reason = 'A call-quality issue has no source code to patch.';
        return { issueId: cluster.id, diff: null, reason, ai: noModel(reason) };
      }
      const latest = await findLatestClusterError(fastify.database, projectId, cluster.id);
      if (latest === undefined) {
        const reason = 'The issue has no occurrence left.';
        return { issueId: cluster.id, diff: null, reason, ai: noModel(reason) };
      }
      const frames = framesOf(latest.details);
      const location = frames.find((frame) => frame.mapped && frame.context !== undefined);
      const error = {
        sessionId: latest.session_id,
        name: latest.name,
        ...(latest.message === null ? {} : { message: latest.message }),
        frames,
      };
      const base = { issueId: cluster.id, error, ...(location === undefined ? {} : { location }) };
      if (location === undefined) {
        const reason =
          'No frame of the latest error was mapped to its source: upload the source maps (with sources) of its release.';
        return { ...base, diff: null, reason, ai: noModel(reason) };
      }
      const access = await modelAccess(fastify.database, fastify.configuration, {
        organizationId: request.auth.organizationId,
        projectId,
        feature: 'draft_pr',
      });
      if (!access.allowed) {
        return {
          ...base,
          diff: null,
          reason: 'A patch needs a model; the location above is where the error was thrown.',
          ai: noModel(access.reason),
        };
      }
      return { ...base, ...(await draftPatch(fastify.database, access, { error, log: request.log })) };
    },
  );
}
