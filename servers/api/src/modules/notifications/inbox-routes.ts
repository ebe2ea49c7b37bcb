import { idSchema, listPageSchema, severitySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { NotificationEvent } from '../../platform/database/tables/notifications.table.ts';
import { decodeIdCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { notFound } from '../../platform/http/errors.ts';
import { booleanParameter, integerParameter } from '../../platform/http/query.ts';
import { acknowledgeInboxEvent, findInboxPage } from './inbox-repository.ts';

export const inboxItemSchema = z.object({
  /** The event id (`evt_`): the same as the webhooks of this notification carry. */
  id: z.string(),
  type: z.string(),
  severity: severitySchema,
  title: z.string(),
  summary: z.string(),
  clusterId: z.string().optional(),
  createdAt: z.iso.datetime(),
  ackedAt: z.iso.datetime().optional(),
  /** The webhook `data` of the notification. */
  data: z.record(z.string(), z.unknown()),
});

function toInboxItem(row: NotificationEvent): z.infer<typeof inboxItemSchema> {
  const envelope = JSON.parse(row.payload) as { data: Record<string, unknown> };
  return {
    id: row.id,
    type: row.type,
    severity: severitySchema.catch('info').parse(row.severity),
    title: row.title,
    summary: typeof envelope.data.summary === 'string' ? envelope.data.summary : '',
    clusterId: row.cluster_id ?? undefined,
    createdAt: new Date(row.created_at).toISOString(),
    ackedAt: row.acked_at === null ? undefined : new Date(row.acked_at).toISOString(),
    data: envelope.data,
  };
}

/** `/v1/inbox`: the project's notifications in the app, newest first, fed by the same rules as channels. */
export default async function inboxRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('notifications'));

  routes.get(
    '',
    {
      schema: {
        summary: 'List notifications, newest first',
        querystring: z.strictObject({
          limit: integerParameter(1, 200).optional(),
          cursor: z.string().max(256).optional(),
          acked: booleanParameter.optional().describe('false: only those not acknowledged yet'),
        }),
        response: { 200: listPageSchema(inboxItemSchema) },
      },
    },
    async (request) => {
      const { limit = 50, cursor, acked } = request.query;
      const page = await findInboxPage(fastify.database, request.auth.project.id, {
        acked,
        before: cursor === undefined ? undefined : decodeIdCursor(cursor, 'evt'),
        limit,
      });
      return {
        items: page.events.map(toInboxItem),
        nextCursor: page.next === undefined ? undefined : encodeIdCursor(page.next),
      };
    },
  );

  routes.post(
    '/:id/ack',
    {
      schema: {
        summary: 'Acknowledge a notification (idempotent)',
        params: z.object({ id: idSchema('evt') }),
        response: { 200: inboxItemSchema },
      },
    },
    async (request) => {
      const row = await acknowledgeInboxEvent(fastify.database, request.auth.project.id, request.params.id);
      if (row === undefined) throw notFound(`No notification ${request.params.id}`);
      return toInboxItem(row);
    },
  );
}
