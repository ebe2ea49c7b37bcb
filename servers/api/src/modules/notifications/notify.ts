import { WEBHOOK_VERSION, type WebhookEvent, type WebhookEventType, webhookDataSchema } from '@svc/protocol';
import { type Kysely, sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import { createId } from '../../platform/ids.ts';
import {
  ACCOUNT_EVENT_TYPES,
  type AccountEventType,
  type RuleSource,
  type RuleSubject,
  ruleMatches,
  ruleSourceSchema,
  SECURITY_EVENT_TYPES,
  type SecurityEventType,
} from './rules.ts';

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

/** An enabled rule, its source parsed. */
interface EnabledRule {
  id: string;
  source: RuleSource;
  channel_ids: string[];
  throttle_minutes: number;
}

/** The project's enabled rules, by id; a stored source that no longer parses is skipped. */
async function enabledRules(transaction: Executor, projectId: string): Promise<EnabledRule[]> {
  const rules = await transaction
    .selectFrom('notification_rules')
    .select(['id', 'source', 'channel_ids', 'throttle_minutes'])
    .where('project_id', '=', projectId)
    .where('enabled', '=', true)
    .orderBy('id')
    .execute();
  return rules.flatMap((rule) => {
    const source = ruleSourceSchema.safeParse(rule.source);
    return source.success ? [{ ...rule, source: source.data }] : [];
  });
}

/** The ids of the project's enabled channels. */
async function enabledChannels(transaction: Executor, projectId: string): Promise<Set<string>> {
  const rows = await transaction
    .selectFrom('notification_channels')
    .select('id')
    .where('project_id', '=', projectId)
    .where('enabled', '=', true)
    .execute();
  return new Set(rows.map((channel) => channel.id));
}

/** The enabled channels of some rules, each once, sorted. */
function channelsOf(rules: readonly EnabledRule[], enabled: ReadonlySet<string>): string[] {
  return [
    ...new Set(rules.flatMap((rule) => rule.channel_ids).filter((channel) => enabled.has(channel))),
  ].sort();
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
  const parsedRules = await enabledRules(transaction, project.id);
  if (parsedRules.length === 0) return result;
  const channels = await enabledChannels(transaction, project.id);

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

    const targets = channelsOf(firing, channels);
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

const securityEventSchema = z.object({
  type: z.enum(SECURITY_EVENT_TYPES),
  data: webhookDataSchema,
});

/**
 * A security event as its cause describes it: the type and the webhook `data` (`title`,
 * `summary`, `severity`, `counts`, `links`, and `route?`, `release?`), PROTOCOL.md §6.
 */
export interface SecurityEvent {
  type: SecurityEventType;
  data: z.input<typeof webhookDataSchema>;
}

/** What {@link notifySecurityEvent} wrote. */
export interface SecurityNotifyResult {
  /** The event (`evt_`), in the inbox. */
  eventId: string;
  /** Outbox rows queued: one per enabled channel of the matching rules. */
  deliveries: number;
}

/**
 * Records a security event (an API token created, SSO changed, break-glass access) in the
 * caller's transaction, the transaction of its cause:
 *
 * - the event (`evt_`) is always written to the project's inbox, whether or not a rule matches:
 *   security events are never dropped;
 * - one outbox row (`deliveries`, due now) goes to each enabled channel of the enabled `security`
 *   rules that match its type. Rules' throttles do not apply: every security event is sent.
 *
 * `event` is checked against the protocol's webhook `data` first; data that is not valid throws
 * (a `ZodError`), so the cause's transaction rolls back rather than commit without its event.
 *
 * @example
 * ```ts
 * await database.transaction().execute(async (transaction) => {
 *   // … create the token …
 *   await notifySecurityEvent(transaction, project, {
 *     type: 'security.token_created',
 *     data: { title: 'API token created', summary: 'Token "ci" was created', severity: 'medium', counts: {}, links: {} },
 *   }, new Date());
 * });
 * ```
 */
export async function notifySecurityEvent(
  transaction: Executor,
  project: Pick<Project, 'id' | 'organization_id'>,
  event: SecurityEvent,
  now: Date,
): Promise<SecurityNotifyResult> {
  const { type, data } = securityEventSchema.parse(event);
  return writeAlwaysEvent(transaction, project, type, data, now);
}

/** An event that always reaches the inbox and every matching rule's channels (no throttle). */
async function writeAlwaysEvent(
  transaction: Executor,
  project: Pick<Project, 'id' | 'organization_id'>,
  type: SecurityEventType | AccountEventType,
  data: NotificationData,
  now: Date,
): Promise<SecurityNotifyResult> {
  const subject: RuleSubject = { type };
  const matching = (await enabledRules(transaction, project.id)).filter((rule) =>
    ruleMatches(rule.source, subject),
  );
  const channelIds =
    matching.length === 0 ? [] : channelsOf(matching, await enabledChannels(transaction, project.id));
  const written = await writeEvent(transaction, project, {
    type,
    data,
    ruleIds: matching.map((rule) => rule.id),
    inbox: true,
    channelIds,
    now,
  });
  return { eventId: written.eventId, deliveries: written.deliveryIds.length };
}

const accountEventSchema = z.object({
  type: z.enum(ACCOUNT_EVENT_TYPES),
  data: webhookDataSchema,
});

/** An account event (`usage.threshold`, `billing.event`): the type and the webhook `data`. */
export interface AccountEvent {
  type: AccountEventType;
  data: z.input<typeof webhookDataSchema>;
}

/**
 * Records an organization's account event (a usage threshold crossed, a subscription changed) in
 * the caller's transaction, for each of the organization's projects (notifications, rules and
 * channels are a project's): in its inbox always, and to the enabled channels of its `account`
 * rules that match the type, with no throttle, as {@link notifySecurityEvent} does. An
 * organization with no project records nothing.
 *
 * @returns one result per project, in project id order
 * @example
 * ```ts
 * await notifyAccountEvent(transaction, 'org_1', {
 *   type: 'usage.threshold',
 *   data: { title: 'Sessions at 80 % of the monthly cap', summary: '…', severity: 'medium', counts: { used: 8000, cap: 10000 }, links: {} },
 * }, new Date());
 * ```
 */
export async function notifyAccountEvent(
  transaction: Executor,
  organizationId: string,
  event: AccountEvent,
  now: Date,
): Promise<SecurityNotifyResult[]> {
  const { type, data } = accountEventSchema.parse(event);
  const projects = await transaction
    .selectFrom('projects')
    .select(['id', 'organization_id'])
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  const results: SecurityNotifyResult[] = [];
  for (const project of projects) results.push(await writeAlwaysEvent(transaction, project, type, data, now));
  return results;
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
