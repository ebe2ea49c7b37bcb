import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type {
  Delivery,
  DeliveryAttempt,
  DeliveryStatus,
  NotificationChannel,
  NotificationRule,
} from '../../platform/database/tables/notifications.table.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';
import { replayDelivery } from './deliveries.ts';

// The storage of `/v1/notifications`: channels, rules and the deliveries of the outbox. Every
// query is scoped by a project id first, so a caller only ever reaches the rows of the project it
// passes (the routes pass the token's project). What matches nothing is `undefined` (or an empty
// list): the routes decide on the 404. A change is one statement that says whether it found its
// row (`update … where project_id and id … returning`), so a row deleted concurrently is a miss,
// never an error.

type Executor = Kysely<Database> | Transaction<Database>;

// Channels --------------------------------------------------------------------------------------

/** The project's channels, by id. */
export async function listChannels(database: Executor, projectId: string): Promise<NotificationChannel[]> {
  return database
    .selectFrom('notification_channels')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
}

/** The project's channel `id`, or `undefined` (another project's too). */
export async function findChannel(
  database: Executor,
  projectId: string,
  id: string,
): Promise<NotificationChannel | undefined> {
  return database
    .selectFrom('notification_channels')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** How many channels the project has. */
export async function countChannels(database: Executor, projectId: string): Promise<number> {
  const { count } = await database
    .selectFrom('notification_channels')
    .select(({ fn }) => fn.countAll<number>().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Those of `ids` that are not channels of the project (none: every one is). */
export async function findUnknownChannels(
  database: Executor,
  projectId: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const found = await database
    .selectFrom('notification_channels')
    .select('id')
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .execute();
  const known = new Set(found.map((row) => row.id));
  return ids.filter((id) => !known.has(id));
}

/** Writes a new webhook channel (its secret already sealed). */
export async function insertChannel(
  database: Executor,
  values: {
    projectId: string;
    id: string;
    name: string;
    url: string;
    enabled: boolean;
    sealedSecret: Uint8Array;
  },
): Promise<NotificationChannel> {
  return (
    database
      .insertInto('notification_channels')
      .values({
        project_id: values.projectId,
        id: values.id,
        type: 'webhook',
        name: values.name,
        url: values.url,
        enabled: values.enabled,
        sealed_secret: values.sealedSecret,
      })
      .returningAll()
      // An insert of one row returns that row, or fails.
      .executeTakeFirstOrThrow()
  );
}

/** What `PATCH /channels/:id` may change. */
export interface ChannelChanges {
  name?: string | undefined;
  url?: string | undefined;
  enabled?: boolean | undefined;
}

/** Changes the project's channel `id`; `undefined` when there is no such channel (any more). */
export async function updateChannel(
  database: Executor,
  projectId: string,
  id: string,
  changes: ChannelChanges,
  now: Date,
): Promise<NotificationChannel | undefined> {
  return database
    .updateTable('notification_channels')
    .set({
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.enabled === undefined ? {} : { enabled: changes.enabled }),
      updated_at: now,
    })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Makes `sealedSecret` the channel's secret and its current one the previous secret, which keeps
 * signing until `previousExpiresAt` (one statement: the previous secret is the row's own).
 * `undefined` when the project has no such channel (any more).
 */
export async function rotateChannelSecret(
  database: Executor,
  projectId: string,
  id: string,
  secrets: { sealedSecret: Uint8Array; previousExpiresAt: Date },
  now: Date,
): Promise<NotificationChannel | undefined> {
  return database
    .updateTable('notification_channels')
    .set(({ ref }) => ({
      sealed_secret: secrets.sealedSecret,
      sealed_previous_secret: ref('sealed_secret'),
      previous_secret_expires_at: secrets.previousExpiresAt,
      updated_at: now,
    }))
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes the project's channel `id` in one transaction: its pending deliveries fail and the rules
 * stop routing to it. `undefined` (and nothing changed) when there is no such channel. Opens its
 * own transaction, so it takes the database, not a transaction.
 */
export async function deleteChannel(
  database: Kysely<Database>,
  projectId: string,
  id: string,
  now: Date,
): Promise<{ id: string } | undefined> {
  return database.transaction().execute(async (transaction) => {
    const deleted = await transaction
      .deleteFrom('notification_channels')
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    if (deleted === undefined) return undefined;
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
        updated_at: now,
      })
      .where('project_id', '=', projectId)
      .where(sql<boolean>`channel_ids @> jsonb_build_array(${id}::text)`)
      .execute();
    return deleted;
  });
}

// Rules -----------------------------------------------------------------------------------------

/** The project's rules, by id. */
export async function listRules(database: Executor, projectId: string): Promise<NotificationRule[]> {
  return database
    .selectFrom('notification_rules')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
}

/** The project's rule `id`, or `undefined` (another project's too). */
export async function findRule(
  database: Executor,
  projectId: string,
  id: string,
): Promise<NotificationRule | undefined> {
  return database
    .selectFrom('notification_rules')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** How many rules the project has. */
export async function countRules(database: Executor, projectId: string): Promise<number> {
  const { count } = await database
    .selectFrom('notification_rules')
    .select(({ fn }) => fn.countAll<number>().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** A rule as the routes write it: its source as validated, its channels without duplicates. */
export interface RuleValues {
  name: string;
  enabled: boolean;
  source: Record<string, unknown>;
  channelIds: readonly string[];
  throttleMinutes: number;
}

/** Writes a new rule. */
export async function insertRule(
  database: Executor,
  projectId: string,
  id: string,
  values: RuleValues,
): Promise<NotificationRule> {
  return (
    database
      .insertInto('notification_rules')
      .values({
        project_id: projectId,
        id,
        name: values.name,
        enabled: values.enabled,
        source: JSON.stringify(values.source),
        channel_ids: JSON.stringify(values.channelIds),
        throttle_minutes: values.throttleMinutes,
      })
      .returningAll()
      // An insert of one row returns that row, or fails.
      .executeTakeFirstOrThrow()
  );
}

/** Changes the project's rule `id` (the fields given); `undefined` when there is no such rule (any more). */
export async function updateRule(
  database: Executor,
  projectId: string,
  id: string,
  changes: Partial<RuleValues>,
  now: Date,
): Promise<NotificationRule | undefined> {
  const { name, enabled, source, channelIds, throttleMinutes } = changes;
  return database
    .updateTable('notification_rules')
    .set({
      ...(name === undefined ? {} : { name }),
      ...(enabled === undefined ? {} : { enabled }),
      ...(source === undefined ? {} : { source: JSON.stringify(source) }),
      ...(channelIds === undefined ? {} : { channel_ids: JSON.stringify(channelIds) }),
      ...(throttleMinutes === undefined ? {} : { throttle_minutes: throttleMinutes }),
      updated_at: now,
    })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes the project's rule `id` and its throttles in one transaction; `undefined` (and nothing
 * changed) when there is no such rule. Opens its own transaction, so it takes the database.
 */
export async function deleteRule(
  database: Kysely<Database>,
  projectId: string,
  id: string,
): Promise<{ id: string } | undefined> {
  return database.transaction().execute(async (transaction) => {
    const deleted = await transaction
      .deleteFrom('notification_rules')
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .returning('id')
      .executeTakeFirst();
    if (deleted === undefined) return undefined;
    await transaction
      .deleteFrom('rule_throttles')
      .where('project_id', '=', projectId)
      .where('rule_id', '=', id)
      .execute();
    return deleted;
  });
}

// Deliveries ------------------------------------------------------------------------------------

/** What `GET /deliveries` can filter on. */
export interface DeliveryFilters {
  channelId?: string | undefined;
  status?: DeliveryStatus | undefined;
  eventType?: string | undefined;
}

/**
 * A page of the project's deliveries, newest first (by id), after the delivery id `before` when
 * given; `next` is the id the following page starts after, when there is one.
 */
export async function findDeliveriesPage(
  database: Executor,
  projectId: string,
  options: { filters: DeliveryFilters; before?: string | undefined; limit: number },
): Promise<{ deliveries: Delivery[]; next?: string }> {
  const { filters, before, limit } = options;
  let query = database
    .selectFrom('deliveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (before !== undefined) query = query.where('id', '<', before);
  if (filters.channelId !== undefined) query = query.where('channel_id', '=', filters.channelId);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.eventType !== undefined) query = query.where('event_type', '=', filters.eventType);
  const { page, more } = keysetPage(await query.execute(), limit);
  return more === undefined ? { deliveries: page } : { deliveries: page, next: more.id };
}

/** The project's delivery `id`, or `undefined` (another project's too). */
export async function findDelivery(
  database: Executor,
  projectId: string,
  id: string,
): Promise<Delivery | undefined> {
  return database
    .selectFrom('deliveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Every attempt of the project's deliveries `deliveryIds` (in no order). */
export async function findDeliveryAttempts(
  database: Executor,
  projectId: string,
  deliveryIds: readonly string[],
): Promise<DeliveryAttempt[]> {
  if (deliveryIds.length === 0) return [];
  return database
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('delivery_id', 'in', deliveryIds)
    .execute();
}

/**
 * Queues a replay of the project's delivery `id` as the new delivery `newId` (same event, same
 * channel, due `now`) and reads it back in the same transaction; `undefined` (and nothing queued)
 * when there is no such delivery. Opens its own transaction, so it takes the database.
 */
export async function queueReplay(
  database: Kysely<Database>,
  projectId: string,
  id: string,
  newId: string,
  now: Date,
): Promise<Delivery | undefined> {
  return database.transaction().execute(async (transaction) => {
    const replayed = await replayDelivery(transaction, projectId, id, newId, now);
    return replayed === undefined ? undefined : findDelivery(transaction, projectId, replayed);
  });
}
