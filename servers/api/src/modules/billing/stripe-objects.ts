import type Stripe from 'stripe';
import type { SubscriptionSnapshot } from './provider.ts';

// Stripe's objects as the billing module reads them. Types only from `stripe`: the package itself
// is loaded (by stripe-provider.ts) only when Stripe is configured.

/** The id of an expandable Stripe field (a string, or the object when expanded). */
export function idOf(value: string | { id: string } | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'string' ? value : value.id;
}

/** A Stripe timestamp (Unix seconds) as a date. */
export function fromUnixSeconds(seconds: number | null | undefined): Date | undefined {
  return typeof seconds === 'number' ? new Date(seconds * 1000) : undefined;
}

/**
 * A Stripe subscription as the billing module stores it. The period is the first item's (Stripe
 * moved `current_period_*` from the subscription to its items in API version 2025-03-31).
 *
 * @example
 * ```ts
 * const snapshot = toSubscriptionSnapshot(event.data.object as Stripe.Subscription);
 * ```
 */
export function toSubscriptionSnapshot(subscription: Stripe.Subscription): SubscriptionSnapshot {
  const item = subscription.items?.data?.[0];
  const legacy = subscription as unknown as { current_period_start?: number; current_period_end?: number };
  return {
    id: subscription.id,
    customerId: idOf(subscription.customer) ?? '',
    priceId: item?.price?.id,
    status: subscription.status,
    currentPeriodStart: fromUnixSeconds(item?.current_period_start ?? legacy.current_period_start),
    currentPeriodEnd: fromUnixSeconds(item?.current_period_end ?? legacy.current_period_end),
    cancelAtPeriodEnd: subscription.cancel_at_period_end === true,
    organizationId: subscription.metadata?.organization_id,
  };
}
