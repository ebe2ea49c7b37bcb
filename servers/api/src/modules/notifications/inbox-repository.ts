import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { NotificationEvent } from '../../platform/database/tables/notifications.table.ts';
import { keysetPage } from '../../platform/http/keyset-page.ts';

// The storage of `/v1/inbox`: the project's notification events that went to the inbox. Every
// query is scoped by a project id first; what matches nothing is `undefined` (or an empty list).

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * A page of the project's inbox, newest first (by event id), after the event id `before` when
 * given; `acked` keeps only those acknowledged (true) or not yet (false). `next` is the id the
 * following page starts after, when there is one.
 */
export async function findInboxPage(
  database: Executor,
  projectId: string,
  options: { acked?: boolean | undefined; before?: string | undefined; limit: number },
): Promise<{ events: NotificationEvent[]; next?: string }> {
  const { acked, before, limit } = options;
  let query = database
    .selectFrom('notification_events')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('inbox', '=', true)
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (before !== undefined) query = query.where('id', '<', before);
  if (acked !== undefined) query = query.where('acked_at', acked ? 'is not' : 'is', null);
  const { page, more } = keysetPage(await query.execute(), limit);
  return more === undefined ? { events: page } : { events: page, next: more.id };
}

/**
 * Acknowledges the project's inbox event `id` (an acknowledged one keeps its first `acked_at`);
 * `undefined` when the inbox has no such event.
 */
export async function acknowledgeInboxEvent(
  database: Executor,
  projectId: string,
  id: string,
): Promise<NotificationEvent | undefined> {
  return database
    .updateTable('notification_events')
    .set({ acked_at: sql<Date>`coalesce(acked_at, now())` })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('inbox', '=', true)
    .returningAll()
    .executeTakeFirst();
}
