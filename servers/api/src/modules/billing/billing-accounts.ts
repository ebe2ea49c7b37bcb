import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { BillingAccount, SubscriptionStatus } from '../../platform/database/tables/billing.table.ts';
import type { PlanName } from './plans.ts';
import type { SubscriptionSnapshot } from './provider.ts';

// An organization's account with the billing provider: its customer and its subscription as the
// provider last described it. Every statement is scoped to one organization (or finds the one
// organization of a provider's customer).

type Executor = Kysely<Database> | Transaction<Database>;

/** The statuses in which a subscription's plan is in force (`past_due`: Stripe is still retrying). */
const PAID_STATUSES: ReadonlySet<string> = new Set(['active', 'trialing', 'past_due']);

/**
 * Whether a subscription in this status gives its plan.
 *
 * @example
 * ```ts
 * isPaidStatus('past_due'); // true: Stripe is still retrying the payment
 * isPaidStatus('canceled'); // false
 * ```
 */
export function isPaidStatus(status: string | null): boolean {
  return status !== null && PAID_STATUSES.has(status);
}

/** The organization's billing account, or undefined before its first checkout. */
export async function findBillingAccount(
  database: Executor,
  organizationId: string,
): Promise<BillingAccount | undefined> {
  return database
    .selectFrom('billing_accounts')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
}

/** The organization of a provider's customer, or undefined when the customer is not ours. */
export async function organizationOfCustomer(
  database: Executor,
  provider: string,
  customerId: string,
): Promise<string | undefined> {
  const row = await database
    .selectFrom('billing_accounts')
    .select('organization_id')
    .where('provider', '=', provider)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row?.organization_id;
}

/**
 * Links the organization to the provider's customer, unless it already has one: the customer
 * kept is returned (so two checkouts at once end with one customer).
 */
export async function saveCustomer(
  database: Executor,
  organizationId: string,
  provider: string,
  customerId: string,
): Promise<string> {
  const row = await database
    .insertInto('billing_accounts')
    .values({ organization_id: organizationId, provider, customer_id: customerId })
    .onConflict((conflict) =>
      conflict.column('organization_id').doUpdateSet({
        provider,
        customer_id: sql<string>`coalesce(billing_accounts.customer_id, excluded.customer_id)`,
        updated_at: sql`now()`,
      }),
    )
    .returning('customer_id')
    .executeTakeFirstOrThrow();
  return row.customer_id ?? customerId;
}

/** What {@link applySubscription} did. */
export type SubscriptionChange =
  | { applied: true; before: BillingAccount | undefined; after: BillingAccount }
  | { applied: false; reason: 'stale' | 'other_subscription' };

/**
 * Stores a subscription as the provider described it at `eventAt`, in the caller's transaction.
 * Not applied (and said why) when the organization's account heard of something newer
 * (`stale`), or when the snapshot is another subscription that ended while the current one
 * lives on (`other_subscription`).
 *
 * @example
 * ```ts
 * const change = await applySubscription(transaction, organizationId, 'stripe', { ...snapshot, plan: 'team' }, new Date(event.created * 1000));
 * if (change.applied) await announce(change.before, change.after);
 * ```
 */
export async function applySubscription(
  transaction: Transaction<Database>,
  organizationId: string,
  provider: string,
  snapshot: SubscriptionSnapshot & { plan: PlanName | null },
  eventAt: Date,
): Promise<SubscriptionChange> {
  const before = await transaction
    .selectFrom('billing_accounts')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .forUpdate()
    .executeTakeFirst();
  if (before?.last_event_at != null && eventAt.getTime() < new Date(before.last_event_at).getTime())
    return { applied: false, reason: 'stale' };
  if (
    before?.subscription_id != null &&
    before.subscription_id !== snapshot.id &&
    isPaidStatus(before.status) &&
    !isPaidStatus(snapshot.status)
  )
    return { applied: false, reason: 'other_subscription' };
  const values = {
    provider,
    customer_id: before?.customer_id ?? snapshot.customerId,
    subscription_id: snapshot.id,
    plan: snapshot.plan,
    price_id: snapshot.priceId ?? null,
    status: snapshot.status as SubscriptionStatus,
    current_period_start: snapshot.currentPeriodStart ?? null,
    current_period_end: snapshot.currentPeriodEnd ?? null,
    cancel_at_period_end: snapshot.cancelAtPeriodEnd,
    last_event_at: eventAt,
  };
  const after = await transaction
    .insertInto('billing_accounts')
    .values({ organization_id: organizationId, ...values })
    .onConflict((conflict) =>
      conflict.column('organization_id').doUpdateSet({ ...values, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return { applied: true, before, after };
}

/** Whether the provider's event was handled already. */
export async function providerEventSeen(
  database: Executor,
  provider: string,
  eventId: string,
): Promise<boolean> {
  const row = await database
    .selectFrom('billing_events')
    .select('id')
    .where('provider', '=', provider)
    .where('id', '=', eventId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records a provider event as handled, first in the transaction of what it changes. `false` when
 * it was recorded already (a redelivery that raced this one committed first): change nothing.
 */
export async function recordProviderEvent(
  transaction: Transaction<Database>,
  event: { provider: string; id: string; type: string; organizationId: string | null; outcome: string },
): Promise<boolean> {
  const inserted = await transaction
    .insertInto('billing_events')
    .values({
      provider: event.provider,
      id: event.id,
      type: event.type,
      organization_id: event.organizationId,
      outcome: event.outcome,
    })
    .onConflict((conflict) => conflict.columns(['provider', 'id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** What handling a recorded provider event came to (see {@link recordProviderEvent}). */
export async function setEventOutcome(
  transaction: Transaction<Database>,
  provider: string,
  eventId: string,
  outcome: string,
): Promise<void> {
  await transaction
    .updateTable('billing_events')
    .set({ outcome })
    .where('provider', '=', provider)
    .where('id', '=', eventId)
    .execute();
}
