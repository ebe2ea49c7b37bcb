import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personOf, send, type TestPerson } from '../../../test/people.ts';
import { type StripeStandIn, startStripeStandIn } from '../../../test/stripe-stand-in.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { ConfigurationError, describeConfiguration, loadConfiguration } from '../../platform/config.ts';
import { reportEndedDays } from '../usage/index.ts';
import {
  type Billing,
  createBilling,
  PLANS,
  type PlanLimits,
  type PlanName,
  planLimits,
  type UsageRecord,
  type UsageReport,
} from './index.ts';
import { createNoBillingProvider } from './provider.ts';
import { createStripeProvider } from './stripe-provider.ts';

// Stripe as the billing provider: the real `stripe` package against the Stripe stand-in
// (test/stripe-stand-in.ts), through the server's routes: a customer per organization, checkout
// for a plan's price, the portal, invoices page by page, the billing view, metered usage, and
// Stripe's errors answered without leaking the secret key.

const WEBHOOK_SECRET = 'whsec_billing_stripe_test';

function stripeEnvironment(stripe: StripeStandIn): Record<string, string> {
  return {
    SVC_STRIPE_SECRET_KEY: stripe.secretKey,
    SVC_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    SVC_STRIPE_PRICES: 'team:price_team_monthly, business:price_business_monthly',
    SVC_STRIPE_METER_EVENTS: 'sessions:svc_sessions',
    SVC_STRIPE_API_BASE: stripe.apiBase,
  };
}

describe('Stripe settings', () => {
  it('need the key, the webhook secret and the prices together, and never show the secrets', () => {
    const problems = (environment: Record<string, string>) => {
      try {
        loadConfiguration(environment);
        return [];
      } catch (error) {
        if (!ConfigurationError.isInstance(error)) throw error;
        return error.problems;
      }
    };
    expect(problems({ SVC_STRIPE_SECRET_KEY: 'sk_test_1' })).toEqual([
      expect.stringMatching(/^SVC_STRIPE_WEBHOOK_SECRET: required with SVC_STRIPE_SECRET_KEY/),
      expect.stringMatching(/^SVC_STRIPE_PRICES: required with SVC_STRIPE_SECRET_KEY/),
    ]);
    expect(problems({ SVC_STRIPE_PRICES: 'team:price_1' })).toEqual([
      'SVC_STRIPE_PRICES: set SVC_STRIPE_SECRET_KEY too (it turns Stripe billing on)',
    ]);
    const bad = problems({
      SVC_STRIPE_SECRET_KEY: 'pk_live_oops',
      SVC_STRIPE_WEBHOOK_SECRET: 'secret',
      SVC_STRIPE_PRICES: 'team=price_1',
      SVC_STRIPE_API_BASE: 'http://127.0.0.1:1/v1',
    });
    expect(bad.map((problem) => problem.split(':')[0])).toEqual([
      'SVC_STRIPE_SECRET_KEY',
      'SVC_STRIPE_WEBHOOK_SECRET',
      'SVC_STRIPE_PRICES',
      'SVC_STRIPE_API_BASE',
    ]);
    expect(bad.join('\n')).not.toContain('pk_live_oops');

    const configuration = loadConfiguration({
      SVC_STRIPE_SECRET_KEY: 'sk_live_very_secret',
      SVC_STRIPE_WEBHOOK_SECRET: 'whsec_very_secret',
      SVC_STRIPE_PRICES: 'team:price_1,business:price_2',
    });
    expect(configuration.stripe).toEqual({
      secretKey: 'sk_live_very_secret',
      webhookSecret: 'whsec_very_secret',
      prices: { team: 'price_1', business: 'price_2' },
      meterEvents: {},
      apiBase: 'https://api.stripe.com',
    });
    const described = JSON.stringify(describeConfiguration(configuration));
    expect(described).not.toContain('very_secret');
    expect(described).toContain('price_2');
    // A plan that cannot be sold is refused when the provider is made (at start-up).
    expect(() =>
      createStripeProvider({
        ...(configuration.stripe as NonNullable<typeof configuration.stripe>),
        prices: { free: 'price_0' },
      }),
    ).toThrow(/SVC_STRIPE_PRICES: free is not a paid plan/);
  });
});

describe.each(ENGINES)('billing with Stripe, on %s', (engine) => {
  let stripe: StripeStandIn;
  let test: TestApp;
  let orgId: string;
  let owner: TestPerson;
  let admin: TestPerson;
  const logLines: string[] = [];

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    stripe.prices.add('price_team_monthly');
    test = await createTestApp(
      engine,
      { logger: { level: 'info', stream: { write: (line: string) => logLines.push(line) } } },
      stripeEnvironment(stripe),
    );
    orgId = test.first.project.organization_id;
    owner = await personOf(test.database.database, orgId, 'owner');
    admin = await personOf(test.database.database, orgId, 'admin');
  });
  afterAll(async () => {
    await test?.close();
    await stripe?.close();
  });

  const checkout = (plan: string, as: TestPerson = owner, organizationId = orgId) =>
    send(test, 'POST', `/v1/orgs/${organizationId}/billing/checkout`, as.headers, { plan });

  it('opens a checkout for a plan with a customer made once per organization', async () => {
    const before = (await send(test, 'GET', `/v1/orgs/${orgId}/billing`, admin.headers)).json();
    expect(before).toMatchObject({ provider: 'stripe', plan: 'free', source: 'free', status: 'none' });
    expect(before.subscription).toBeUndefined();
    expect(
      before.plans.map((plan: { plan: PlanName; limits: PlanLimits }) => [plan.plan, plan.limits]),
    ).toEqual(PLANS.map((plan) => [plan, planLimits(plan)]));
    expect(
      before.plans
        .filter((plan: { purchasable: boolean }) => plan.purchasable)
        .map((plan: { plan: string }) => plan.plan),
    ).toEqual(['team', 'business']);

    const first = await checkout('team');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({
      id: expect.stringMatching(/^cs_test_/),
      url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/),
    });
    const again = await checkout('team');
    expect(again.statusCode).toBe(200);

    // One customer: the organization's name and the owner's address; then two checkouts on it.
    expect([...stripe.customers.values()]).toEqual([
      expect.objectContaining({
        name: 'Test project org',
        email: owner.email,
        metadata: { organization_id: orgId },
      }),
    ]);
    const customerId = [...stripe.customers.keys()][0];
    const sessions = stripe.received.filter((request) => request.path === '/v1/checkout/sessions');
    expect(sessions).toHaveLength(2);
    const appUrl = test.configuration.appUrl;
    expect(sessions[0]?.form).toMatchObject({
      mode: 'subscription',
      customer: customerId,
      client_reference_id: orgId,
      'line_items[0][price]': 'price_team_monthly',
      'line_items[0][quantity]': '1',
      success_url: `${appUrl}/orgs/${orgId}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${appUrl}/orgs/${orgId}/billing?checkout=canceled`,
      'subscription_data[metadata][organization_id]': orgId,
    });
    // The secret key goes to Stripe, in its header, and nowhere else.
    expect(
      stripe.received.every((request) => request.headers.authorization === `Bearer ${stripe.secretKey}`),
    ).toBe(true);
    const account = await test.database.database
      .selectFrom('billing_accounts')
      .selectAll()
      .where('organization_id', '=', orgId)
      .executeTakeFirstOrThrow();
    expect(account).toMatchObject({
      provider: 'stripe',
      customer_id: customerId,
      subscription_id: null,
      status: null,
    });
    const audited = await test.database.database
      .selectFrom('audit_log')
      .select(['action', 'actor_id', 'details'])
      .where('organization_id', '=', orgId)
      .where('action', '=', 'billing.checkout_started')
      .execute();
    expect(audited).toHaveLength(2);
    expect(audited[0]).toMatchObject({
      actor_id: owner.userId,
      details: { plan: 'team', provider: 'stripe' },
    });
  });

  it("answers a plan without a price 400, Stripe's refusal a masked 502, and admins 403", async () => {
    const enterprise = await checkout('enterprise');
    expect(enterprise.statusCode).toBe(400);
    expect(enterprise.json()).toEqual({
      error: 'The enterprise plan cannot be bought here: choose one of team, business',
      code: 'invalid',
    });
    // SVC_STRIPE_PRICES names a price Stripe does not have: Stripe answers 400 resource_missing.
    const business = await checkout('business');
    expect(business.statusCode).toBe(502);
    expect(business.json()).toEqual({
      error: 'The billing provider did not answer as expected: try again later',
      code: 'internal',
    });
    expect(logLines.join('\n')).toContain('No such price');
    expect(logLines.join('\n')).not.toContain(stripe.secretKey);
    expect((await checkout('team', admin)).statusCode).toBe(403);
  });

  it('opens the portal of the customer, and refuses an organization without one with 409', async () => {
    const portal = await send(test, 'POST', `/v1/orgs/${orgId}/billing/portal`, owner.headers);
    expect(portal.statusCode, portal.body).toBe(200);
    expect(portal.json().url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\/bps_/);
    const request = stripe.received
      .filter((received) => received.path === '/v1/billing_portal/sessions')
      .at(-1);
    expect(request?.form).toEqual({
      customer: [...stripe.customers.keys()][0],
      return_url: `${test.configuration.appUrl}/orgs/${orgId}/billing`,
    });

    const other = (await test.createProject('Other')).project.organization_id;
    const otherOwner = await personOf(test.database.database, other, 'owner');
    const none = await send(test, 'POST', `/v1/orgs/${other}/billing/portal`, otherOwner.headers);
    expect(none.statusCode).toBe(409);
    expect(none.json().error).toMatch(/has no billing account yet: subscribe first/);
    expect(
      (await send(test, 'GET', `/v1/orgs/${other}/billing/invoices`, otherOwner.headers)).json(),
    ).toEqual({ items: [] });
  });

  it("lists the customer's invoices newest first, a page at a time (Stripe's starting_after)", async () => {
    const customerId = [...stripe.customers.keys()][0] as string;
    for (const [index, amount] of [4900, 4900, 9800].entries())
      stripe.invoices.push({
        id: `in_test_${index}`,
        object: 'invoice',
        customer: customerId,
        number: `SVC-000${index}`,
        status: index === 2 ? 'open' : 'paid',
        amount_due: amount,
        amount_paid: index === 2 ? 0 : amount,
        currency: 'eur',
        created: 1_790_000_000 + index * 2_600_000,
        hosted_invoice_url: `https://invoice.stripe.com/i/in_test_${index}`,
        invoice_pdf: `https://pay.stripe.com/invoice/in_test_${index}/pdf`,
      });
    // Another customer's invoice never shows.
    stripe.invoices.push({
      id: 'in_other',
      object: 'invoice',
      customer: 'cus_other',
      amount_due: 1,
      amount_paid: 1,
      currency: 'eur',
      created: 1,
    });

    const first = (
      await send(test, 'GET', `/v1/orgs/${orgId}/billing/invoices?limit=2`, admin.headers)
    ).json();
    expect(first).toEqual({
      items: [
        {
          id: 'in_test_2',
          number: 'SVC-0002',
          status: 'open',
          amountDue: 9800,
          amountPaid: 0,
          currency: 'eur',
          createdAt: new Date((1_790_000_000 + 2 * 2_600_000) * 1000).toISOString(),
          hostedInvoiceUrl: 'https://invoice.stripe.com/i/in_test_2',
          pdfUrl: 'https://pay.stripe.com/invoice/in_test_2/pdf',
        },
        expect.objectContaining({ id: 'in_test_1', status: 'paid', amountPaid: 4900 }),
      ],
      nextCursor: 'in_test_1',
    });
    const second = (
      await send(
        test,
        'GET',
        `/v1/orgs/${orgId}/billing/invoices?limit=2&cursor=${first.nextCursor}`,
        admin.headers,
      )
    ).json();
    expect(second).toEqual({ items: [expect.objectContaining({ id: 'in_test_0', number: 'SVC-0000' })] });
    const asked = stripe.received.filter((request) => request.path === '/v1/invoices').at(-1);
    expect(asked?.query).toEqual({ customer: customerId, limit: '2', starting_after: 'in_test_1' });
  });

  it('reports metered usage as Billing Meter Events, once per identifier', async () => {
    // What the usage module gets (billing/index.ts): the Billing of the server's provider.
    const billing: Billing = createBilling({
      database: test.database.database,
      provider: createStripeProvider(
        test.configuration.stripe as NonNullable<typeof test.configuration.stripe>,
      ),
    });
    const customerId = [...stripe.customers.keys()][0];
    const usage: UsageRecord = {
      metric: 'sessions',
      quantity: 1234,
      timestamp: new Date('2026-12-17T10:00:00Z'),
      identifier: `${orgId}:sessions:2026-12-17T10`,
    };
    const reported: UsageReport = await billing.reportUsage(orgId, usage);
    expect(reported).toEqual({ reported: true });
    expect(await billing.reportUsage(orgId, usage)).toEqual({ reported: true });
    expect(
      await billing.reportUsage(orgId, {
        ...usage,
        metric: 'ai_tokens',
        quantity: 0,
        identifier: `${orgId}:ai:1`,
      }),
    ).toEqual({ reported: true });
    expect([...stripe.meterEvents.values()]).toEqual([
      expect.objectContaining({
        event_name: 'svc_sessions',
        identifier: usage.identifier,
        payload: { stripe_customer_id: customerId, value: '1234' },
        timestamp: Date.parse('2026-12-17T10:00:00Z') / 1000,
      }),
      // A metric without a configured meter is reported under its own name.
      expect.objectContaining({
        event_name: 'ai_tokens',
        payload: { stripe_customer_id: customerId, value: '0' },
      }),
    ]);
    const other = (await test.createProject('No customer')).project.organization_id;
    expect(await billing.reportUsage(other, usage)).toEqual({
      reported: false,
      reason: `organization ${other} has no stripe customer yet`,
    });
    await expect(billing.reportUsage(orgId, { ...usage, quantity: -1 })).rejects.toThrow(RangeError);
    const none = createBilling({ database: test.database.database, provider: createNoBillingProvider() });
    expect(await none.reportUsage(orgId, usage)).toEqual({
      reported: false,
      reason: 'billing is not configured on this deployment',
    });
  });

  it("the usage reporter sends each ended day's totals once, per configured meter, timed at the day's end", async () => {
    const database = test.database.database;
    const billing = createBilling({
      database,
      provider: createStripeProvider(
        test.configuration.stripe as NonNullable<typeof test.configuration.stripe>,
      ),
    });
    const other = await test.createProject('Reporter, no customer');
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    const row = (projectId: string, organizationId: string, daysAgo: number, sessions: number) => ({
      project_id: projectId,
      day: day(daysAgo),
      organization_id: organizationId,
      sessions,
      ai_tokens: 500,
      stored_bytes: 1_000_000,
    });
    await database
      .insertInto('usage_daily')
      .values([
        row(test.first.project.id, orgId, 2, 40),
        row(test.first.project.id, orgId, 1, 25),
        // Today is not over: not reported yet.
        row(test.first.project.id, orgId, 0, 7),
        row(other.project.id, other.project.organization_id, 1, 3),
      ])
      .onConflict((conflict) =>
        conflict.columns(['project_id', 'day']).doUpdateSet((update) => ({
          sessions: update.ref('excluded.sessions'),
          ai_tokens: update.ref('excluded.ai_tokens'),
          stored_bytes: update.ref('excluded.stored_bytes'),
        })),
      )
      .execute();
    const before = new Set(stripe.meterEvents.keys());
    const run = () =>
      reportEndedDays({
        database,
        report: billing.reportUsage,
        // Stored bytes is a level, never reported as usage, even when given a meter.
        metrics: ['sessions', 'stored_bytes'],
        log: test.app.log,
      });
    expect(await run()).toBe(2);
    const sent = [...stripe.meterEvents.values()].filter((event) => !before.has(event.identifier as string));
    expect(
      sent.map((event) => [event.identifier, event.event_name, (event.payload as { value: string }).value]),
    ).toEqual([
      [`${orgId}:sessions:${day(2)}`, 'svc_sessions', '40'],
      [`${orgId}:sessions:${day(1)}`, 'svc_sessions', '25'],
    ]);
    expect(sent[1]?.timestamp).toBe(Date.parse(`${day(1)}T23:59:59Z`) / 1000);
    // Again: nothing more is sent; the organization without a customer was skipped, and recorded.
    expect(await run()).toBe(0);
    expect(stripe.meterEvents.size).toBe(before.size + 2);
    const skipped = await database
      .selectFrom('usage_reports')
      .select(['status', 'reason'])
      .where('organization_id', '=', other.project.organization_id)
      .execute();
    expect(skipped).toEqual([{ status: 'skipped', reason: expect.stringMatching(/no stripe customer/) }]);
  });

  it("takes a paid subscription's plan over the license and the free plan", async () => {
    await test.database.database
      .updateTable('billing_accounts')
      .set({
        subscription_id: 'sub_direct',
        plan: 'team',
        status: 'past_due',
        price_id: 'price_team_monthly',
      })
      .where('organization_id', '=', orgId)
      .execute();
    const view = (await send(test, 'GET', `/v1/orgs/${orgId}/billing`, owner.headers)).json();
    expect(view).toMatchObject({
      plan: 'team',
      source: 'subscription',
      limits: planLimits('team'),
      status: 'past_due',
      subscription: { id: 'sub_direct', plan: 'team', status: 'past_due', cancelAtPeriodEnd: false },
    });
    // A second checkout while subscribed is refused: the plan changes in the portal.
    const refused = await checkout('team');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatch(
      /already has a subscription \(team, past_due\): change its plan in the billing portal/,
    );
    await test.database.database
      .updateTable('billing_accounts')
      .set({ status: 'unpaid' })
      .where('organization_id', '=', orgId)
      .execute();
    expect((await send(test, 'GET', `/v1/orgs/${orgId}/billing`, owner.headers)).json()).toMatchObject({
      plan: 'free',
      source: 'free',
      status: 'unpaid',
    });
  });
});
