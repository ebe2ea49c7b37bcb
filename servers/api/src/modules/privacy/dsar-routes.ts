import { errorBodySchema, listPageSchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type AuditRecord, auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { DsarRequest } from '../../platform/database/tables/dsar.table.ts';
import { forPeopleOnly } from '../../platform/http/authentication.ts';
import { decodeRecordCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { ApiError, invalid, notFound } from '../../platform/http/errors.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { checkMembership, membershipOf } from '../orgs/index.ts';
import { createDsarArchive } from './dsar-archive.ts';
import { createDsarRequest, findDsarRequest, listDsarRequests } from './dsar-repository.ts';
import { DSAR_ARCHIVE_DAYS } from './dsar-worker.ts';

const orgParams = z.object({ orgId: z.string().max(64) });
const requestParams = orgParams.extend({ id: z.string().max(64) });

const totalsSchema = z.object({
  projects: z.number(),
  sessions: z.number(),
  chunks: z.number(),
  bytes: z.number().describe("The chunks' JSON bytes, decrypted and inflated"),
  calls: z.number(),
  errors: z.number(),
  customEvents: z.number(),
});

const dsarRequestViewSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  status: z.enum(['queued', 'running', 'ready', 'failed', 'expired']),
  subject: z
    .object({ userId: z.string().optional(), email: z.string().optional() })
    .nullable()
    .describe('Whom the request is about; null once it expired or failed (it is not kept)'),
  requestedBy: z.string().optional(),
  createdAt: z.iso.datetime(),
  startedAt: z.iso.datetime().optional(),
  readyAt: z.iso.datetime().optional(),
  expiresAt: z.iso.datetime().optional().describe('When the archive stops being served'),
  attempts: z.number(),
  error: z.string().optional(),
  manifest: z
    .object({
      totals: totalsSchema,
      projects: z.array(
        z.object({ projectId: z.string(), name: z.string(), sessions: z.number(), calls: z.number() }),
      ),
    })
    .optional()
    .describe('What the archive holds, once gathered'),
  downloadUrl: z
    .string()
    .optional()
    .describe('While ready: the archive (a zip), for admins and owners signed in, until `expiresAt`'),
});

type DsarRequestView = z.infer<typeof dsarRequestViewSchema>;

/** Whether the request's archive is past its time (the sweep may not have marked it yet). */
function isExpired(request: DsarRequest, now: Date): boolean {
  return (
    request.status === 'expired' ||
    (request.status === 'ready' && request.expires_at !== null && request.expires_at <= now)
  );
}

function toView(request: DsarRequest, publicUrl: string, now: Date): DsarRequestView {
  const expired = isExpired(request, now);
  const subject =
    expired || request.status === 'failed'
      ? null
      : {
          ...(request.subject_user_id === null ? {} : { userId: request.subject_user_id }),
          ...(request.subject_email === null ? {} : { email: request.subject_email }),
        };
  return {
    id: request.id,
    organizationId: request.organization_id,
    status: expired ? 'expired' : request.status,
    subject,
    ...(request.requested_by === null ? {} : { requestedBy: request.requested_by }),
    createdAt: request.created_at.toISOString(),
    ...(request.started_at === null ? {} : { startedAt: request.started_at.toISOString() }),
    ...(request.ready_at === null ? {} : { readyAt: request.ready_at.toISOString() }),
    ...(request.expires_at === null ? {} : { expiresAt: request.expires_at.toISOString() }),
    attempts: request.attempts,
    ...(request.error === null ? {} : { error: request.error }),
    ...(request.manifest === null
      ? {}
      : { manifest: { totals: request.manifest.totals, projects: request.manifest.projects } }),
    ...(request.status === 'ready' && !expired
      ? {
          downloadUrl: `${publicUrl}/v1/orgs/${encodeURIComponent(request.organization_id)}/dsar/${request.id}/archive`,
        }
      : {}),
  };
}

const createBodySchema = z
  .strictObject({
    userId: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe("The end user's id as the SDK identified them (`identify({ id })`, `meta.user.id`)"),
    email: z
      .email()
      .max(320)
      .optional()
      .describe('Their e-mail address as identified (compared case-insensitively)'),
  })
  .refine((body) => body.userId !== undefined || body.email !== undefined, {
    message: 'give userId, email or both: whom the request is about',
  });

/** Options of {@link dsarRoutes}. */
export interface DsarRoutesOptions {
  /** Tells the request worker that a request is due (it polls anyway). */
  onQueued?: () => void;
}

/**
 * `/v1/orgs/{orgId}/dsar` (admins and owners, signed in; audited): access requests of end users.
 * `POST` queues one (202), `GET` lists them, `GET …/{id}` shows one, and `GET …/{id}/archive`
 * downloads its zip while it is ready. servers/api/README.md, Privacy requests.
 */
export default async function dsarRoutes(fastify: FastifyInstance, options: DsarRoutesOptions) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const { database } = fastify;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);

  const audit = (request: FastifyRequest, organizationId: string, record: AuditRecord) =>
    recordAudit(
      database,
      organizationId,
      { type: 'user', id: membershipOf(request).person.userId },
      auditOrigin(request),
      record,
    );

  async function found(organizationId: string, id: string): Promise<DsarRequest> {
    const request = /^dsar_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)
      ? await findDsarRequest(database, organizationId, id)
      : undefined;
    if (request === undefined) throw notFound(`No access request ${id.slice(0, 64)}`);
    return request;
  }

  routes.post(
    '/:orgId/dsar',
    {
      config: { administer: true },
      schema: {
        summary: 'Ask for everything stored about one end user (admins and owners): an access request',
        description: `Queues a job that finds every session (with its chunks, events, errors and custom events) and call of the end user identified by \`userId\` and/or \`email\` in the organization's projects; when it is \`ready\`, \`GET …/dsar/{id}\` gives \`downloadUrl\`, a zip served for ${DSAR_ARCHIVE_DAYS} days. Audited as \`dsar.requested\` (without whom it is about).`,
        params: orgParams,
        body: createBodySchema,
        response: {
          202: dsarRequestViewSchema,
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { orgId } = request.params;
      const membership = membershipOf(request);
      const now = new Date();
      const created = await database.transaction().execute(async (transaction) => {
        const row = await createDsarRequest(transaction, {
          organizationId: orgId,
          subject: { userId: request.body.userId, email: request.body.email },
          requestedBy: membership.person.userId,
          now,
        });
        // The audit trail outlives the request: it says by what the subject was named, never who.
        await recordAudit(
          transaction,
          orgId,
          { type: 'user', id: membership.person.userId },
          auditOrigin(request),
          {
            action: 'dsar.requested',
            target: { type: 'dsar_request', id: row.id },
            details: {
              by: [
                ...(request.body.userId === undefined ? [] : ['userId']),
                ...(request.body.email === undefined ? [] : ['email']),
              ],
            },
          },
        );
        return row;
      });
      options.onQueued?.();
      return reply.code(202).send(toView(created, fastify.configuration.publicUrl, now));
    },
  );

  routes.get(
    '/:orgId/dsar',
    {
      config: { administer: true },
      schema: {
        summary: "The organization's access requests, newest first (admins and owners)",
        params: orgParams,
        querystring: z.strictObject({
          limit: integerParameter(1, 200).optional(),
          cursor: z.string().max(200).optional(),
        }),
        response: { 200: listPageSchema(dsarRequestViewSchema), 400: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const { limit = 50, cursor } = request.query;
      const rows = await listDsarRequests(database, orgId, {
        before: cursor === undefined ? undefined : decodeRecordCursor(cursor, 'dsar'),
        limit: limit + 1,
      });
      const { page, more } = keysetPage(rows, limit);
      const now = new Date();
      const last = page.at(-1);
      return {
        items: page.map((row) => toView(row, fastify.configuration.publicUrl, now)),
        ...(more === undefined || last === undefined ? {} : { nextCursor: encodeIdCursor(last.id) }),
      };
    },
  );

  routes.get(
    '/:orgId/dsar/:id',
    {
      config: { administer: true },
      schema: {
        summary: 'One access request: its status, what it found and, while ready, where to download it',
        params: requestParams,
        response: { 200: dsarRequestViewSchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId, id } = request.params;
      return toView(await found(orgId, id), fastify.configuration.publicUrl, new Date());
    },
  );

  routes.get(
    '/:orgId/dsar/:id/archive',
    {
      config: { administer: true },
      schema: {
        summary: "An access request's archive: a zip of everything found (admins and owners, while ready)",
        description: `Streamed as it is built, never stored: \`index.json\` (the last entry) describes every part (path, kind, project, session or call, bytes, SHA-256); each session has \`session.json\`, \`chunks/<seq>.json\` (decrypted, inflated), \`events.jsonl\`, \`errors.jsonl\` and \`custom-events.jsonl\` under \`projects/<projectId>/sessions/<sessionId>/\`; each call is \`projects/<projectId>/calls/<callId>.json\`. 409 while the request is not ready, 410 once it expired (${DSAR_ARCHIVE_DAYS} days after it was ready). Each download is audited as \`dsar.downloaded\`.`,
        params: requestParams,
        response: {
          200: z.any().describe('application/zip'),
          404: errorBodySchema,
          409: errorBodySchema,
          410: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { orgId, id } = request.params;
      const row = await found(orgId, id);
      if (isExpired(row, new Date()))
        throw new ApiError({
          status: 410,
          code: 'not_found',
          message: `Access request ${id} expired: its archive is no longer served (ask again)`,
        });
      if (row.status !== 'ready' || row.manifest === null)
        throw invalid(`Access request ${id} is ${row.status}: its archive is not ready`, 409);
      reply
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${row.id}.zip"`)
        .type('application/zip');
      // HEAD answers the headers alone: nothing is read, nothing downloaded.
      if (request.method === 'HEAD') return reply.send();
      await audit(request, orgId, {
        action: 'dsar.downloaded',
        target: { type: 'dsar_request', id: row.id },
        details: { sessions: row.manifest.totals.sessions, calls: row.manifest.totals.calls },
      });
      const archive = createDsarArchive(
        { database, blobStore: fastify.blobStore, masterKey: fastify.masterKey, log: request.log },
        row,
        row.manifest,
      );
      return reply.send(archive);
    },
  );
}
