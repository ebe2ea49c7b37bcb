import { idSchema, listPageSchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
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
import { integerParameter } from '../../platform/http/query.ts';
import { createId } from '../../platform/ids.ts';
import { createWebhookSecret } from '../../platform/secrets.ts';
import { ROTATION_OVERLAP_MS, sealChannelSecret } from './channel-secrets.ts';
import { queueTestNotification } from './notify.ts';
import {
  countChannels,
  countRules,
  deleteChannel,
  deleteRule,
  findChannel,
  findDeliveriesPage,
  findDelivery,
  findDeliveryAttempts,
  findRule,
  findUnknownChannels,
  insertChannel,
  insertRule,
  listChannels,
  listRules,
  queueReplay,
  rotateChannelSecret,
  updateChannel,
  updateRule,
} from './repository.ts';
import { ruleSourceSchema } from './rules.ts';

/** Channels and rules a project may have. */
export const MAX_CHANNELS = 50;
const MAX_RULES = 200;
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
const DEFAULT_THROTTLE_MINUTES = 60;

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

const attemptSchema = z.object({
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

const noChannel = (id: string) => notFound(`No channel ${id}`);
const noRule = (id: string) => notFound(`No rule ${id}`);
const noDelivery = (id: string) => notFound(`No delivery ${id}`);

/** A 409 when the project has `max` channels or rules (`count`) already. */
function checkRoom(count: number, max: number, noun: 'channel' | 'rule'): void {
  if (count >= max) throw invalid(`A project has at most ${max} ${noun}s`, 409);
}

/** A 400 unless every id is a channel of the project. */
async function checkChannels(
  database: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
): Promise<void> {
  const missing = await findUnknownChannels(database, projectId, ids);
  if (missing.length > 0) throw invalid(`Invalid body: no channel ${missing.join(', ')} in this project`);
}

/**
 * `/v1/notifications`: the token's project's channels, rules and deliveries. Another project's
 * channel, rule or delivery is a 404, and so is one deleted meanwhile (the storage is in
 * repository.ts: each change is one statement that says whether it found its row).
 */
export default async function notificationRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  routes.addHook('onRequest', fastify.authorize('notifications'));
  const database = fastify.database;

  // Channels ------------------------------------------------------------------------------------

  routes.get(
    '/channels',
    { schema: { summary: 'List notification channels', response: { 200: listPageSchema(channelSchema) } } },
    async (request) => ({ items: (await listChannels(database, request.auth.project.id)).map(toChannel) }),
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
      checkRoom(await countChannels(database, project.id), MAX_CHANNELS, 'channel');
      const id = createId('ch');
      const secret = createWebhookSecret();
      const row = await insertChannel(database, {
        projectId: project.id,
        id,
        name: request.body.name,
        url: request.body.url,
        enabled: request.body.enabled ?? true,
        sealedSecret: sealChannelSecret(fastify.masterKey, project, id, secret),
      });
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
    async (request) => {
      const row = await findChannel(database, request.auth.project.id, request.params.id);
      if (row === undefined) throw noChannel(request.params.id);
      return toChannel(row);
    },
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
      const row = await updateChannel(
        database,
        request.auth.project.id,
        request.params.id,
        request.body,
        new Date(),
      );
      if (row === undefined) throw noChannel(request.params.id);
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
      const deleted = await deleteChannel(database, request.auth.project.id, request.params.id, new Date());
      if (deleted === undefined) throw noChannel(request.params.id);
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
      const { id } = request.params;
      const secret = createWebhookSecret();
      const now = new Date();
      const row = await rotateChannelSecret(
        database,
        project.id,
        id,
        {
          sealedSecret: sealChannelSecret(fastify.masterKey, project, id, secret),
          previousExpiresAt: new Date(now.getTime() + ROTATION_OVERLAP_MS),
        },
        now,
      );
      if (row === undefined) throw noChannel(id);
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
      // A channel deleted after this read gets a test delivery that fails ("no channel"), like
      // any delivery queued just before its channel's deletion.
      const channel = await findChannel(database, request.auth.project.id, request.params.id);
      if (channel === undefined) throw noChannel(request.params.id);
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
    async (request) => ({ items: (await listRules(database, request.auth.project.id)).map(toRule) }),
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
      checkRoom(await countRules(database, projectId), MAX_RULES, 'rule');
      const channelIds = [...new Set(request.body.channelIds)];
      await checkChannels(database, projectId, channelIds);
      const row = await insertRule(database, projectId, createId('rule'), {
        name: request.body.name,
        enabled: request.body.enabled ?? true,
        source: request.body.source,
        channelIds,
        throttleMinutes: request.body.throttleMinutes ?? DEFAULT_THROTTLE_MINUTES,
      });
      return reply.code(201).send(toRule(row));
    },
  );

  routes.get(
    '/rules/:id',
    {
      schema: { summary: 'One rule', params: z.object({ id: ruleIdSchema }), response: { 200: ruleSchema } },
    },
    async (request) => {
      const row = await findRule(database, request.auth.project.id, request.params.id);
      if (row === undefined) throw noRule(request.params.id);
      return toRule(row);
    },
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
      const { channelIds, ...changes } = request.body;
      const channels = channelIds === undefined ? undefined : [...new Set(channelIds)];
      // The update first (no such rule: 404), then the channels: unknown ones roll it back (400).
      const row = await database.transaction().execute(async (transaction) => {
        const updated = await updateRule(
          transaction,
          projectId,
          request.params.id,
          { ...changes, channelIds: channels },
          new Date(),
        );
        if (updated !== undefined && channels !== undefined)
          await checkChannels(transaction, projectId, channels);
        return updated;
      });
      if (row === undefined) throw noRule(request.params.id);
      return toRule(row);
    },
  );

  routes.delete(
    '/rules/:id',
    { schema: { summary: 'Delete a rule', params: z.object({ id: ruleIdSchema }) } },
    async (request, reply) => {
      const deleted = await deleteRule(database, request.auth.project.id, request.params.id);
      if (deleted === undefined) throw noRule(request.params.id);
      return reply.code(204).send();
    },
  );

  // Deliveries ----------------------------------------------------------------------------------

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
      const projectId = request.auth.project.id;
      const { limit = 50, cursor, channel, status, eventType } = request.query;
      const page = await findDeliveriesPage(database, projectId, {
        filters: { channelId: channel, status, eventType },
        before: cursor === undefined ? undefined : decodeIdCursor(cursor, 'dlv'),
        limit,
      });
      const attempts = await findDeliveryAttempts(
        database,
        projectId,
        page.deliveries.map((row) => row.id),
      );
      return {
        items: page.deliveries.map((row) => toDelivery(row, attempts)),
        nextCursor: page.next === undefined ? undefined : encodeIdCursor(page.next),
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
      const projectId = request.auth.project.id;
      const row = await findDelivery(database, projectId, request.params.id);
      if (row === undefined) throw noDelivery(request.params.id);
      return toDelivery(row, await findDeliveryAttempts(database, projectId, [row.id]));
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
      const row = await queueReplay(
        database,
        request.auth.project.id,
        request.params.id,
        createId('dlv'),
        new Date(),
      );
      if (row === undefined) throw noDelivery(request.params.id);
      fastify.deliveryWorker.wake();
      return reply.code(202).send(toDelivery(row, []));
    },
  );
}
