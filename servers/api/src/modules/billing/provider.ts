import { invalid } from '../../platform/http/errors.ts';
import type { PlanName } from './plans.ts';

// The billing provider: who takes the money. `none` on a self-hosted deployment (plans come from
// the license), Stripe when the operator configures it (servers/api/README.md, Billing).

/** A metered quantity, reported to the provider (Stripe: a Billing Meter Event). */
export interface UsageRecord {
  /** What was used: `sessions`, `calls`, `stored_bytes`, `ai_tokens`, ... (the meter's event name by `SVC_STRIPE_METER_EVENTS`, else this). */
  metric: string;
  /** How much, a non-negative integer. */
  quantity: number;
  /** When it was used (the provider files it under the period of this time). */
  timestamp: Date;
  /** Unique per report: a report sent again with the same identifier is counted once. */
  identifier: string;
}

/** What became of a usage report. */
export type UsageReport = { reported: true } | { reported: false; reason: string };

/** An invoice as the billing routes show it. */
export interface InvoiceView {
  id: string;
  number?: string | undefined;
  /** `draft`, `open`, `paid`, `uncollectible`, `void`. */
  status?: string | undefined;
  /** In the currency's smallest unit (cents). */
  amountDue: number;
  amountPaid: number;
  /** ISO 4217, lowercase (`eur`). */
  currency: string;
  createdAt: string;
  hostedInvoiceUrl?: string | undefined;
  pdfUrl?: string | undefined;
}

/** A subscription as the provider describes it. */
export interface SubscriptionSnapshot {
  id: string;
  customerId: string;
  /** The first item's price. */
  priceId?: string | undefined;
  status: string;
  currentPeriodStart?: Date | undefined;
  currentPeriodEnd?: Date | undefined;
  cancelAtPeriodEnd: boolean;
  /** The `organization_id` the checkout put in its metadata, when present. */
  organizationId?: string | undefined;
}

/** The organization as the provider knows it. */
interface BillingCustomer {
  organizationId: string;
  /** The provider's customer id. */
  customerId: string;
}

/** What a payment provider does for billing; `none` does nothing and says so. */
export interface BillingProvider {
  readonly name: 'none' | 'stripe';
  /** The plans that can be bought, with the provider's price for each. */
  readonly prices: Partial<Record<PlanName, string>>;
  /** The provider's customer for an organization, made once (idempotent per organization). */
  createCustomer(organization: { id: string; name: string; email?: string | undefined }): Promise<string>;
  /** A hosted checkout page for a subscription to `plan`: its URL. */
  checkout(
    customer: BillingCustomer,
    request: { plan: PlanName; successUrl: string; cancelUrl: string },
  ): Promise<{ id: string; url: string }>;
  /** The provider's self-service page (payment methods, invoices, cancel): its URL. */
  portal(customer: BillingCustomer, request: { returnUrl: string }): Promise<{ url: string }>;
  /** One page of the customer's invoices, newest first, after `startingAfter` (an invoice id). */
  invoices(
    customer: BillingCustomer,
    page: { limit: number; startingAfter?: string | undefined },
  ): Promise<{ items: InvoiceView[]; hasMore: boolean }>;
  /** A subscription as it is now. */
  subscription(id: string): Promise<SubscriptionSnapshot>;
  /** Reports metered usage of the customer. */
  reportUsage(customer: BillingCustomer, usage: UsageRecord): Promise<UsageReport>;
}

/**
 * The 409 of checkout and portal when no provider is configured.
 *
 * @example
 * ```ts
 * if (provider.name === 'none') throw billingNotConfigured();
 * ```
 */
export function billingNotConfigured() {
  return invalid(
    'Billing is not configured on this deployment: its plan comes from its license (GET /v1/license; the operator installs one with svc license install <file>)',
    409,
  );
}

/**
 * The provider of a deployment without one (self-hosted): nothing to buy, no invoices, usage is
 * not reported anywhere; checkout and portal answer 409 saying billing is not configured.
 *
 * @example
 * ```ts
 * const provider = createNoBillingProvider();
 * await provider.reportUsage(customer, usage); // { reported: false, reason: 'billing is not configured …' }
 * ```
 */
export function createNoBillingProvider(): BillingProvider {
  const refuse = async (): Promise<never> => {
    throw billingNotConfigured();
  };
  return {
    name: 'none',
    prices: {},
    createCustomer: refuse,
    checkout: refuse,
    portal: refuse,
    subscription: refuse,
    invoices: async () => ({ items: [], hasMore: false }),
    reportUsage: async () => ({ reported: false, reason: 'billing is not configured on this deployment' }),
  };
}
