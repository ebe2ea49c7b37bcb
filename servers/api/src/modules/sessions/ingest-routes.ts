import type { Readable } from 'node:stream';
import { errorBodySchema, PROTOCOL_LIMITS } from '@svc/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { forbidden, invalid, unauthorized } from '../../platform/http/errors.ts';
import { readSettings } from '../projects/index.ts';
import { MAX_REDACTED_PATHS, PRIVACY_RULES } from './call-privacy.ts';
import { decodeChunk } from './decode-chunk.ts';
import { ingestChunk } from './ingest-chunk.ts';
import { createIngestRateLimiter, type IngestRateLimiter } from './rate-limiter.ts';
import {
  contentTypeProblem,
  INGEST_BODY_LIMITS,
  type IngestEncoding,
  parseIngestEncoding,
  readBody,
} from './request-body.ts';

/** How long browsers may cache the preflight (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

const PROJECT_KEY_HEADER = 'x-service-project-key';
const ENCODING_HEADER = 'x-service-encoding';
/**
 * On a 429 of a monthly cap (not of the rate limit): the cap reached, `sessions` or
 * `storedBytes`. The SDK stops the session (nothing of it was acknowledged) rather than retry.
 */
const QUOTA_HEADER = 'X-Service-Quota';

const ackSchema = z.object({
  seq: z.int(),
  /** `true` when this `(sessionId, seq)` was already stored with the same bytes: nothing changed. */
  duplicate: z.boolean(),
  dropped: z
    .array(
      z.object({
        path: z.string().describe('e.g. meta.os.version'),
        reason: z.enum(['empty', 'invalid']),
        message: z.string(),
      }),
    )
    .optional()
    .describe(
      'Optional meta fields that were empty ("" or null) or malformed and were not stored (PROTOCOL.md §1); absent when none',
    ),
  redacted: z
    .array(
      z.object({
        rule: z.enum(PRIVACY_RULES),
        count: z.int().describe('values this rule removed from the chunk'),
        paths: z
          .array(z.string())
          .describe(`where, e.g. events[4].errorText (the first ${MAX_REDACTED_PATHS})`),
      }),
    )
    .optional()
    .describe(
      'Call data that the privacy rules forbid and that was removed before storing (PROTOCOL.md §3); absent when none',
    ),
});

declare module 'fastify' {
  interface FastifyInstance {
    /** Per-project ingest rate limits (`settings.ingest.maxChunksPerSecond`). */
    ingestRateLimiter: IngestRateLimiter;
  }
}

/** What the checks before the body established, for the body parser and the handler. */
interface IngestContext {
  encoding: IngestEncoding;
  project: Project;
}

const contexts = new WeakMap<FastifyRequest, IngestContext>();

function contextOf(request: FastifyRequest): IngestContext {
  const context = contexts.get(request);
  if (context === undefined) throw new Error('ingest: the request was not checked before its body');
  return context;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Echoes the request's `Origin`, so browsers let the SDK read every answer (errors included: an
 * SDK that reads a 401/403/413 stops retrying instead of seeing an opaque network error).
 */
function allowOrigin(request: FastifyRequest, reply: FastifyReply): void {
  const origin = singleHeader(request.headers.origin);
  reply.header('vary', 'Origin');
  if (origin !== undefined) {
    reply.header('access-control-allow-origin', origin);
    // Not CORS-safelisted response headers: the SDK reads them on a 429.
    reply.header('access-control-expose-headers', `Retry-After, ${QUOTA_HEADER}`);
  }
}

/**
 * Everything that can be decided from the headers, before a byte of the body is read: encoding
 * (415), content type (415), declared length (413), project key (401) and origin (403).
 */
async function checkHeaders(fastify: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  allowOrigin(request, reply);
  const headers = request.headers;

  const encodingHeader = singleHeader(headers[ENCODING_HEADER]);
  const encoding = parseIngestEncoding(encodingHeader);
  if (encoding === undefined) {
    throw invalid(
      `Unsupported X-Service-Encoding ${JSON.stringify(String(encodingHeader).slice(0, 40))}: send json+deflate or json`,
      415,
    );
  }
  const contentEncoding = singleHeader(headers['content-encoding'])?.trim().toLowerCase();
  if (contentEncoding !== undefined && contentEncoding !== '' && contentEncoding !== 'identity') {
    throw invalid('Content-Encoding is not supported: compress with X-Service-Encoding: json+deflate', 415);
  }
  const typeProblem = contentTypeProblem(encoding, headers['content-type']);
  if (typeProblem !== undefined) throw invalid(typeProblem, 415);

  const limit = INGEST_BODY_LIMITS[encoding];
  const declaredLength = Number(headers['content-length']);
  if (declaredLength > limit) {
    reply.header('connection', 'close');
    throw invalid(`The body is ${declaredLength} bytes; the limit for ${encoding} is ${limit} bytes`, 413);
  }

  const key = singleHeader(headers[PROJECT_KEY_HEADER])?.trim();
  if (key === undefined || key === '') throw unauthorized('Send the project key: X-Service-Project-Key');
  const project = key.length > 256 ? undefined : await fastify.projectKeys.find(key);
  if (project === undefined) throw unauthorized('Unknown project key');

  const settings = readSettings(project.settings);
  const origin = singleHeader(headers.origin);
  if (origin !== undefined) {
    const { allowedOrigins } = settings;
    if (allowedOrigins.length > 0 && !allowedOrigins.includes(origin)) {
      throw forbidden(
        `Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed to send to this project`,
      );
    }
  }
  const decision = fastify.ingestRateLimiter.take(project.id, settings.ingest.maxChunksPerSecond);
  if (!decision.allowed) {
    reply.header('retry-after', String(decision.retryAfterSeconds));
    throw invalid(
      `This project sends more than ${settings.ingest.maxChunksPerSecond} chunks a second: retry the same chunk after ${decision.retryAfterSeconds} s`,
      429,
    );
  }
  contexts.set(request, { encoding, project });
}

/**
 * `POST /v1/ingest` (PROTOCOL.md §1) and its CORS preflight. The SDK sends one chunk per
 * request; the answer `{ seq, duplicate, dropped?, redacted? }` comes only once the chunk is
 * durable and indexed.
 */
export default async function ingestRoutes(fastify: FastifyInstance) {
  fastify.decorate('ingestRateLimiter', createIngestRateLimiter());
  // This context reads bodies itself: with the limit of the request's encoding, counted while
  // reading, and only after the headers passed every check.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', async (request: FastifyRequest, payload: NodeJS.ReadableStream) => {
    const { encoding } = contextOf(request);
    const limit = INGEST_BODY_LIMITS[encoding];
    const result = await readBody(payload as Readable, limit).catch((error: unknown) => {
      throw invalid(`The request body could not be read: ${(error as Error).message}`);
    });
    if (!result.success)
      throw invalid(`The body is larger than ${limit} bytes, the limit for ${encoding}`, 413);
    return result.body;
  });

  const routes = fastify.withTypeProvider<ZodTypeProvider>();

  routes.options(
    '/ingest',
    { schema: { summary: 'CORS preflight of POST /v1/ingest (any origin; the POST checks it)', hide: true } },
    async (request, reply) => {
      allowOrigin(request, reply);
      reply.header('access-control-allow-methods', 'POST');
      reply.header('access-control-allow-headers', 'content-type, x-service-project-key, x-service-encoding');
      reply.header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
      return reply.code(204).send();
    },
  );

  routes.post(
    '/ingest',
    {
      onRequest: (request, reply) => checkHeaders(fastify, request, reply),
      config: { flushedBeforeReply: true },
      schema: {
        summary: 'Ingest one chunk (SDKs)',
        description: [
          'Body: one protocol-v1 chunk, `json+deflate` (zlib-wrapped deflate, at most',
          `${PROTOCOL_LIMITS.maxCompressedBytes} bytes, inflating to at most ${PROTOCOL_LIMITS.maxInflatedBytes}) or \`json\``,
          `(at most ${PROTOCOL_LIMITS.maxInflatedBytes} bytes). Answered only once the chunk is durable and indexed;`,
          'a re-sent (sessionId, seq) with the same bytes is `duplicate: true`, with other bytes 409.',
          'Over a monthly cap of the organization (sessions, stored bytes), chunks of new sessions get 429 with',
          '`Retry-After` and `X-Service-Quota: sessions | storedBytes`; sessions started before the cap was reached',
          'may finish (for an hour).',
        ].join(' '),
        headers: z.looseObject({
          'x-service-project-key': z.string().optional().describe('The project key (public)'),
          'x-service-encoding': z.string().optional().describe('json+deflate | json (default json)'),
        }),
        response: {
          200: ackSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          409: errorBodySchema,
          413: errorBodySchema,
          415: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { encoding, project } = contextOf(request);
      const body = request.body instanceof Buffer ? request.body : Buffer.alloc(0);
      const { privacy } = readSettings(project.settings);
      const result = await decodeChunk(body, encoding, {
        strictPrivacy: privacy.mode === 'strict',
        requestQueryParams: privacy.requestQueryParams,
      });
      if (!result.success) throw invalid(result.message, result.status);
      const { decoded } = result;
      // Over a monthly cap, a new session is refused before anything of it is stored.
      const admission = await fastify.usageGate.admitChunk(project, decoded.chunk.sessionId);
      if (!admission.admitted) {
        reply.header('retry-after', String(admission.retryAfterSeconds));
        reply.header(QUOTA_HEADER, admission.metric);
        throw invalid(admission.reason, 429);
      }
      const outcome = await ingestChunk(
        {
          chunkIndex: fastify.chunkIndex,
          counters: fastify.ingestCounters,
          blobStore: fastify.blobStore,
          masterKey: fastify.masterKey,
          log: request.log,
        },
        project,
        decoded,
      );
      if (outcome.status === 'conflict') {
        throw invalid(`seq ${outcome.seq} was already received with different content`, 409);
      }
      // Its call job is queued with the index rows: start on it now rather than at the next poll.
      if (outcome.status === 'stored' && outcome.callItemCount > 0)
        fastify.processingWorker.wake({ projectId: project.id, sessionId: decoded.chunk.sessionId });
      // The same bytes always get the same report, so a retry learns what its first attempt did.
      return {
        seq: outcome.seq,
        duplicate: outcome.status === 'duplicate',
        ...(decoded.dropped.length > 0 ? { dropped: decoded.dropped } : {}),
        ...(decoded.redacted.length > 0 ? { redacted: decoded.redacted } : {}),
      };
    },
  );
}
