import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personOf, send, type TestPerson } from '../../../test/people.ts';
import { type StripeStandIn, startStripeStandIn, stripeSubscription } from '../../../test/stripe-stand-in.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';

// Stripe's webhooks, signed by Stripe's own test helper (`stripe.webhooks.generateTestHeaderString`)
// and verified by @svc/webhook-verify: each handled event updates the organization's
// subscription and emits `billing.event` (the inbox of the organization's projects, through
// notifications); a bad signature, a redelivery, an unknown type or an older event change nothing.

const WEBHOOK_SECRET = 'whsec_webhook_test_secret';
const TEAM = 'price_team_monthly';
const BUSINESS = 'price_business_monthly';
/** Only its webhook helpers are used: no request leaves this client. */
const stripeHelpers = new Stripe('sk_test_helpers_only');

// biome-ignore lint/suspicious/noExplicitAny: Stripe objects as JSON
type StripeObject = Record<string, any>;

function stripeEvent(type: string, object: StripeObject, created = Math.floor(Date.now() / 1000)) {
  return {
    id: `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created,
    type,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
  };
}

describe.each(ENGINES)("Stripe's webhooks, on %s", (engine) => {
  let stripe: StripeStandIn;
  let test: TestApp;
  let orgId: string;
  let owner: TestPerson;
  let customerId: string;

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    stripe.prices.add(TEAM);
    test = await createTestApp(
      engine,
      { logger: false },
      {
        SVC_STRIPE_SECRET_KEY: stripe.secretKey,
        SVC_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        SVC_STRIPE_PRICES: `team:${TEAM},business:${BUSINESS}`,
        SVC_STRIPE_API_BASE: stripe.apiBase,
      },
    );
    orgId = test.first.project.organization_id;
    owner = await personOf(test.database.database, orgId, 'owner');
    const checkout = await send(test, 'POST', `/v1/orgs/${orgId}/billing/checkout`, owner.headers, {
      plan: 'team',
    });
    expect(checkout.statusCode, checkout.body).toBe(200);
    customerId = [...stripe.customers.keys()][0] as string;
  });
  afterAll(async () => {
    await test?.close();
    await stripe?.close();
  });

  /** Posts an event as Stripe does: its JSON, signed now with the endpoint's secret. */
  function deliver(
    event: StripeObject,
    options: { secret?: string; timestamp?: number; payload?: string; signature?: string | null } = {},
  ) {
    const signed = JSON.stringify(event);
    const header =
      options.signature === undefined
        ? stripeHelpers.webhooks.generateTestHeaderString({
            payload: signed,
            secret: options.secret ?? WEBHOOK_SECRET,
            ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
          })
        : options.signature;
    return test.app.inject({
      method: 'POST',
      url: '/v1/billing/stripe/webhook',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        ...(header === null ? {} : { 'stripe-signature': header }),
      },
      payload: options.payload ?? signed,
    });
  }

  const account = () =>
    test.database.database
      .selectFrom('billing_accounts')
      .selectAll()
      .where('organization_id', '=', orgId)
      .executeTakeFirstOrThrow();

  /** The billing.event notifications of the organization's project, oldest first. */
  async function billingEvents() {
    const rows = await test.database.database
      .selectFrom('notification_events')
      .select(['type', 'severity', 'title', 'payload', 'inbox'])
      .where('project_id', '=', test.first.project.id)
      .where('type', '=', 'billing.event')
      .orderBy('id')
      .execute();
    return rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) }));
  }

  /** Everything the webhook may change, to compare before and after. */
  async function state() {
    const database = test.database.database;
    return JSON.stringify([
      await database.selectFrom('billing_accounts').selectAll().orderBy('organization_id').execute(),
      await database.selectFrom('billing_events').select(['id', 'outcome']).orderBy('id').execute(),
      await database.selectFrom('notification_events').select('id').orderBy('id').execute(),
      await database.selectFrom('audit_log').select('id').orderBy('id').execute(),
    ]);
  }

  it('applies checkout.session.completed: the subscription as Stripe has it, audited, billing.event emitted', async () => {
    stripe.subscriptions.set(
      'sub_team',
      stripeSubscription({
        id: 'sub_team',
        customer: customerId,
        price: TEAM,
        metadata: { organization_id: orgId },
      }),
    );
    const event = stripeEvent('checkout.session.completed', {
      id: 'cs_test_done',
      object: 'checkout.session',
      mode: 'subscription',
      status: 'complete',
      customer: customerId,
      subscription: 'sub_team',
      client_reference_id: orgId,
      metadata: { organization_id: orgId, plan: 'team' },
    });
    const response = await deliver(event);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ received: true, outcome: 'applied' });

    expect(await account()).toMatchObject({
      customer_id: customerId,
      subscription_id: 'sub_team',
      plan: 'team',
      price_id: TEAM,
      status: 'active',
      cancel_at_period_end: false,
    });
    expect(new Date((await account()).current_period_end as Date).toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    );
    const view = (await send(test, 'GET', `/v1/orgs/${orgId}/billing`, owner.headers)).json();
    expect(view).toMatchObject({
      plan: 'team',
      source: 'subscription',
      status: 'active',
      subscription: {
        id: 'sub_team',
        plan: 'team',
        status: 'active',
        currentPeriodStart: '2026-12-01T00:00:00.000Z',
        currentPeriodEnd: '2027-01-01T00:00:00.000Z',
        cancelAtPeriodEnd: false,
      },
    });

    const events = await billingEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'billing.event',
      severity: 'info',
      title: 'Subscription active on team',
      inbox: true,
      payload: {
        type: 'billing.event',
        orgId,
        projectId: test.first.project.id,
        data: {
          summary:
            'The subscription sub_team is active on the team plan; the current period ends on 2027-01-01.',
          links: { billing: `${test.configuration.appUrl}/orgs/${orgId}/billing` },
        },
      },
    });
    const audit = await test.database.database
      .selectFrom('audit_log')
      .select(['actor_type', 'actor_label', 'details'])
      .where('organization_id', '=', orgId)
      .where('action', '=', 'billing.subscription_changed')
      .execute();
    expect(audit).toEqual([
      {
        actor_type: 'system',
        actor_label: 'stripe',
        details: {
          stripeEvent: event.id,
          type: 'checkout.session.completed',
          subscription: 'sub_team',
          plan: 'team',
          status: 'active',
        },
      },
    ]);

    // Stripe redelivers the same event (signed afresh): 200, and nothing changes.
    const before = await state();
    const again = await deliver(event);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ received: true, outcome: 'duplicate' });
    expect(await state()).toBe(before);
  });

  it('refuses a bad signature with 400 and changes nothing', async () => {
    const event = stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: 'sub_team', customer: customerId, price: BUSINESS }),
    );
    const before = await state();
    const tampered = JSON.stringify(event).replace(BUSINESS, TEAM);
    const refusals = [
      await deliver(event, { secret: 'whsec_someone_else' }),
      await deliver(event, { payload: tampered }),
      await deliver(event, { signature: null }),
      await deliver(event, { signature: 't=1,v1=zz' }),
      await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
    ];
    for (const response of refusals) {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({
        error: 'The Stripe-Signature header does not verify this body',
        code: 'invalid',
      });
    }
    expect(JSON.stringify(refusals.map((response) => response.body))).not.toContain(WEBHOOK_SECRET);
    expect(await state()).toBe(before);
  });

  it('applies subscription updates in order, ignores older ones, and emits billing.event for each change', async () => {
    const now = Math.floor(Date.now() / 1000);
    const upgraded = stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: 'sub_team', customer: customerId, price: BUSINESS, cancelAtPeriodEnd: true }),
      now + 5,
    );
    expect((await deliver(upgraded)).json()).toEqual({ received: true, outcome: 'applied' });
    expect(await account()).toMatchObject({
      plan: 'business',
      price_id: BUSINESS,
      status: 'active',
      cancel_at_period_end: true,
    });
    const latest = (await billingEvents()).at(-1);
    expect(latest).toMatchObject({
      title: 'Subscription active on business',
      payload: {
        data: {
          summary:
            "The subscription sub_team is active on the business plan; it ends on 2027-01-01 (canceled at the period's end).",
        },
      },
    });

    // An update created before the one applied (Stripe does not promise order): recorded, not applied.
    const count = (await billingEvents()).length;
    const older = stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: 'sub_team', customer: customerId, price: TEAM }),
      now,
    );
    expect((await deliver(older)).json()).toEqual({ received: true, outcome: 'stale' });
    expect(await account()).toMatchObject({ plan: 'business', cancel_at_period_end: true });
    expect(await billingEvents()).toHaveLength(count);
  });

  it('follows invoices: a failed payment (past due, high severity), then paid', async () => {
    const invoice = (status: string) => ({
      id: 'in_renewal',
      object: 'invoice',
      number: 'SVC-0042',
      customer: customerId,
      status,
      amount_due: 9900,
      amount_paid: status === 'paid' ? 9900 : 0,
      currency: 'eur',
      created: Math.floor(Date.now() / 1000),
      hosted_invoice_url: 'https://invoice.stripe.com/i/in_renewal',
      parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_team' } },
    });
    const later = Math.floor(Date.now() / 1000) + 10;
    stripe.subscriptions.set(
      'sub_team',
      stripeSubscription({ id: 'sub_team', customer: customerId, price: BUSINESS, status: 'past_due' }),
    );
    expect(
      (await deliver(stripeEvent('invoice.payment_failed', invoice('open'), later))).json(),
    ).toMatchObject({ outcome: 'applied' });
    expect(await account()).toMatchObject({ status: 'past_due', plan: 'business' });
    // Past due keeps the plan while Stripe retries.
    expect((await send(test, 'GET', `/v1/orgs/${orgId}/billing`, owner.headers)).json()).toMatchObject({
      plan: 'business',
      status: 'past_due',
    });
    expect((await billingEvents()).at(-1)).toMatchObject({
      severity: 'high',
      title: 'Payment of invoice SVC-0042 failed',
      payload: {
        data: {
          summary: expect.stringMatching(
            /^The payment of invoice SVC-0042 \(99\.00 EUR\) failed; the subscription is past_due\./,
          ),
          counts: { amountDue: 9900, amountPaid: 0 },
          links: { invoice: 'https://invoice.stripe.com/i/in_renewal' },
        },
      },
    });

    stripe.subscriptions.set(
      'sub_team',
      stripeSubscription({ id: 'sub_team', customer: customerId, price: BUSINESS, status: 'active' }),
    );
    expect((await deliver(stripeEvent('invoice.paid', invoice('paid'), later + 1))).json()).toMatchObject({
      outcome: 'applied',
    });
    expect(await account()).toMatchObject({ status: 'active' });
    expect((await billingEvents()).at(-1)).toMatchObject({
      severity: 'info',
      title: 'Invoice SVC-0042 paid',
    });
  });

  it('falls back to the free plan when the subscription is deleted', async () => {
    const deleted = stripeEvent(
      'customer.subscription.deleted',
      stripeSubscription({ id: 'sub_team', customer: customerId, price: BUSINESS, status: 'canceled' }),
      Math.floor(Date.now() / 1000) + 20,
    );
    expect((await deliver(deleted)).json()).toMatchObject({ outcome: 'applied' });
    expect((await send(test, 'GET', `/v1/orgs/${orgId}/billing`, owner.headers)).json()).toMatchObject({
      plan: 'free',
      source: 'free',
      status: 'canceled',
    });
    expect((await billingEvents()).at(-1)).toMatchObject({
      severity: 'medium',
      title: 'Subscription canceled',
    });
  });

  it('acknowledges unknown types and other customers with 200, changing nothing else', async () => {
    const before = await state();
    const unknown = await deliver(stripeEvent('customer.created', { id: 'cus_new', object: 'customer' }));
    expect(unknown.json()).toEqual({ received: true, outcome: 'ignored' });
    expect(await state()).toBe(before);

    const stranger = stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: 'sub_elsewhere', customer: 'cus_not_ours', price: TEAM }),
    );
    expect((await deliver(stranger)).json()).toEqual({ received: true, outcome: 'unknown_organization' });
    const recorded = await test.database.database
      .selectFrom('billing_events')
      .select(['type', 'organization_id', 'outcome'])
      .where('id', '=', stranger.id)
      .execute();
    expect(recorded).toEqual([
      { type: 'customer.subscription.updated', organization_id: null, outcome: 'unknown_organization' },
    ]);
    expect(
      await test.database.database.selectFrom('billing_accounts').select('organization_id').execute(),
    ).toEqual([{ organization_id: orgId }]);
  });

  it('refuses a body over 1 MiB with 413 before reading it all', async () => {
    const response = await test.app.inject({
      method: 'POST',
      url: '/v1/billing/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      payload: `{"pad":"${'x'.repeat(1024 * 1024)}"}`,
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().code).toBe('invalid');
  });
});
