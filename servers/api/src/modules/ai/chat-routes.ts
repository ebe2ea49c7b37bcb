import { type LanguageModelUsage, type ModelMessage, stepCountIs, streamText, tool } from 'ai';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError } from '../../platform/http/errors.ts';
import { modelAccess, recordUsage } from './model.ts';
import { GROUNDING } from './prose.ts';
import { scrubText, scrubValue } from './scrub.ts';
import { runTool, type ToolContext, toolsFor } from './tools.ts';

/** Model steps a chat answer may take (each tool round is one). */
const MAX_STEPS = 6;

const chatBodySchema = z.strictObject({
  messages: z
    .array(
      z.strictObject({
        role: z.enum(['user', 'assistant']),
        content: z.string().min(1).max(8_000),
      }),
    )
    .min(1)
    .max(40)
    .refine((messages) => messages.at(-1)?.role === 'user', { message: "the last message is the user's" }),
  /** The session the person is looking at, if any: the model may start there. */
  sessionId: z
    .string()
    .regex(/^ses_[0-9A-HJKMNP-TV-Z]{26}$/, 'a session id (ses_…)')
    .optional(),
});

/** Seconds until the first of next month (UTC): when a capped organization's tokens come back. */
function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/**
 * `POST /v1/ai/chat` (`ai:write`): an answer streamed as server-sent events, from the model with
 * the read-only tools of tools.ts over the caller's project (those its scopes allow). Events:
 * `tool_call` `{ id, name, input }`, `tool_result` `{ id, name, output }`, `text` `{ delta }`,
 * `notice` `{ reason }` (no model may answer: nothing else follows but `done`), `error`
 * `{ error }`, and last `done` `{ model, usage? }`. An organization past its monthly token cap
 * gets 429 before any stream. What reaches the model (messages, tool results) is scrubbed.
 */
export default async function aiChatRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('ai'));

  routes.post(
    '/chat',
    {
      schema: {
        summary:
          "Ask about the project's sessions, calls and issues: an answer streamed as server-sent events, with read-only tools",
        body: chatBodySchema,
        produces: ['text/event-stream'],
      },
    },
    async (request, reply) => {
      const { auth } = request;
      const access = await modelAccess(fastify.database, fastify.configuration, {
        organizationId: auth.organizationId,
        projectId: auth.project.id,
        feature: 'chat',
      });
      if (!access.allowed && access.capped) {
        reply.header('retry-after', String(secondsToNextMonth(new Date())));
        throw new ApiError({ status: 429, code: 'invalid', message: access.reason });
      }
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-content-type-options': 'nosniff',
        connection: 'keep-alive',
      });
      const send = (event: string, data: unknown) => {
        if (!raw.writableEnded) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      if (!access.allowed) {
        send('notice', { reason: access.reason });
        send('done', { model: null });
        raw.end();
        return;
      }
      const abort = new AbortController();
      request.raw.on('close', () => abort.abort());
      const context: ToolContext = {
        database: fastify.database,
        blobStore: fastify.blobStore,
        masterKey: fastify.masterKey,
        log: request.log,
        project: auth.project,
        scopes: auth.scopes,
      };
      const tools = Object.fromEntries(
        toolsFor(auth.scopes).map((readTool) => [
          readTool.name,
          tool({
            description: readTool.description,
            inputSchema: readTool.input,
            execute: (input: unknown) => runTool(readTool, context, input),
          }),
        ]),
      );
      const { messages, sessionId } = request.body;
      const system = `${GROUNDING}
You answer questions about the recorded sessions, WebRTC calls and issues of the project "${scrubText(auth.project.name).text}" with the read-only tools; call them rather than guess, and cite the ids they return (sessions, calls, issues) and the transcripts' evidence ids in square brackets. Today is ${new Date().toISOString().slice(0, 10)}.${
        sessionId === undefined ? '' : ` The person is looking at session ${sessionId}.`
      }`;
      const modelMessages: ModelMessage[] = messages.map((message) => ({
        role: message.role,
        content: scrubText(message.content).text,
      }));
      try {
        const result = streamText({
          model: access.model,
          system,
          messages: modelMessages,
          tools,
          stopWhen: stepCountIs(MAX_STEPS),
          maxOutputTokens: 1_200,
          temperature: 0.2,
          maxRetries: 1,
          abortSignal: abort.signal,
        });
        let usage: LanguageModelUsage | undefined;
        for await (const part of result.fullStream) {
          switch (part.type) {
            case 'text-delta':
              send('text', { delta: part.text });
              break;
            case 'tool-call':
              send('tool_call', { id: part.toolCallId, name: part.toolName, input: scrubValue(part.input) });
              break;
            case 'tool-result':
              send('tool_result', { id: part.toolCallId, name: part.toolName, output: part.output });
              break;
            case 'tool-error':
              send('tool_result', {
                id: part.toolCallId,
                name: part.toolName,
                output: { error: String(part.error) },
              });
              break;
            case 'error':
              send('error', { error: part.error instanceof Error ? part.error.message : 'The model failed' });
              break;
            case 'finish':
              usage = part.totalUsage;
              break;
            default:
              break;
          }
        }
        if (usage !== undefined) await recordUsage(fastify.database, access, usage);
        send('done', {
          model: access.name,
          ...(usage === undefined
            ? {}
            : { usage: { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 } }),
        });
      } catch (error) {
        request.log.warn({ err: error }, 'the chat failed');
        send('error', { error: error instanceof Error ? error.message.slice(0, 300) : 'The model failed' });
        send('done', { model: access.name });
      } finally {
        raw.end();
      }
    },
  );
}
