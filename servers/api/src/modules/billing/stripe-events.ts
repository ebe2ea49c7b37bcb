import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type Stripe from 'stripe';
import { recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import {
  applySubscription,
  isPaidStatus,
  organizationOfCustomer,
  providerEventSeen,
  recordProviderEvent,
  saveCustomer,
  setEventOutcome,
} from './billing-accounts.ts';
import type { PlanName } from './plans.ts';
import type { SubscriptionSnapshot } from './provider.ts';
import { idOf, toSubscriptionSnapshot } from './stripe-objects.ts';
import type { StripeProvider } from './stripe-provider.ts';

// What a Stripe webhook event changes (servers/api/README.md, Billing, Stripe webhooks): the
// organization's subscription row, from the subscription the event carries or, for checkout and
// invoice events, as Stripe has it now; each change emits `billing.event`. An event is handled
// once: its id is recorded in the transaction of its change.

/** The `billing.event` notification of a change, in the webhook `data` shape (PROTOCOL.md §6). */
interface BillingNotification {
  type: 'billing.event';
  data: {
    title: string;
    summary: string;
    severity: 'info' | 'low' | 'medium' | 'high' | 'critical';
    counts: Record<string, number>;
    links: Record<string, string>;
  };
}

/**
 * Called in the transaction of each change, to emit `billing.event` (the composition root sends
 * it through notifications, which come later in the module order).
 */
export type OnBillingEvent = (
  transaction: Transaction<Database>,
  organizationId: string,
  event: BillingNotification,
) => Promise<void>;

/** The Stripe event types handled; any other is acknowledged and ignored. */
const HANDLED_STRIPE_EVENTS = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
] as const;

/** What became of an event. */
export type StripeEventOutcome =
  | 'applied'
  | 'duplicate'
  | 'ignored'
  | 'stale'
  | 'other_subscription'
  | 'unknown_organization';

interface Dependencies {
  database: Kysely<Database>;
  provider: StripeProvider;
  appUrl: string;
  log: FastifyBaseLogger;
  onBillingEvent?: OnBillingEvent | undefined;
}

/** What an event is about, once read (and the subscription fetched when the event has none). */
interface Reading {
  organizationId: string | undefined;
  customerId: string | undefined;
  snapshot: SubscriptionSnapshot | undefined;
  invoice?: Stripe.Invoice | undefined;
  /** Checkout: the customer to link to the organization. */
  linkCustomer: boolean;
}

/** The subscription of an invoice (Stripe moved it under `parent` in API version 2025-03-31). */
function subscriptionOfInvoice(invoice: Stripe.Invoice): string | undefined {
  const legacy = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription;
  return idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(legacy);
}

async function organizationExists(database: Kysely<Database>, id: string | null | undefined) {
  if (id === null || id === undefined || id.length > 64) return undefined;
  const row = await database.selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst();
  return row?.id;
}

async function read(dependencies: Dependencies, event: Stripe.Event): Promise<Reading> {
  const { database, provider } = dependencies;
  const object = event.data.object as unknown;
  if (event.type === 'checkout.session.completed') {
    const session = object as Stripe.Checkout.Session;
    const subscriptionId = idOf(session.subscription);
    const organizationId = await organizationExists(
      database,
      session.client_reference_id ?? session.metadata?.organization_id,
    );
    if (session.mode !== 'subscription' || subscriptionId === undefined)
      return { organizationId, customerId: idOf(session.customer), snapshot: undefined, linkCustomer: false };
    return {
      organizationId,
      customerId: idOf(session.customer),
      snapshot: await provider.subscription(subscriptionId),
      linkCustomer: true,
    };
  }
  if (event.type.startsWith('customer.subscription.')) {
    const snapshot = toSubscriptionSnapshot(object as Stripe.Subscription);
    const organizationId =
      (await organizationOfCustomer(database, 'stripe', snapshot.customerId)) ??
      (await organizationExists(database, snapshot.organizationId));
    return { organizationId, customerId: snapshot.customerId, snapshot, linkCustomer: false };
  }
  const invoice = object as Stripe.Invoice;
  const customerId = idOf(invoice.customer);
  const organizationId =
    customerId === undefined ? undefined : await organizationOfCustomer(database, 'stripe', customerId);
  const subscriptionId = subscriptionOfInvoice(invoice);
  const snapshot =
    organizationId === undefined || subscriptionId === undefined
      ? undefined
      : await provider.subscription(subscriptionId);
  return { organizationId, customerId, snapshot, invoice, linkCustomer: false };
}

/** An amount in a currency's smallest unit, as people read it (`12.50 EUR`, `1200 JPY`). */
function formatAmount(amount: number, currency: string): string {
  let digits = 2;
  try {
    digits =
      new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions()
        .maximumFractionDigits ?? 2;
  } catch {
    digits = 2;
  }
  return `${(amount / 10 ** digits).toFixed(digits)} ${currency.toUpperCase()}`;
}

function day(date: Date | undefined): string {
  return date === undefined ? 'unknown' : date.toISOString().slice(0, 10);
}

/** The `billing.event` of an event's change. */
function notificationOf(
  event: Stripe.Event,
  reading: Reading,
  plan: PlanName | null,
  appUrl: string,
  organizationId: string,
): BillingNotification {
  const links: Record<string, string> = { billing: `${appUrl}/orgs/${organizationId}/billing` };
  const { snapshot, invoice } = reading;
  const planText =
    plan === null ? 'an unknown plan (its price is not in SVC_STRIPE_PRICES)' : `the ${plan} plan`;
  if (invoice !== undefined) {
    const hosted = invoice.hosted_invoice_url;
    if (typeof hosted === 'string' && /^https?:\/\//.test(hosted) && hosted.length <= 2048)
      links.invoice = hosted;
    const name = invoice.number ?? invoice.id ?? 'an invoice';
    const counts = {
      amountDue: Math.max(0, invoice.amount_due),
      amountPaid: Math.max(0, invoice.amount_paid),
    };
    if (event.type === 'invoice.paid')
      return {
        type: 'billing.event',
        data: {
          title: `Invoice ${name} paid`,
          summary: `Invoice ${name} for ${formatAmount(invoice.amount_paid, invoice.currency)} was paid${snapshot === undefined ? '' : `; the subscription is ${snapshot.status} on ${planText} until ${day(snapshot.currentPeriodEnd)}`}.`,
          severity: 'info',
          counts,
          links,
        },
      };
    return {
      type: 'billing.event',
      data: {
        title: `Payment of invoice ${name} failed`,
        summary: `The payment of invoice ${name} (${formatAmount(invoice.amount_due, invoice.currency)}) failed${snapshot === undefined ? '' : `; the subscription is ${snapshot.status}`}. Stripe retries it; an owner can update the payment method in the billing portal.`,
        severity: 'high',
        counts,
        links,
      },
    };
  }
  const status = snapshot?.status ?? 'unknown';
  const ended = event.type === 'customer.subscription.deleted' || !isPaidStatus(status);
  const period = snapshot?.cancelAtPeriodEnd
    ? `; it ends on ${day(snapshot.currentPeriodEnd)} (canceled at the period's end)`
    : snapshot?.currentPeriodEnd === undefined
      ? ''
      : `; the current period ends on ${day(snapshot.currentPeriodEnd)}`;
  return {
    type: 'billing.event',
    data: {
      title: ended ? `Subscription ${status}` : `Subscription ${status} on ${plan ?? 'an unknown plan'}`,
      summary: ended
        ? `The subscription ${snapshot?.id ?? ''} is ${status}: ${planText} no longer applies, the organization is back on its license's or the free plan.`
        : `The subscription ${snapshot?.id ?? ''} is ${status} on ${planText}${period}.`,
      severity: ended ? 'medium' : 'info',
      counts: {},
      links,
    },
  };
}

/**
 * Handles one verified Stripe event: a redelivery (same id) changes nothing, unknown types are
 * ignored, an event of no organization of ours is recorded and changes nothing; otherwise the
 * organization's subscription is updated (unless the event is older than what was applied) and
 * `billing.event` emitted, with an audit entry, in one transaction.
 *
 * @example
 * ```ts
 * const outcome = await handleStripeEvent({ database, provider, appUrl, log, onBillingEvent }, event);
 * ```
 */
export async function handleStripeEvent(
  dependencies: Dependencies,
  event: Stripe.Event,
): Promise<StripeEventOutcome> {
  const { database, provider, log } = dependencies;
  if (!(HANDLED_STRIPE_EVENTS as readonly string[]).includes(event.type)) return 'ignored';
  if (await providerEventSeen(database, 'stripe', event.id)) return 'duplicate';
  // Reading may ask Stripe for the subscription: before the transaction, never inside it.
  const reading = await read(dependencies, event);
  const eventAt = new Date(event.created * 1000);
  return database.transaction().execute(async (transaction) => {
    const { organizationId } = reading;
    // The id first: a redelivery racing this one waits for this transaction, then finds it.
    const first = await recordProviderEvent(transaction, {
      provider: 'stripe',
      id: event.id,
      type: event.type,
      organizationId: organizationId ?? null,
      outcome: 'unknown_organization',
    });
    if (!first) return 'duplicate';
    if (organizationId === undefined) {
      log.warn(
        { stripeEvent: event.id, type: event.type },
        'a Stripe event of no organization of this server: ignored',
      );
      return 'unknown_organization';
    }
    if (reading.linkCustomer && reading.customerId !== undefined)
      await saveCustomer(transaction, organizationId, 'stripe', reading.customerId);
    let outcome: StripeEventOutcome =
      reading.invoice === undefined && reading.snapshot === undefined ? 'ignored' : 'applied';
    const plan = reading.snapshot === undefined ? null : provider.planOfPrice(reading.snapshot.priceId);
    if (reading.snapshot !== undefined) {
      const change = await applySubscription(
        transaction,
        organizationId,
        'stripe',
        { ...reading.snapshot, plan },
        eventAt,
      );
      if (!change.applied) outcome = change.reason;
    }
    await setEventOutcome(transaction, 'stripe', event.id, outcome);
    if (outcome !== 'applied') return outcome;
    await recordAudit(
      transaction,
      organizationId,
      { type: 'system', label: 'stripe' },
      { ip: null, userAgent: null },
      {
        action: 'billing.subscription_changed',
        target: { type: 'organization', id: organizationId },
        details: {
          stripeEvent: event.id,
          type: event.type,
          subscription: reading.snapshot?.id ?? null,
          plan,
          status: reading.snapshot?.status ?? null,
        },
      },
    );
    await dependencies.onBillingEvent?.(
      transaction,
      organizationId,
      notificationOf(event, reading, plan, dependencies.appUrl, organizationId),
    );
    return 'applied';
  });
}
