import { WEBHOOK_VERSION, type WebhookEvent, type WebhookEventType } from '@svc/protocol';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { createId } from '../../platform/ids.ts';
import { type RuleSubject, ruleMatches, ruleSourceSchema } from './rules.ts';

/** The session the occurrences belong to, as notifications describe it (an issue's occurrences, a custom event). */
export interface OccurrenceSession {
  id: string;
  startedAt: number;
  release: string | null;
  environment: string | null;
  url: string | null;
}

/** The page of the app a session started on: the path of its URL, never its query. */
export function routeOf(url: string | null): string | undefined {
  if (url === null || !URL.canParse(url)) return undefined;
  return new URL(url).pathname.slice(0, 2048);
}

type Executor = Kysely<Database> | Transaction<Database>;

/** A notification's `data` (PROTOCOL.md §6): cluster events add `cluster` and `links.replay`. */
type NotificationData = WebhookEvent['data'];

/** A notification a cause wants to send, before rules decide where it goes. */
export interface NotificationDraft {
  type: WebhookEventType;
  /** What rules match on. */
  subject: RuleSubject;
  /** What a rule's throttle counts per: `<event type>:<cluster id>`, or `custom:<name>`. */
  throttleKey: string;
  clusterId?: string;
  data: NotificationData;
}

/** What {@link notify} wrote. */
export interface NotifyResult {
  /** Ids of the events written (one per draft that some rule matched and no throttle held). */
  events: string[];
  deliveries: number;
}

/** The webhook envelope of an event (PROTOCOL.md §6). */
function envelopeOf(
  project: Pick<Project, 'id' | 'organization_id'>,
  id: string,
  type: WebhookEventType,
  createdAt: Date,
  data: NotificationData,
): WebhookEvent {
  return {
    id,
    type,
    version: WEBHOOK_VERSION,
    createdAt: createdAt.toISOString(),
    orgId: project.organization_id,
    projectId: project.id,
    data,
  } as WebhookEvent;
}

/**
 * Writes an event (`evt_`, its envelope exactly as every delivery will send it) and one outbox
 * row per channel, due `now`, in the caller's transaction.
 */
async function writeEvent(
  transaction: Executor,
  project: Pick<Project, 'id' | 'organization_id'>,
  event: {
    type: WebhookEventType;
    data: NotificationData;
    clusterId?: string | undefined;
    ruleIds: readonly string[];
    inbox: boolean;
    channelIds: readonly string[];
    now: Date;
  },
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const eventId = createId('evt');
  await transaction
    .insertInto('notification_events')
    .values({
      project_id: project.id,
      id: eventId,
      type: event.type,
      severity: event.data.severity,
      title: event.data.title,
      cluster_id: event.clusterId ?? null,
      rule_ids: JSON.stringify(event.ruleIds),
      payload: JSON.stringify(envelopeOf(project, eventId, event.type, event.now, event.data)),
      inbox: event.inbox,
      created_at: event.now,
    })
    .execute();
  const deliveryIds = event.channelIds.map(() => createId('dlv'));
  if (deliveryIds.length > 0) {
    await transaction
      .insertInto('deliveries')
      .values(
        event.channelIds.map((channelId, index) => ({
          project_id: project.id,
          id: deliveryIds[index] as string,
          event_id: eventId,
          event_type: event.type,
          channel_id: channelId,
          due_at: event.now,
        })),
      )
      .execute();
  }
  return { eventId, deliveryIds };
}

/**
 * Routes notifications through the project's enabled rules, inside the caller's transaction
 * (the transaction of their cause, so a cause is never recorded without its notifications):
 *
 * - a draft that no rule matches, or whose every matching rule is throttled, writes nothing;
 * - otherwise one event (`evt_`, its envelope as every channel will receive it) goes to the
 *   inbox, and one outbox row (`deliveries`, due now) per enabled channel of the matching rules;
 * - a rule with `throttle_minutes` notifies about one subject (a cluster, a custom event name)
 *   at most once in that window.
 *
 * @example
 * ```ts
 * await database.transaction().execute((transaction) => notify(transaction, project, drafts, new Date()));
 * ```
 */
export async function notify(
  transaction: Executor,
  project: Pick<Project, 'id' | 'organization_id'>,
  drafts: readonly NotificationDraft[],
  now: Date,
): Promise<NotifyResult> {
  const result: NotifyResult = { events: [], deliveries: 0 };
  if (drafts.length === 0) return result;
  const rules = await transaction
    .selectFrom('notification_rules')
    .select(['id', 'source', 'channel_ids', 'throttle_minutes'])
    .where('project_id', '=', project.id)
    .where('enabled', '=', true)
    .orderBy('id')
    .execute();
  if (rules.length === 0) return result;
  const parsedRules = rules.flatMap((rule) => {
    const source = ruleSourceSchema.safeParse(rule.source);
    return source.success ? [{ ...rule, source: source.data }] : [];
  });
  const channels = new Set(
    (
      await transaction
        .selectFrom('notification_channels')
        .select('id')
        .where('project_id', '=', project.id)
        .where('enabled', '=', true)
        .execute()
    ).map((channel) => channel.id),
  );

  for (const draft of drafts) {
    const matching = parsedRules.filter((rule) => ruleMatches(rule.source, draft.subject));
    if (matching.length === 0) continue;
    const throttled = matching.filter((rule) => rule.throttle_minutes > 0);
    const held = new Set<string>();
    if (throttled.length > 0) {
      const rows = await transaction
        .selectFrom('rule_throttles')
        .select(['rule_id', 'notified_at'])
        .where('project_id', '=', project.id)
        .where('subject', '=', draft.throttleKey)
        .where(
          'rule_id',
          'in',
          throttled.map((rule) => rule.id),
        )
        .execute();
      for (const row of rows) {
        const rule = throttled.find((candidate) => candidate.id === row.rule_id);
        if (
          rule !== undefined &&
          now.getTime() - new Date(row.notified_at).getTime() < rule.throttle_minutes * 60_000
        )
          held.add(row.rule_id);
      }
    }
    const firing = matching.filter((rule) => !held.has(rule.id));
    if (firing.length === 0) continue;

    const targets = [
      ...new Set(firing.flatMap((rule) => rule.channel_ids).filter((channel) => channels.has(channel))),
    ].sort();
    const written = await writeEvent(transaction, project, {
      type: draft.type,
      data: draft.data,
      clusterId: draft.clusterId,
      ruleIds: firing.map((rule) => rule.id),
      inbox: true,
      channelIds: targets,
      now,
    });
    result.events.push(written.eventId);
    result.deliveries += written.deliveryIds.length;
    await transaction
      .insertInto('rule_throttles')
      .values(
        firing.map((rule) => ({
          project_id: project.id,
          rule_id: rule.id,
          subject: draft.throttleKey,
          notified_at: now,
        })),
      )
      .onConflict((conflict) =>
        conflict
          .columns(['project_id', 'rule_id', 'subject'])
          .doUpdateSet({ notified_at: sql<Date>`excluded.notified_at` }),
      )
      .execute();
  }
  return result;
}

/**
 * Writes a `notification.test` event for one channel and its delivery, due now. The event is not
 * in the inbox.
 *
 * @returns the event and delivery ids
 */
export async function queueTestNotification(
  database: Kysely<Database>,
  project: Pick<Project, 'id' | 'organization_id'>,
  channel: { id: string; name: string },
  links: Record<string, string>,
  now: Date,
): Promise<{ eventId: string; deliveryId: string }> {
  const data: NotificationData = {
    title: 'Test notification',
    summary: `A test of the channel "${channel.name}". If you can read this, it works.`,
    severity: 'info',
    counts: {},
    links,
  };
  const written = await database.transaction().execute((transaction) =>
    writeEvent(transaction, project, {
      type: 'notification.test',
      data,
      ruleIds: [],
      inbox: false,
      channelIds: [channel.id],
      now,
    }),
  );
  return { eventId: written.eventId, deliveryId: written.deliveryIds[0] as string };
}
