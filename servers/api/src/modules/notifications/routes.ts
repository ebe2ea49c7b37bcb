import { idSchema, listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { type Selectable, sql } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import type {
  Delivery,
  DeliveryAttempt,
  NotificationChannel,
  NotificationRule,
} from '../../platform/database/tables/notifications.table.ts';
import { decodeIdCursor, encodeIdCursor } from '../../platform/http/cursor.ts';
import { invalid, notFound } from '../../platform/http/errors.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { integerParameter } from '../../platform/http/query.ts';
import { createId } from '../../platform/ids.ts';
import { createWebhookSecret } from '../../platform/secrets.ts';
import { ROTATION_OVERLAP_MS, sealChannelSecret } from './channel-secrets.ts';
import { replayDelivery } from './deliveries.ts';
import { queueTestNotification } from './notify.ts';
import { ruleSourceSchema } from './rules.ts';

/** Channels and rules a project may have. */
export const MAX_CHANNELS = 50;
export const MAX_RULES = 200;
const MAX_DELIVERIES_LIMIT = 200;

const nameSchema = z.string().trim().min(1).max(128);
const webhookUrlSchema = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    message: 'must be an absolute http(s) URL',
  })
  .refine(
    (value) => !URL.canParse(value) || (new URL(value).username === '' && new URL(value).password === ''),
    {
      message: 'must not carry credentials (user:password@); receivers verify the signature instead',
    },
  );

const channelIdSchema = idSchema('ch');
const ruleIdSchema = idSchema('rule');
const deliveryIdSchema = idSchema('dlv');

const channelCreateSchema = z.strictObject({
  type: z.literal('webhook'),
  name: nameSchema,
  url: webhookUrlSchema,
  enabled: z.boolean().optional(),
});
const channelUpdateSchema = z
  .strictObject({
    name: nameSchema.optional(),
    url: webhookUrlSchema.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((value) => Object.keys(value).length > 0, 'give at least one of name, url, enabled');

export const channelSchema = z.object({
  id: z.string(),
  type: z.literal('webhook'),
  name: z.string(),
  url: z.string(),
  enabled: z.boolean(),
  /** While set, deliveries are signed with the previous secret too (24 h after a rotation). */
  previousSecretExpiresAt: z.iso.datetime().optional(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
const channelWithSecretSchema = z.object({
  channel: channelSchema,
  /** The signing secret: shown this once, stored encrypted. */
  secret: z.string(),
});

const throttleSchema = z
  .int()
  .min(0)
  .max(7 * 24 * 60);
/** Default throttle of a rule: one notification per subject (cluster, custom event name) per hour. */
export const DEFAULT_THROTTLE_MINUTES = 60;

const ruleCreateSchema = z.strictObject({
  name: nameSchema,
  enabled: z.boolean().optional(),
  source: ruleSourceSchema,
  channelIds: z.array(channelIdSchema).max(20).default([]),
  throttleMinutes: throttleSchema.optional(),
});
const ruleUpdateSchema = z
  .strictObject({
    name: nameSchema.optional(),
    enabled: z.boolean().optional(),
    source: ruleSourceSchema.optional(),
    channelIds: z.array(channelIdSchema).max(20).optional(),
    throttleMinutes: throttleSchema.optional(),
  })
  .refine((value) => Object.keys(value).length > 0, 'give at least one field to change');

export const ruleSchema = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  source: ruleSourceSchema,
  channelIds: z.array(z.string()),
  throttleMinutes: z.int(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const attemptSchema = z.object({
  attempt: z.int(),
  startedAt: z.iso.datetime(),
  durationMs: z.int(),
  outcome: z.enum(['delivered', 'failed', 'refused']),
  statusCode: z.int().optional(),
  /** The first 2 KB of the response. */
  responseBody: z.string().optional(),
  error: z.string().optional(),
});
export const deliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  channelId: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.int(),
  /** When the next attempt is due (pending deliveries). */
  nextAttemptAt: z.iso.datetime().optional(),
  lastStatus: z.int().optional(),
  lastError: z.string().optional(),
  replayOf: z.string().optional(),
  deliveredAt: z.iso.datetime().optional(),
  createdAt: z.iso.datetime(),
  attemptLog: z.array(attemptSchema),
});

const deliveryListQuerySchema = z.strictObject({
  limit: integerParameter(1, MAX_DELIVERIES_LIMIT).optional(),
  cursor: z.string().max(256).optional(),
  channel: channelIdSchema.optional(),
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  eventType: z.string().min(1).max(64).optional(),
});

function toChannel(row: NotificationChannel): z.infer<typeof channelSchema> {
  const expires = row.previous_secret_expires_at;
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    url: row.url,
    enabled: row.enabled,
    ...(expires !== null && new Date(expires).getTime() > Date.now()
      ? { previousSecretExpiresAt: new Date(expires).toISOString() }
      : {}),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

function toRule(row: NotificationRule): z.infer<typeof ruleSchema> {
  return {
    id: row.id,
    name: row.name,
    enabled: row.enabled,
    source: ruleSourceSchema.parse(row.source),
    channelIds: row.channel_ids,
    throttleMinutes: row.throttle_minutes,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

function toDelivery(row: Delivery, attempts: readonly DeliveryAttempt[]): z.infer<typeof deliverySchema> {
  const optional = <Value>(value: Value | null) => (value === null ? undefined : value);
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    channelId: row.channel_id,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? new Date(row.due_at).toISOString() : undefined,
    lastStatus: optional(row.last_status),
    lastError: optional(row.last_error),
    replayOf: optional(row.replay_of),
    deliveredAt: row.delivered_at === null ? undefined : new Date(row.delivered_at).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
    attemptLog: attempts
      .filter((attempt) => attempt.delivery_id === row.id)
      .sort((a, b) => a.attempt - b.attempt)
      .map((attempt) => ({
        attempt: attempt.attempt,
        startedAt: new Date(attempt.started_at).toISOString(),
        durationMs: attempt.duration_ms,
        outcome: attempt.outcome,
        statusCode: optional(attempt.status_code),
        responseBody: optional(attempt.response_body),
        error: optional(attempt.error),
      })),
  };
}

/**
 * `/v1/notifications`: the token's project's channels, rules and deliveries. Another project's
 * channel, rule or delivery is a 404.
 */
export default async function notificationRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authenticate);
  const database = fastify.database;

  type OwnedTable = 'notification_channels' | 'notification_rules';
  const nouns: Record<OwnedTable, string> = { notification_channels: 'channel', notification_rules: 'rule' };
  /** The project's row `id` of `table`, or a 404 (another project's too). */
  const findOwned = async <Table extends OwnedTable>(table: Table, projectId: string, id: string) => {
    const row = await database
      .selectFrom(table as OwnedTable)
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) throw notFound(`No ${nouns[table]} ${id}`);
    return row as Selectable<Database[Table]>;
  };
  const findChannel = (projectId: string, id: string) => findOwned('notification_channels', projectId, id);
  const findRule = (projectId: string, id: string) => findOwned('notification_rules', projectId, id);
  /** A 409 when the project has `max` rows of `table` already. */
  const checkRoom = async (table: OwnedTable, projectId: string, max: number) => {
    const count = await database
      .selectFrom(table)
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    if (Number(count.count) >= max) throw invalid(`A project has at most ${max} ${nouns[table]}s`, 409);
  };
  /** Every id must be a channel of the project. */
  const checkChannels = async (projectId: string, ids: readonly string[]) => {
    if (ids.length === 0) return;
    const found = await database
      .selectFrom('notification_channels')
      .select('id')
      .where('project_id', '=', projectId)
      .where('id', 'in', ids)
      .execute();
    const known = new Set(found.map((row) => row.id));
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0) throw invalid(`Invalid body: no channel ${missing.join(', ')} in this project`);
  };

  // Channels ------------------------------------------------------------------------------------

  routes.get(
    '/channels',
    { schema: { summary: 'List notification channels', response: { 200: listPageSchema(channelSchema) } } },
    async (request) => {
      const rows = await database
        .selectFrom('notification_channels')
        .selectAll()
        .where('project_id', '=', request.auth.project.id)
        .orderBy('id')
        .execute();
      return { items: rows.map(toChannel) };
    },
  );

  routes.post(
    '/channels',
    {
      schema: {
        summary: 'Create a webhook channel; the answer carries its signing secret, shown this once',
        body: channelCreateSchema,
        response: { 201: channelWithSecretSchema },
      },
    },
    async (request, reply) => {
      const { project } = request.auth;
      await checkRoom('notification_channels', project.id, MAX_CHANNELS);
      const id = createId('ch');
      const secret = createWebhookSecret();
      const row = await database
        .insertInto('notification_channels')
        .values({
          project_id: project.id,
          id,
          type: 'webhook',
          name: request.body.name,
          url: request.body.url,
          enabled: request.body.enabled ?? true,
          sealed_secret: sealChannelSecret(fastify.masterKey, project, id, secret),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.code(201).send({ channel: toChannel(row), secret });
    },
  );

  routes.get(
    '/channels/:id',
    {
      schema: {
        summary: 'One channel',
        params: z.object({ id: channelIdSchema }),
        response: { 200: channelSchema },
      },
    },
    async (request) => toChannel(await findChannel(request.auth.project.id, request.params.id)),
  );

  routes.patch(
    '/channels/:id',
    {
      schema: {
        summary: 'Rename, re-point or disable a channel',
        params: z.object({ id: channelIdSchema }),
        body: channelUpdateSchema,
        response: { 200: channelSchema },
      },
    },
    async (request) => {
      await findChannel(request.auth.project.id, request.params.id);
      const row = await database
        .updateTable('notification_channels')
        .set({ ...request.body, updated_at: new Date() })
        .where('project_id', '=', request.auth.project.id)
        .where('id', '=', request.params.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toChannel(row);
    },
  );

  routes.delete(
    '/channels/:id',
    {
      schema: {
        summary: 'Delete a channel: its pending deliveries fail, rules stop routing to it',
        params: z.object({ id: channelIdSchema }),
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const projectId = request.auth.project.id;
      await findChannel(projectId, id);
      await database.transaction().execute(async (transaction) => {
        await transaction
          .deleteFrom('notification_channels')
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .execute();
        await transaction
          .updateTable('deliveries')
          .set({ status: 'failed', last_error: 'The channel was deleted', locked_until: null })
          .where('project_id', '=', projectId)
          .where('channel_id', '=', id)
          .where('status', '=', 'pending')
          .execute();
        await transaction
          .updateTable('notification_rules')
          .set({
            channel_ids: sql`coalesce((select jsonb_agg(value) from jsonb_array_elements(channel_ids) where value <> to_jsonb(${id}::text)), '[]'::jsonb)`,
            updated_at: new Date(),
          })
          .where('project_id', '=', projectId)
          .where(sql<boolean>`channel_ids @> jsonb_build_array(${id}::text)`)
          .execute();
      });
      return reply.code(204).send();
    },
  );

  routes.post(
    '/channels/:id/rotate-secret',
    {
      schema: {
        summary: 'Rotate the signing secret: the old one keeps signing too for 24 h',
        params: z.object({ id: channelIdSchema }),
        response: { 200: channelWithSecretSchema },
      },
    },
    async (request) => {
      const { project } = request.auth;
      const channel = await findChannel(project.id, request.params.id);
      const secret = createWebhookSecret();
      const row = await database
        .updateTable('notification_channels')
        .set({
          sealed_secret: sealChannelSecret(fastify.masterKey, project, channel.id, secret),
          sealed_previous_secret: channel.sealed_secret,
          previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS),
          updated_at: new Date(),
        })
        .where('project_id', '=', project.id)
        .where('id', '=', channel.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { channel: toChannel(row), secret };
    },
  );

  routes.post(
    '/channels/:id/test',
    {
      schema: {
        summary: 'Send a notification.test event to the channel',
        params: z.object({ id: channelIdSchema }),
        response: { 202: z.object({ eventId: z.string(), deliveryId: z.string() }) },
      },
    },
    async (request, reply) => {
      const channel = await findChannel(request.auth.project.id, request.params.id);
      const queued = await queueTestNotification(
        database,
        request.auth.project,
        channel,
        { channel: `${fastify.configuration.appUrl}/settings/notifications/channels/${channel.id}` },
        new Date(),
      );
      fastify.deliveryWorker.wake();
      return reply.code(202).send(queued);
    },
  );

  // Rules ---------------------------------------------------------------------------------------

  routes.get(
    '/rules',
    { schema: { summary: 'List notification rules', response: { 200: listPageSchema(ruleSchema) } } },
    async (request) => {
      const rows = await database
        .selectFrom('notification_rules')
        .selectAll()
        .where('project_id', '=', request.auth.project.id)
        .orderBy('id')
        .execute();
      return { items: rows.map(toRule) };
    },
  );

  routes.post(
    '/rules',
    {
      schema: {
        summary: 'Create a rule: which events go to which channels',
        body: ruleCreateSchema,
        response: { 201: ruleSchema },
      },
    },
    async (request, reply) => {
      const projectId = request.auth.project.id;
      await checkRoom('notification_rules', projectId, MAX_RULES);
      const channelIds = [...new Set(request.body.channelIds)];
      await checkChannels(projectId, channelIds);
      const row = await database
        .insertInto('notification_rules')
        .values({
          project_id: projectId,
          id: createId('rule'),
          name: request.body.name,
          enabled: request.body.enabled ?? true,
          source: JSON.stringify(request.body.source),
          channel_ids: JSON.stringify(channelIds),
          throttle_minutes: request.body.throttleMinutes ?? DEFAULT_THROTTLE_MINUTES,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.code(201).send(toRule(row));
    },
  );

  routes.get(
    '/rules/:id',
    {
      schema: { summary: 'One rule', params: z.object({ id: ruleIdSchema }), response: { 200: ruleSchema } },
    },
    async (request) => toRule(await findRule(request.auth.project.id, request.params.id)),
  );

  routes.patch(
    '/rules/:id',
    {
      schema: {
        summary: 'Change a rule (a new source replaces the old one whole)',
        params: z.object({ id: ruleIdSchema }),
        body: ruleUpdateSchema,
        response: { 200: ruleSchema },
      },
    },
    async (request) => {
      const projectId = request.auth.project.id;
      await findRule(projectId, request.params.id);
      const { name, enabled, source, channelIds, throttleMinutes } = request.body;
      const channels = channelIds === undefined ? undefined : [...new Set(channelIds)];
      if (channels !== undefined) await checkChannels(projectId, channels);
      const row = await database
        .updateTable('notification_rules')
        .set({
          ...(name === undefined ? {} : { name }),
          ...(enabled === undefined ? {} : { enabled }),
          ...(source === undefined ? {} : { source: JSON.stringify(source) }),
          ...(channels === undefined ? {} : { channel_ids: JSON.stringify(channels) }),
          ...(throttleMinutes === undefined ? {} : { throttle_minutes: throttleMinutes }),
          updated_at: new Date(),
        })
        .where('project_id', '=', projectId)
        .where('id', '=', request.params.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRule(row);
    },
  );

  routes.delete(
    '/rules/:id',
    { schema: { summary: 'Delete a rule', params: z.object({ id: ruleIdSchema }) } },
    async (request, reply) => {
      await findRule(request.auth.project.id, request.params.id);
      await database.transaction().execute(async (transaction) => {
        await transaction
          .deleteFrom('notification_rules')
          .where('project_id', '=', request.auth.project.id)
          .where('id', '=', request.params.id)
          .execute();
        await transaction
          .deleteFrom('rule_throttles')
          .where('project_id', '=', request.auth.project.id)
          .where('rule_id', '=', request.params.id)
          .execute();
      });
      return reply.code(204).send();
    },
  );

  // Deliveries ----------------------------------------------------------------------------------

  const withAttempts = async (projectId: string, rows: readonly Delivery[]) => {
    if (rows.length === 0) return [];
    const attempts = await database
      .selectFrom('delivery_attempts')
      .selectAll()
      .where('project_id', '=', projectId)
      .where(
        'delivery_id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    return rows.map((row) => toDelivery(row, attempts));
  };

  routes.get(
    '/deliveries',
    {
      schema: {
        summary: 'List webhook deliveries, newest first, with every attempt',
        querystring: deliveryListQuerySchema,
        response: { 200: listPageSchema(deliverySchema) },
      },
    },
    async (request) => {
      const { limit = 50, cursor, channel, status, eventType } = request.query;
      let query = database
        .selectFrom('deliveries')
        .selectAll()
        .where('project_id', '=', request.auth.project.id)
        .orderBy('id', 'desc')
        .limit(limit + 1);
      if (cursor !== undefined) query = query.where('id', '<', decodeIdCursor(cursor, 'dlv'));
      if (channel !== undefined) query = query.where('channel_id', '=', channel);
      if (status !== undefined) query = query.where('status', '=', status);
      if (eventType !== undefined) query = query.where('event_type', '=', eventType);
      const rows = await query.execute();
      const { page, more } = keysetPage(rows, limit);
      return {
        items: await withAttempts(request.auth.project.id, page),
        nextCursor: more === undefined ? undefined : encodeIdCursor(more.id),
      };
    },
  );

  routes.get(
    '/deliveries/:id',
    {
      schema: {
        summary: 'One delivery with its attempts',
        params: z.object({ id: deliveryIdSchema }),
        response: { 200: deliverySchema },
      },
    },
    async (request) => {
      const row = await database
        .selectFrom('deliveries')
        .selectAll()
        .where('project_id', '=', request.auth.project.id)
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      if (row === undefined) throw notFound(`No delivery ${request.params.id}`);
      const [delivery] = await withAttempts(request.auth.project.id, [row]);
      return delivery as z.infer<typeof deliverySchema>;
    },
  );

  routes.post(
    '/deliveries/:id/replay',
    {
      schema: {
        summary: 'Send a delivery again: a new delivery of the same event (same evt_ id) to the same channel',
        params: z.object({ id: deliveryIdSchema }),
        response: { 202: deliverySchema },
      },
    },
    async (request, reply) => {
      const newId = createId('dlv');
      const replayed = await replayDelivery(
        database,
        request.auth.project.id,
        request.params.id,
        newId,
        new Date(),
      );
      if (replayed === undefined) throw notFound(`No delivery ${request.params.id}`);
      const row = await database
        .selectFrom('deliveries')
        .selectAll()
        .where('project_id', '=', request.auth.project.id)
        .where('id', '=', newId)
        .executeTakeFirstOrThrow();
      fastify.deliveryWorker.wake();
      return reply.code(202).send(toDelivery(row, []));
    },
  );
}
