import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { invalid, notFound } from '../../platform/http/errors.ts';
import { readBody } from '../sessions/index.ts';
import {
  type DecodeResult,
  decodeLogs,
  decodeTraces,
  encodeExportResponse,
  type OtlpFormat,
  type OtlpSignal,
} from './otlp.ts';
import { insertLogRecords, insertSpans, readSessionTraces, sessionExists } from './repository.ts';
import { buildTraceTrees, sessionTracesSchema } from './trees.ts';

/** The largest OTLP body as sent (gzipped or not), counted while it streams in. */
const OTLP_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The largest body once gunzipped. */
const OTLP_MAX_INFLATED_BYTES = 16 * 1024 * 1024;

const MEDIA_TYPES: Readonly<Record<string, OtlpFormat>> = {
  'application/x-protobuf': 'protobuf',
  'application/json': 'json',
};

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function formatOf(request: FastifyRequest): OtlpFormat | undefined {
  const type = singleHeader(request.headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  return type === undefined ? undefined : MEDIA_TYPES[type];
}

/** `gzip`, none, or undefined for an encoding this server does not take. */
function encodingOf(request: FastifyRequest): 'gzip' | 'identity' | undefined {
  const encoding = singleHeader(request.headers['content-encoding'])?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return 'identity';
  return encoding === 'gzip' ? 'gzip' : undefined;
}

/** What can be refused from the headers, before a byte of the body is read (after authorization). */
async function checkHeaders(request: FastifyRequest, reply: FastifyReply) {
  if (encodingOf(request) === undefined) throw invalid('Content-Encoding must be gzip or none', 415);
  const declaredLength = Number(request.headers['content-length']);
  if (declaredLength > OTLP_MAX_BODY_BYTES) {
    reply.header('connection', 'close');
    throw invalid(`The body is ${declaredLength} bytes; the limit is ${OTLP_MAX_BODY_BYTES} bytes`, 413);
  }
}

const gunzipAsync = promisify(gunzip);

/** Reads the body with the limit counted as it streams in, then gunzips it (bounded) if gzipped. */
async function parseBody(request: FastifyRequest, payload: NodeJS.ReadableStream): Promise<Buffer> {
  const result = await readBody(payload as Readable, OTLP_MAX_BODY_BYTES).catch((error: unknown) => {
    throw invalid(`The request body could not be read: ${(error as Error).message}`);
  });
  if (!result.success) throw invalid(`The body is larger than ${OTLP_MAX_BODY_BYTES} bytes`, 413);
  if (encodingOf(request) !== 'gzip' || result.body.length === 0) return result.body;
  try {
    // On zlib's thread pool: up to 16 MiB of output must not hold the event loop.
    return await gunzipAsync(result.body, { maxOutputLength: OTLP_MAX_INFLATED_BYTES });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw invalid(`The body inflates to more than ${OTLP_MAX_INFLATED_BYTES} bytes`, 413);
    throw invalid(`The body is not valid gzip: ${(error as Error).message}`);
  }
}

const exportDescription = (signal: OtlpSignal) =>
  [
    `OTLP/HTTP export of ${signal} (opentelemetry.io/docs/specs/otlp/#otlphttp): \`application/x-protobuf\``,
    'or `application/json` (OTLP JSON), optionally `Content-Encoding: gzip`, at most',
    `${OTLP_MAX_BODY_BYTES} bytes as sent and ${OTLP_MAX_INFLATED_BYTES} inflated. Answered 200 with the`,
    `Export${signal === 'traces' ? 'Trace' : 'Logs'}ServiceResponse in the request's format (\`partialSuccess\``,
    'when some items were invalid and dropped); a body that is no export request gets 400 `{ error, code }`',
    'and nothing is stored. Needs an API token with `otlp:write`.',
  ].join(' ');

/**
 * `POST /v1/otlp/traces` and `POST /v1/otlp/logs`: OpenTelemetry's OTLP/HTTP intake, for a
 * project's API token with the `otlp:write` scope.
 */
export default async function otlpRoutes(fastify: FastifyInstance) {
  // Bodies are read here, after authorization and the header checks, counted while they arrive.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(['application/x-protobuf', 'application/json'], parseBody);

  async function handle<Item>(
    signal: OtlpSignal,
    request: FastifyRequest,
    reply: FastifyReply,
    decode: (body: Buffer, format: OtlpFormat) => DecodeResult<Item>,
    store: (items: Item[]) => Promise<void>,
  ) {
    const format = formatOf(request) ?? 'protobuf';
    const body = request.body instanceof Buffer ? request.body : Buffer.alloc(0);
    const result = decode(body, format);
    if (!result.success) throw invalid(result.message);
    if (result.items.length > 0) await store(result.items);
    reply.type(format === 'json' ? 'application/json' : 'application/x-protobuf');
    return reply.send(encodeExportResponse(signal, format, result.rejected, result.rejectionMessage));
  }

  const routeOptions = (signal: OtlpSignal) => ({
    onRequest: [fastify.authorize('otlp'), checkHeaders],
    schema: {
      summary: `Export ${signal} over OTLP/HTTP (OpenTelemetry SDKs and collectors)`,
      description: exportDescription(signal),
      security: [{ apiToken: [] }],
      response: {
        400: errorBodySchema,
        401: errorBodySchema,
        403: errorBodySchema,
        413: errorBodySchema,
        415: errorBodySchema,
      },
    },
  });

  fastify.post('/traces', routeOptions('traces'), (request, reply) =>
    handle('traces', request, reply, decodeTraces, (spans) =>
      // The spans and their count in usage commit together.
      fastify.database
        .transaction()
        .execute((transaction) => insertSpans(transaction, request.auth.project.id, spans)),
    ),
  );
  fastify.post('/logs', routeOptions('logs'), (request, reply) =>
    handle('logs', request, reply, decodeLogs, (records) =>
      fastify.database
        .transaction()
        .execute((transaction) => insertLogRecords(transaction, request.auth.project.id, records)),
    ),
  );
}

const sessionParams = z.object({ id: z.string().min(1).max(128) });

/** `GET /v1/sessions/{id}/traces`: the OpenTelemetry trace trees linked to a session. */
export async function sessionTraceRoutes(fastify: FastifyInstance) {
  fastify.withTypeProvider<ZodTypeProvider>().get(
    '/:id/traces',
    {
      onRequest: fastify.authorize('sessions'),
      schema: {
        summary: "The session's OpenTelemetry traces: span trees with their logs",
        description:
          'Every trace with a span (or resource) carrying the attribute `session.id` equal to the session id, with all its spans nested by parent and the log records of the trace.',
        params: sessionParams,
        response: { 200: sessionTracesSchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      const { id } = request.params;
      if (!(await sessionExists(fastify.database, projectId, id))) throw notFound(`No session ${id}`);
      const { spans, logs } = await readSessionTraces(fastify.database, projectId, id);
      return { items: buildTraceTrees(spans, logs) };
    },
  );
}
