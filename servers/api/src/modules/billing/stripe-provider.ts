import Stripe from 'stripe';
import { ConfigurationError, type StripeConfiguration } from '../../platform/config.ts';
import { isPlanName, type PlanName } from './plans.ts';
import type { BillingProvider, InvoiceView } from './provider.ts';
import { fromUnixSeconds, toSubscriptionSnapshot } from './stripe-objects.ts';

// Stripe as the billing provider, through the `stripe` package (servers/api/README.md, Billing):
// a customer per organization, Checkout Sessions (mode subscription) for a plan's price, the
// Billing Portal, invoices, subscriptions, and Billing Meter Events for metered usage. The
// secret key goes to Stripe only: it is never logged nor answered.

/** A Stripe provider, with what the webhook needs to read a subscription's plan. */
export interface StripeProvider extends BillingProvider {
  readonly name: 'stripe';
  /** The plan of a price, or null for a price that is not in `SVC_STRIPE_PRICES`. */
  planOfPrice(priceId: string | undefined): PlanName | null;
  /** The webhook endpoint's signing secret (`whsec_…`). */
  readonly webhookSecret: string;
}

function toInvoiceView(invoice: Stripe.Invoice): InvoiceView {
  return {
    id: invoice.id ?? '',
    number: invoice.number ?? undefined,
    status: invoice.status ?? undefined,
    amountDue: invoice.amount_due,
    amountPaid: invoice.amount_paid,
    currency: invoice.currency,
    createdAt: fromUnixSeconds(invoice.created)?.toISOString() ?? new Date(0).toISOString(),
    hostedInvoiceUrl: invoice.hosted_invoice_url ?? undefined,
    pdfUrl: invoice.invoice_pdf ?? undefined,
  };
}

/** The prices by plan of the settings, checked: paid plans only, each named once. */
function checkPrices(prices: Record<string, string>): Partial<Record<PlanName, string>> {
  const problems: string[] = [];
  const checked: Partial<Record<PlanName, string>> = {};
  for (const [plan, price] of Object.entries(prices)) {
    if (!isPlanName(plan) || plan === 'free')
      problems.push(`SVC_STRIPE_PRICES: ${plan} is not a paid plan (team, business, enterprise)`);
    else checked[plan] = price;
  }
  if (problems.length > 0) throw new ConfigurationError({ problems });
  return checked;
}

/**
 * The Stripe provider of the settings (`SVC_STRIPE_*`). `apiBase` points the `stripe` package
 * elsewhere than `https://api.stripe.com` (its `host`, `port` and `protocol` options): a proxy,
 * or a test's stand-in.
 *
 * @throws {ConfigurationError} when `SVC_STRIPE_PRICES` names a plan that cannot be sold
 * @example
 * ```ts
 * const provider = createStripeProvider(configuration.stripe);
 * const { url } = await provider.checkout({ organizationId, customerId }, { plan: 'team', successUrl, cancelUrl });
 * ```
 */
export function createStripeProvider(settings: StripeConfiguration): StripeProvider {
  const prices = checkPrices(settings.prices);
  const planByPrice = new Map(Object.entries(prices).map(([plan, price]) => [price, plan as PlanName]));
  const base = new URL(settings.apiBase);
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  const stripe = new Stripe(settings.secretKey, {
    host: base.hostname,
    port: base.port === '' ? (protocol === 'http' ? 80 : 443) : Number(base.port),
    protocol,
    maxNetworkRetries: 2,
    timeout: 20_000,
    appInfo: { name: 'svc', url: 'https://github.com/svc' },
  });
  return {
    name: 'stripe',
    prices,
    webhookSecret: settings.webhookSecret,
    planOfPrice: (priceId) => (priceId === undefined ? null : (planByPrice.get(priceId) ?? null)),
    async createCustomer(organization) {
      const customer = await stripe.customers.create(
        {
          name: organization.name,
          ...(organization.email === undefined ? {} : { email: organization.email }),
          metadata: { organization_id: organization.id },
        },
        // One customer per organization even if two checkouts race (Stripe keeps keys 24 h).
        { idempotencyKey: `svc-customer-${organization.id}` },
      );
      return customer.id;
    },
    async checkout(customer, request) {
      const price = prices[request.plan];
      if (price === undefined) throw new Error(`No Stripe price for the ${request.plan} plan`);
      const session = await stripe.checkout.sessions.create({
        mode: 'subscription',
        customer: customer.customerId,
        client_reference_id: customer.organizationId,
        line_items: [{ price, quantity: 1 }],
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        metadata: { organization_id: customer.organizationId, plan: request.plan },
        subscription_data: { metadata: { organization_id: customer.organizationId, plan: request.plan } },
      });
      if (session.url === null || session.url === undefined)
        throw new Error('Stripe answered a checkout session without a URL');
      return { id: session.id, url: session.url };
    },
    async portal(customer, request) {
      const session = await stripe.billingPortal.sessions.create({
        customer: customer.customerId,
        return_url: request.returnUrl,
      });
      return { url: session.url };
    },
    async invoices(customer, page) {
      const list = await stripe.invoices.list({
        customer: customer.customerId,
        limit: page.limit,
        ...(page.startingAfter === undefined ? {} : { starting_after: page.startingAfter }),
      });
      return { items: list.data.map(toInvoiceView), hasMore: list.has_more };
    },
    async subscription(id) {
      return toSubscriptionSnapshot(await stripe.subscriptions.retrieve(id));
    },
    async reportUsage(customer, usage) {
      if (!Number.isSafeInteger(usage.quantity) || usage.quantity < 0)
        throw new RangeError(`usage quantity must be a non-negative integer, not ${usage.quantity}`);
      await stripe.billing.meterEvents.create({
        event_name: settings.meterEvents[usage.metric] ?? usage.metric,
        payload: { stripe_customer_id: customer.customerId, value: String(usage.quantity) },
        identifier: usage.identifier,
        timestamp: Math.floor(usage.timestamp.getTime() / 1000),
      });
      return { reported: true };
    },
  };
}
