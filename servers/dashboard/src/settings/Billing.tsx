import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, type Page } from '../api.ts';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { StatusText } from './parts.tsx';
import { administers, paysForTheOrganization } from './permissions.ts';
import { SettingsLayout } from './SettingsLayout.tsx';
import { formatByteSize } from './Usage.tsx';

// The organization's plan and what it allows, where it comes from, its subscription and invoices
// (servers/api/README.md, Billing). Admins and owners read it; owners buy a plan and open the
// provider's portal, which commit the organization's money. Without a provider (a self-hosted
// deployment) the plan comes from the license and nothing can be bought here.

type PlanName = 'free' | 'team' | 'business' | 'enterprise';

/** What a plan allows; `null` is no limit. */
interface PlanLimits {
  sessionsPerMonth: number | null;
  callsPerMonth: number | null;
  storedBytes: number | null;
  aiTokensPerMonth: number | null;
  retentionDays: { sessions: number; calls: number; traces: number };
  seats: number | null;
  projects: number | null;
}

/** `GET /v1/orgs/{orgId}/billing`. */
interface BillingView {
  organizationId: string;
  provider: 'none' | 'stripe';
  plan: PlanName;
  source: 'subscription' | 'license' | 'free';
  limits: PlanLimits;
  status: string;
  subscription?: {
    id: string;
    plan: string | null;
    status: string;
    currentPeriodStart?: string;
    currentPeriodEnd?: string;
    cancelAtPeriodEnd: boolean;
  };
  plans: { plan: PlanName; limits: PlanLimits; purchasable: boolean }[];
  warning?: string;
}

/** `GET /v1/orgs/{orgId}/billing/invoices`: amounts in the currency's smallest unit. */
interface Invoice {
  id: string;
  number?: string;
  status?: string;
  amountDue: number;
  amountPaid: number;
  currency: string;
  createdAt: string;
  hostedInvoiceUrl?: string;
  pdfUrl?: string;
}

/** A subscription in these states is paid for (or about to be): another checkout is refused. */
const PAID_STATUSES = new Set(['active', 'trialing', 'past_due']);

const PLAN_NAMES: Record<PlanName, string> = {
  free: 'Free',
  team: 'Team',
  business: 'Business',
  enterprise: 'Enterprise',
};

const planName = (plan: string | null) =>
  plan === null ? 'an unknown plan' : (PLAN_NAMES[plan as PlanName] ?? plan);

const SOURCES: Record<BillingView['source'], string> = {
  subscription: 'from the organization’s paid subscription',
  license: 'from this deployment’s license',
  free: 'the free plan: no paid subscription, and no license decides',
};

const number = (value: number) => value.toLocaleString();
const limit = (value: number | null, format: (n: number) => string = number) =>
  value === null ? 'No limit' : format(value);

/** Each limit of a plan, in words. */
const LIMITS: { label: string; of: (limits: PlanLimits) => string }[] = [
  { label: 'Sessions a month', of: (limits) => limit(limits.sessionsPerMonth) },
  { label: 'Calls a month', of: (limits) => limit(limits.callsPerMonth) },
  { label: 'Stored', of: (limits) => limit(limits.storedBytes, formatByteSize) },
  { label: 'AI tokens a month', of: (limits) => limit(limits.aiTokensPerMonth) },
  {
    label: 'Kept (sessions, calls, traces)',
    of: ({ retentionDays: days }) => `${days.sessions}, ${days.calls}, ${days.traces} days`,
  },
  { label: 'Seats', of: (limits) => limit(limits.seats) },
  { label: 'Projects', of: (limits) => limit(limits.projects) },
];

/** `1999, 'usd'` → `$19.99`, in the currency's own minor unit. */
function formatAmount(amount: number, currency: string): string {
  const format = new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amount / 10 ** digits);
}

/** `/settings/billing` (admins and owners). */
export function BillingPage() {
  const { organization } = useWorkspace();
  return (
    <SettingsLayout title="Billing">
      {administers(organization.role) ? (
        <Billing />
      ) : (
        <p className="settings-note" role="note">
          Billing is for the organization's admins and owners.
        </p>
      )}
    </SettingsLayout>
  );
}

function Billing() {
  const { organization } = useWorkspace();
  const [params] = useSearchParams();
  const billing = useQuery({
    queryKey: ['settings', 'billing', organization.id],
    queryFn: () => api<BillingView>('GET', `/v1/orgs/${organization.id}/billing`),
  });
  // Where Stripe sends the person back (`/orgs/{orgId}/billing?checkout=…`, opened here).
  const checkout = params.get('checkout');
  return (
    <>
      {checkout === 'success' ? (
        <StatusText>
          Thank you: the payment went through. The plan changes as soon as the billing provider confirms the
          subscription.
        </StatusText>
      ) : checkout === 'canceled' ? (
        <StatusText>The checkout was canceled: nothing was bought.</StatusText>
      ) : null}
      <QueryState query={billing}>
        {(data) => (
          <>
            <PlanSection billing={data} />
            <PlansSection billing={data} />
            <Invoices billing={data} />
          </>
        )}
      </QueryState>
    </>
  );
}

function PlanSection({ billing }: { billing: BillingView }) {
  const { organization } = useWorkspace();
  const { subscription } = billing;
  return (
    <section className="settings-section" aria-labelledby="billing-plan-title">
      <h2 id="billing-plan-title">Plan</h2>
      {billing.provider === 'none' ? (
        <p className="settings-note" role="note" data-testid="billing-not-configured">
          <strong>Billing is not configured on this deployment.</strong> Its plan comes from its license; the
          server's operator installs one with <code>svc license install &lt;file&gt;</code>. Nothing is bought
          here.
        </p>
      ) : null}
      {billing.warning === undefined ? null : (
        <p className="settings-note settings-paused" role="note" data-testid="license-warning">
          {billing.warning}
        </p>
      )}
      <p data-testid="billing-plan">
        {organization.name} is on the <strong>{planName(billing.plan)}</strong> plan,{' '}
        {SOURCES[billing.source]}.
      </p>
      <table className="settings-usage-totals">
        <caption className="visually-hidden">What the {planName(billing.plan)} plan allows</caption>
        <tbody>
          {LIMITS.map(({ label, of }) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>{of(billing.limits)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3 className="settings-subheading">Subscription</h3>
      {subscription === undefined ? (
        <p data-testid="billing-subscription">No subscription.</p>
      ) : (
        <p data-testid="billing-subscription">
          {planName(subscription.plan)}, <strong>{subscription.status.replace('_', ' ')}</strong>
          {subscription.currentPeriodEnd === undefined
            ? ''
            : subscription.cancelAtPeriodEnd
              ? `; it ends on ${formatDateTime(subscription.currentPeriodEnd)}`
              : `; renews on ${formatDateTime(subscription.currentPeriodEnd)}`}
          .
        </p>
      )}
      {billing.provider === 'stripe' ? <Portal billing={billing} /> : null}
    </section>
  );
}

/** Opens the provider's portal (owners): payment methods, invoices, plan changes, cancelling. */
function Portal({ billing }: { billing: BillingView }) {
  const { organization } = useWorkspace();
  const portal = useMutation({
    mutationFn: () => api<{ url: string }>('POST', `/v1/orgs/${organization.id}/billing/portal`),
    onSuccess: ({ url }) => window.location.assign(url),
  });
  if (!paysForTheOrganization(organization.role))
    return <p className="settings-hint">Owners change the plan, payment methods and subscription.</p>;
  if (billing.subscription === undefined) return null;
  return (
    <div className="settings-actions">
      <button type="button" onClick={() => portal.mutate()} disabled={portal.isPending || portal.isSuccess}>
        Manage billing
      </button>
      <span className="settings-hint">
        Payment methods, invoices, plan changes and cancelling, at the provider.
      </span>
      {portal.error ? <ErrorText>{portal.error.message}</ErrorText> : null}
    </div>
  );
}

/** Every plan and its limits; an owner buys one that can be bought here. */
function PlansSection({ billing }: { billing: BillingView }) {
  const { organization } = useWorkspace();
  const buy = useMutation({
    mutationFn: (plan: PlanName) =>
      api<{ id: string; url: string }>('POST', `/v1/orgs/${organization.id}/billing/checkout`, { plan }),
    onSuccess: ({ url }) => window.location.assign(url),
  });
  const owner = paysForTheOrganization(organization.role);
  const subscribed = billing.subscription !== undefined && PAID_STATUSES.has(billing.subscription.status);
  const canBuy = owner && billing.provider === 'stripe' && !subscribed;
  return (
    <section className="settings-section" aria-labelledby="billing-plans-title">
      <h2 id="billing-plans-title">Plans</h2>
      <div className="settings-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Plan</th>
              {LIMITS.map(({ label }) => (
                <th scope="col" key={label}>
                  {label}
                </th>
              ))}
              {canBuy ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {billing.plans.map((plan) => (
              <tr key={plan.plan} data-plan={plan.plan}>
                <th scope="row">
                  {planName(plan.plan)}
                  {plan.plan === billing.plan ? ' (yours)' : ''}
                </th>
                {LIMITS.map(({ label, of }) => (
                  <td key={label}>{of(plan.limits)}</td>
                ))}
                {canBuy ? (
                  <td>
                    {plan.purchasable ? (
                      <button
                        type="button"
                        className="primary"
                        onClick={() => buy.mutate(plan.plan)}
                        disabled={buy.isPending || buy.isSuccess}
                      >
                        Subscribe to {planName(plan.plan)}
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {buy.error ? <ErrorText>{buy.error.message}</ErrorText> : null}
      {billing.provider === 'none' ? null : owner ? (
        billing.subscription === undefined ? (
          <p className="settings-hint">
            Subscribing opens the provider's checkout; the plan changes once it is paid.
          </p>
        ) : (
          <p className="settings-hint">
            The organization has a subscription: change its plan in Manage billing.
          </p>
        )
      ) : (
        <p className="settings-hint">Owners buy plans.</p>
      )}
    </section>
  );
}

const INVOICES_PAGE = 10;

function Invoices({ billing }: { billing: BillingView }) {
  const { organization } = useWorkspace();
  const invoices = useInfiniteQuery({
    queryKey: ['settings', 'invoices', organization.id],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams({ limit: String(INVOICES_PAGE) });
      if (pageParam !== undefined) query.set('cursor', pageParam);
      return api<Page<Invoice>>('GET', `/v1/orgs/${organization.id}/billing/invoices?${query}`);
    },
    getNextPageParam: (last) => last.nextCursor,
    select: (data) => data.pages.flatMap((page) => page.items),
  });
  return (
    <section className="settings-section" aria-labelledby="billing-invoices-title">
      <h2 id="billing-invoices-title">Invoices</h2>
      <QueryState query={invoices}>
        {(items) =>
          items.length === 0 ? (
            <p data-testid="billing-invoices">
              {billing.provider === 'none'
                ? 'No invoices: billing is not configured on this deployment.'
                : 'No invoices yet.'}
            </p>
          ) : (
            <table data-testid="billing-invoices">
              <thead>
                <tr>
                  <th scope="col">Invoice</th>
                  <th scope="col">Date</th>
                  <th scope="col">Status</th>
                  <th scope="col">Amount due</th>
                  <th scope="col">Paid</th>
                  <th scope="col">Links</th>
                </tr>
              </thead>
              <tbody>
                {items.map((invoice) => (
                  <tr key={invoice.id}>
                    <th scope="row">{invoice.number ?? invoice.id}</th>
                    <td>
                      <time dateTime={invoice.createdAt}>{formatDateTime(invoice.createdAt)}</time>
                    </td>
                    <td>{invoice.status ?? '—'}</td>
                    <td>{formatAmount(invoice.amountDue, invoice.currency)}</td>
                    <td>{formatAmount(invoice.amountPaid, invoice.currency)}</td>
                    <td>
                      {invoice.hostedInvoiceUrl === undefined ? null : (
                        <a href={invoice.hostedInvoiceUrl} rel="noreferrer">
                          View <span className="visually-hidden">invoice {invoice.number ?? invoice.id}</span>
                        </a>
                      )}{' '}
                      {invoice.pdfUrl === undefined ? null : (
                        <a href={invoice.pdfUrl} rel="noreferrer">
                          PDF{' '}
                          <span className="visually-hidden">of invoice {invoice.number ?? invoice.id}</span>
                        </a>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
      {invoices.hasNextPage ? (
        <button type="button" onClick={() => invoices.fetchNextPage()} disabled={invoices.isFetchingNextPage}>
          Older invoices
        </button>
      ) : null}
    </section>
  );
}
