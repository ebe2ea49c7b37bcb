import { errorBodySchema, listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { ErasureRequest } from '../../platform/database/tables/privacy.table.ts';
import { forPeopleOnly } from '../../platform/http/authentication.ts';
import { decodeRecordCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { notFound } from '../../platform/http/errors.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { checkMembership, membershipOf } from '../orgs/index.ts';
import { createErasure, type ErasureSubject, erasureIsFor } from './erasure.ts';

const orgParams = z.object({ orgId: z.string().max(64) });

const userIdSchema = z.string().trim().min(1).max(256);
const emailSchema = z
  .string()
  .trim()
  .min(3)
  .max(320)
  .check(z.email({ message: 'must be an e-mail address' }));

const subjectSchema = z
  .strictObject({
    userId: userIdSchema.optional().describe('The user id your app gave `identify`'),
    email: emailSchema.optional().describe('The e-mail address your app gave `identify`'),
  })
  .refine((subject) => subject.userId !== undefined || subject.email !== undefined, {
    message: 'give userId, email or both',
  });

const erasureViewSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  /** Which identifiers were given (the values are not kept once it completes). */
  subject: z.object({ userId: z.boolean(), email: z.boolean() }),
  sessionsErased: z.number(),
  /** What was removed: rows per table, `blobs` queued and `blobs_removed` from the blob store. */
  receipt: z.record(z.string(), z.number()),
  error: z.string().nullable(),
  requestedBy: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

const toView = (row: ErasureRequest): z.infer<typeof erasureViewSchema> => ({
  id: row.id,
  organizationId: row.organization_id,
  status: row.status,
  subject: { userId: row.user_id_given, email: row.email_given },
  sessionsErased: row.sessions_erased,
  receipt: row.receipt,
  error: row.error,
  requestedBy: row.requested_by,
  createdAt: row.created_at.toISOString(),
  startedAt: row.started_at?.toISOString() ?? null,
  finishedAt: row.finished_at?.toISOString() ?? null,
});

/**
 * `/v1/orgs/{orgId}/erasure` (admins and owners): an end user's erasure across the organization's
 * projects, carried out by the privacy worker; its receipt says what was removed. Creating one is
 * audited as `privacy.erasure_requested`. servers/api/README.md, Privacy requests.
 */
export default async function erasureRoutes(fastify: FastifyInstance, options: { onCreated?: () => void }) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);

  routes.post(
    '/:orgId/erasure',
    {
      config: { administer: true },
      schema: {
        summary: "Erase an end user's data across the organization's projects (admins and owners)",
        description:
          "Every session of the user (by the user id or e-mail address given to `identify`, and the other sessions of their visits) is deleted everywhere it lives: rows, chunk blobs, calls and their series, signals, page views and clicks, issue occurrences (cluster counts corrected), share links, spans and logs sent with the session's id, AI explanations and notifications that mention it. Usage stays as counts. The request is carried out in the background; poll it for its receipt.",
        params: orgParams,
        body: subjectSchema,
        response: { 202: erasureViewSchema, 400: errorBodySchema, 403: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { orgId } = request.params;
      const membership = membershipOf(request);
      const subject: ErasureSubject = {
        ...(request.body.userId === undefined ? {} : { userId: request.body.userId }),
        ...(request.body.email === undefined ? {} : { email: request.body.email }),
      };
      const created = await database.transaction().execute(async (transaction) => {
        const row = await createErasure(transaction, orgId, subject, membership.person.userId);
        await recordAudit(
          transaction,
          orgId,
          { type: 'user', id: membership.person.userId },
          auditOrigin(request),
          {
            action: 'privacy.erasure_requested',
            target: { type: 'erasure', id: row.id },
            details: { userId: row.user_id_given, email: row.email_given },
          },
        );
        return row;
      });
      options.onCreated?.();
      return reply.status(202).send(toView(created));
    },
  );

  routes.get(
    '/:orgId/erasure',
    {
      config: { administer: true },
      schema: {
        summary: "The organization's erasure requests, newest first (admins and owners)",
        description:
          'With `userId` and/or `email`, only the requests made for exactly those identifiers (matched against a salted hash: the identifiers themselves are not kept once a request completes).',
        params: orgParams,
        querystring: z.strictObject({
          userId: userIdSchema.optional(),
          email: emailSchema.optional(),
          limit: integerParameter(1, 200).optional(),
          cursor: z.string().max(200).optional(),
        }),
        response: { 200: listPageSchema(erasureViewSchema), 400: errorBodySchema, 403: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const { limit = 50, cursor, userId, email } = request.query;
      const subject: ErasureSubject | undefined =
        userId === undefined && email === undefined
          ? undefined
          : { ...(userId === undefined ? {} : { userId }), ...(email === undefined ? {} : { email }) };
      let query = database
        .selectFrom('erasure_requests')
        .selectAll()
        .where('organization_id', '=', orgId)
        .orderBy('id', 'desc');
      if (cursor !== undefined) query = query.where('id', '<', decodeRecordCursor(cursor, 'era'));
      if (subject === undefined) {
        const { page, more } = keysetPage(await query.limit(limit + 1).execute(), limit);
        return {
          items: page.map(toView),
          nextCursor: more === undefined ? undefined : encodeIdCursor(more.id),
        };
      }
      // The subject is a salted hash per request: each request is checked (erasures are few).
      const matching = (await query.execute()).filter((row) => erasureIsFor(row, subject));
      const { page, more } = keysetPage(matching, limit);
      return {
        items: page.map(toView),
        nextCursor: more === undefined ? undefined : encodeIdCursor(more.id),
      };
    },
  );

  routes.get(
    '/:orgId/erasure/:erasureId',
    {
      config: { administer: true },
      schema: {
        summary: 'One erasure request and its receipt (admins and owners)',
        params: orgParams.extend({ erasureId: z.string().max(64) }),
        response: { 200: erasureViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId, erasureId } = request.params;
      const row = await database
        .selectFrom('erasure_requests')
        .selectAll()
        .where('organization_id', '=', orgId)
        .where('id', '=', erasureId)
        .executeTakeFirst();
      if (row === undefined) throw notFound('No such erasure request');
      return toView(row);
    },
  );
}
