import { listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  decodeCallCursor,
  decodeEventCursor,
  decodeSessionCursor,
  encodeCallCursor,
  encodeEventCursor,
  encodeSessionCursor,
} from '../../platform/http/cursor.ts';
import { notFound } from '../../platform/http/errors.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { createId } from '../../platform/ids.ts';
import { createShareToken, hashSecret } from '../../platform/secrets.ts';
import {
  callSummarySchema,
  DEFAULT_CALLS_LIMIT,
  findCallsPage,
  findSessionFindings,
  MAX_CALLS_LIMIT,
  toCallSummary,
} from '../calls/index.ts';
import { readChunkBytes } from './chunk-reader.ts';
import { loadSessionDetail } from './detail.ts';
import { readEventsPage } from './events.ts';
import {
  DEFAULT_EVENTS_LIMIT,
  DEFAULT_ISSUES_LIMIT,
  DEFAULT_SESSIONS_LIMIT,
  eventListQuerySchema,
  issueListQuerySchema,
  sessionIdSchema,
  sessionListQuerySchema,
  shareRequestSchema,
  toSessionFilters,
} from './query.ts';
import {
  createShareLink,
  findChunk,
  findSession,
  findSessionsPage,
  findSignalsPage,
} from './session-queries.ts';
import {
  flatEventSchema,
  sessionDetailSchema,
  sessionIssueSchema,
  sessionSummarySchema,
  toFindingIssue,
  toSessionIssue,
  toSessionSummary,
} from './views.ts';

const sessionParams = z.object({ id: sessionIdSchema });

const sessionCallsQuerySchema = z.strictObject({
  limit: integerParameter(1, MAX_CALLS_LIMIT)
    .optional()
    .describe(`Page size, 1..${MAX_CALLS_LIMIT} (default ${DEFAULT_CALLS_LIMIT})`),
  cursor: z.string().max(256).optional().describe('nextCursor of the previous page'),
});

/** The signal kinds `GET /v1/sessions/{id}/issues` lists (SDK gaps are in the SessionDetail). */
const ISSUE_KINDS = ['error', 'custom', 'trigger'] as const;

const shareCreatedSchema = z.object({
  /** The secret of the link: shown once, only its hash is stored. */
  token: z.string(),
  url: z.string(),
  expiresAt: z.iso.datetime(),
});

/**
 * `/v1/sessions`: the token's project's sessions. Every query is scoped by `request.auth.project`,
 * so another project's session is a 404, never a 403.
 */
export default async function sessionRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('sessions'));

  routes.get(
    '',
    {
      schema: {
        summary: 'List sessions, newest first',
        description:
          'Keyset pagination: pass `nextCursor` back as `cursor`. Filters combine with AND. Unknown parameters are refused.',
        querystring: sessionListQuerySchema,
        response: { 200: listPageSchema(sessionSummarySchema) },
      },
    },
    async (request) => {
      const { cursor, limit = DEFAULT_SESSIONS_LIMIT } = request.query;
      const page = await findSessionsPage(fastify.database, request.auth.project.id, {
        filters: toSessionFilters(request.query),
        after: cursor === undefined ? undefined : decodeSessionCursor(cursor),
        limit,
      });
      return {
        items: page.sessions.map(toSessionSummary),
        nextCursor: page.next === undefined ? undefined : encodeSessionCursor(page.next),
      };
    },
  );

  routes.get(
    '/:id',
    {
      schema: {
        summary: 'One session: metadata, chunk manifest and gaps',
        params: sessionParams,
        response: { 200: sessionDetailSchema },
      },
    },
    async (request) => {
      const detail = await loadSessionDetail(fastify.database, request.auth.project.id, request.params.id);
      if (detail === undefined) throw notFound(`No session ${request.params.id}`);
      return detail;
    },
  );

  routes.get(
    '/:id/chunks/:seq',
    {
      schema: {
        summary:
          "One chunk's JSON, decrypted and inflated: byte-identical to what the SDK sent, unless ingest removed something (see POST /v1/ingest)",
        params: z.object({ id: sessionIdSchema, seq: integerParameter(0, 2_147_483_647) }),
      },
    },
    async (request, reply) => {
      const { id, seq } = request.params;
      const chunk = await findChunk(fastify.database, request.auth.project.id, id, seq);
      if (chunk === undefined) throw notFound(`No chunk ${seq} in session ${id}`);
      const bytes = await readChunkBytes(fastify, request.log, request.auth.project, chunk);
      return reply
        .type('application/json')
        .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    },
  );

  routes.get(
    '/:id/events',
    {
      schema: {
        summary: "The session's events, flattened across chunks in (seq, index) order",
        description:
          'Each item is `{ seq, index, event }`: `event` as the SDK sent it (less what ingest removed), at `events[index]` of the stored chunk `seq`. A page may hold fewer than `limit` items and still have a `nextCursor` (one request opens a bounded number of chunks).',
        params: sessionParams,
        querystring: eventListQuerySchema,
        response: { 200: listPageSchema(flatEventSchema) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { types, cursor, limit = DEFAULT_EVENTS_LIMIT } = request.query;
      const after = cursor === undefined ? undefined : decodeEventCursor(cursor);
      const session = await findSession(fastify.database, request.auth.project.id, id);
      if (session === undefined) throw notFound(`No session ${id}`);
      const page = await readEventsPage(fastify, request.log, request.auth.project, id, {
        types,
        after,
        limit,
      });
      return {
        items: page.items,
        nextCursor: page.next === undefined ? undefined : encodeEventCursor(page.next),
      };
    },
  );

  routes.get(
    '/:id/issues',
    {
      schema: {
        summary:
          "The session's signals: detector findings on its calls, errors, custom events with a severity, recording triggers",
        description:
          'The first page (no cursor) starts with every detector finding of the session (`kind: "finding"`, at most 13 per peer connection), then the signals in (seq, index) order; `limit` and the cursor page the signals.',
        params: sessionParams,
        querystring: issueListQuerySchema,
        response: { 200: listPageSchema(sessionIssueSchema) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { cursor, limit = DEFAULT_ISSUES_LIMIT } = request.query;
      const after = cursor === undefined ? undefined : decodeEventCursor(cursor);
      const session = await findSession(fastify.database, request.auth.project.id, id);
      if (session === undefined) throw notFound(`No session ${id}`);
      const page = await findSignalsPage(fastify.database, request.auth.project.id, id, {
        kinds: ISSUE_KINDS,
        after,
        limit,
      });
      const findings =
        after === undefined ? await findSessionFindings(fastify.database, request.auth.project.id, id) : [];
      return {
        items: [...findings.map(toFindingIssue), ...page.signals.map(toSessionIssue)],
        nextCursor: page.next === undefined ? undefined : encodeEventCursor(page.next),
      };
    },
  );

  routes.get(
    '/:id/calls',
    {
      schema: {
        summary: "The session's calls (one per peer connection), newest first",
        params: sessionParams,
        querystring: sessionCallsQuerySchema,
        response: { 200: listPageSchema(callSummarySchema) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { cursor, limit = DEFAULT_CALLS_LIMIT } = request.query;
      const session = await findSession(fastify.database, request.auth.project.id, id);
      if (session === undefined) throw notFound(`No session ${id}`);
      const page = await findCallsPage(fastify.database, request.auth.project.id, {
        filters: { sessionId: id },
        after: cursor === undefined ? undefined : decodeCallCursor(cursor),
        limit,
      });
      return {
        items: page.calls.map(toCallSummary),
        nextCursor: page.next === undefined ? undefined : encodeCallCursor(page.next),
      };
    },
  );

  routes.post(
    '/:id/share',
    {
      schema: {
        summary: 'Create a public, read-only, expiring link to the session',
        params: sessionParams,
        body: shareRequestSchema,
        response: { 201: shareCreatedSchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const session = await findSession(fastify.database, request.auth.project.id, id);
      if (session === undefined) throw notFound(`No session ${id}`);
      const token = createShareToken();
      const expiresAt = new Date(Date.now() + request.body.expiresInHours * 3_600_000);
      await createShareLink(fastify.database, {
        id: createId('shr'),
        projectId: request.auth.project.id,
        sessionId: id,
        tokenHash: hashSecret(token),
        expiresAt,
      });
      return reply.code(201).send({
        token,
        url: `${fastify.configuration.publicUrl}/share/${token}`,
        expiresAt: expiresAt.toISOString(),
      });
    },
  );
}
