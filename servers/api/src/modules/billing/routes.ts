import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type AuditRecord, auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { BillingAccount } from '../../platform/database/tables/billing.table.ts';
import { forPeopleOnly } from '../../platform/http/authentication.ts';
import { ApiError, forbidden, invalid } from '../../platform/http/errors.ts';
import { checkMembership, membershipOf } from '../orgs/index.ts';
import type { Billing } from './billing.ts';
import { findBillingAccount, isPaidStatus, saveCustomer } from './billing-accounts.ts';
import { PLANS, type PlanName, planLimits, planLimitsSchema, planNameSchema } from './plans.ts';
import { billingNotConfigured } from './provider.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A billing route only the organization's owners may call (checkout, portal). */
    ownersOnly?: boolean;
  }
}

export interface BillingRoutesOptions {
  billing: Billing;
}

const orgParams = z.object({ orgId: z.string().max(64) });

const subscriptionViewSchema = z.object({
  id: z.string(),
  /** The plan of its price; null for a price the server does not know (SVC_STRIPE_PRICES). */
  plan: z.string().nullable(),
  status: z.string().describe('Stripe: active, trialing, past_due, canceled, unpaid, incomplete, …'),
  currentPeriodStart: z.iso.datetime().optional(),
  currentPeriodEnd: z.iso.datetime().optional(),
  cancelAtPeriodEnd: z.boolean().describe('It ends at the end of the current period'),
});

const billingViewSchema = z.object({
  organizationId: z.string(),
  provider: z.enum(['none', 'stripe']).describe('none: self-hosted, the plan comes from the license'),
  plan: planNameSchema.describe('The plan in force'),
  source: z.enum(['subscription', 'license', 'free']),
  limits: planLimitsSchema,
  /** The subscription's status, or `none`. */
  status: z.string(),
  subscription: subscriptionViewSchema.optional(),
  /** Every plan, its limits and whether it can be bought through checkout here. */
  plans: z.array(z.object({ plan: planNameSchema, limits: planLimitsSchema, purchasable: z.boolean() })),
  warning: z.string().optional().describe("The license's warning when it decides the plan"),
});

const invoiceViewSchema = z.object({
  id: z.string(),
  number: z.string().optional(),
  status: z.string().optional(),
  amountDue: z.int().describe("In the currency's smallest unit"),
  amountPaid: z.int(),
  currency: z.string(),
  createdAt: z.iso.datetime(),
  hostedInvoiceUrl: z.string().optional(),
  pdfUrl: z.string().optional(),
});

const linkSchema = z.object({ url: z.string().describe('Send the person there') });

function toSubscriptionView(account: BillingAccount): z.infer<typeof subscriptionViewSchema> | undefined {
  if (account.subscription_id === null || account.status === null) return undefined;
  return {
    id: account.subscription_id,
    plan: account.plan,
    status: account.status,
    ...(account.current_period_start === null
      ? {}
      : { currentPeriodStart: new Date(account.current_period_start).toISOString() }),
    ...(account.current_period_end === null
      ? {}
      : { currentPeriodEnd: new Date(account.current_period_end).toISOString() }),
    cancelAtPeriodEnd: account.cancel_at_period_end,
  };
}

/** A provider's failure as the API answers it: 502, masked (the log keeps the detail). */
function providerFailed(request: FastifyRequest, error: unknown): ApiError {
  if (ApiError.isInstance(error)) return error;
  request.log.error({ err: error }, 'the billing provider failed');
  return new ApiError({
    status: 502,
    code: 'internal',
    message: 'The billing provider did not answer as expected: try again later',
    cause: error,
  });
}

/**
 * `/v1/orgs/{orgId}/billing…`: the organization's plan, subscription and limits and its invoices
 * (admins and owners), a checkout for a plan and the provider's portal (owners only: they commit
 * the organization's money). For people (the cookie); a non-member gets 404. Checkout and portal
 * are audited (`billing.checkout_started`, `billing.portal_opened`). Without a provider they
 * answer 409 saying billing is not configured. servers/api/README.md, Billing.
 */
export default async function billingRoutes(fastify: FastifyInstance, options: BillingRoutesOptions) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { billing } = options;
  const { provider } = billing;
  const { appUrl } = fastify.configuration;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);
  fastify.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config.ownersOnly !== true) return;
    const { role } = membershipOf(request);
    if (role !== 'owner') throw forbidden(`Your role (${role}) does not allow this: billing takes an owner`);
  });

  async function audit(request: FastifyRequest, organizationId: string, record: AuditRecord) {
    const { person } = membershipOf(request);
    await recordAudit(
      database,
      organizationId,
      { type: 'user', id: person.userId },
      auditOrigin(request),
      record,
    );
  }

  routes.get(
    '/:orgId/billing',
    {
      config: { administer: true },
      schema: {
        summary:
          "The organization's plan, where it comes from, its limits and subscription (admins and owners)",
        params: orgParams,
        response: { 200: billingViewSchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const [account, plan] = await Promise.all([findBillingAccount(database, orgId), billing.planOf(orgId)]);
      const subscription = account === undefined ? undefined : toSubscriptionView(account);
      return {
        organizationId: orgId,
        provider: provider.name,
        plan: plan.plan,
        source: plan.source,
        limits: plan.limits,
        status: subscription?.status ?? 'none',
        ...(subscription === undefined ? {} : { subscription }),
        plans: PLANS.map((name) => ({
          plan: name,
          limits: planLimits(name),
          purchasable: provider.prices[name] !== undefined,
        })),
        ...(plan.warning === undefined ? {} : { warning: plan.warning }),
      };
    },
  );

  routes.get(
    '/:orgId/billing/invoices',
    {
      config: { administer: true },
      schema: {
        summary: "The organization's invoices, newest first (admins and owners); none without a provider",
        params: orgParams,
        querystring: z.strictObject({
          limit: z.coerce.number().int().min(1).max(100).default(10),
          cursor: z
            .string()
            .max(255)
            .regex(/^[A-Za-z0-9_]+$/, 'the nextCursor of the page before')
            .optional(),
        }),
        response: {
          200: z.object({ items: z.array(invoiceViewSchema), nextCursor: z.string().optional() }),
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          502: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const account = await findBillingAccount(database, orgId);
      if (provider.name === 'none' || account?.customer_id == null) return { items: [] };
      const { limit, cursor } = request.query;
      const page = await provider
        .invoices(
          { organizationId: orgId, customerId: account.customer_id },
          { limit, startingAfter: cursor },
        )
        .catch((error: unknown) => {
          throw providerFailed(request, error);
        });
      const last = page.items.at(-1);
      return { items: page.items, ...(page.hasMore && last !== undefined ? { nextCursor: last.id } : {}) };
    },
  );

  routes.post(
    '/:orgId/billing/checkout',
    {
      config: { ownersOnly: true },
      schema: {
        summary: 'A checkout page for a subscription to a plan (owners); 409 without a billing provider',
        description:
          "Answers the URL of the provider's hosted checkout (Stripe Checkout, mode subscription). The plan changes when the provider's webhook says the subscription is paid. 409 when the organization already has a subscription (change it in the portal) or no provider is configured.",
        params: orgParams,
        body: z.strictObject({ plan: planNameSchema.exclude(['free']) }),
        response: {
          200: linkSchema.extend({ id: z.string().describe("The provider's checkout session") }),
          400: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
          502: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const plan: PlanName = request.body.plan;
      if (provider.name === 'none') throw billingNotConfigured();
      const purchasable = PLANS.filter((name) => provider.prices[name] !== undefined);
      if (provider.prices[plan] === undefined)
        throw invalid(`The ${plan} plan cannot be bought here: choose one of ${purchasable.join(', ')}`);
      const account = await findBillingAccount(database, orgId);
      if (account !== undefined && isPaidStatus(account.status))
        throw invalid(
          `The organization already has a subscription (${account.plan ?? 'unknown plan'}, ${account.status}): change its plan in the billing portal (POST /v1/orgs/${orgId}/billing/portal)`,
          409,
        );
      const { person } = membershipOf(request);
      try {
        let customerId = account?.customer_id ?? null;
        if (customerId === null) {
          const [organization, caller] = await Promise.all([
            database
              .selectFrom('organizations')
              .select('name')
              .where('id', '=', orgId)
              .executeTakeFirstOrThrow(),
            database.selectFrom('users').select('email').where('id', '=', person.userId).executeTakeFirst(),
          ]);
          const created = await provider.createCustomer({
            id: orgId,
            name: organization.name,
            email: caller?.email,
          });
          customerId = await saveCustomer(database, orgId, provider.name, created);
        }
        const billingPage = `${appUrl}/orgs/${orgId}/billing`;
        const session = await provider.checkout(
          { organizationId: orgId, customerId },
          {
            plan,
            successUrl: `${billingPage}?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
            cancelUrl: `${billingPage}?checkout=canceled`,
          },
        );
        await audit(request, orgId, {
          action: 'billing.checkout_started',
          target: { type: 'organization', id: orgId },
          details: { plan, provider: provider.name, checkoutSessionId: session.id },
        });
        return { id: session.id, url: session.url };
      } catch (error) {
        throw providerFailed(request, error);
      }
    },
  );

  routes.post(
    '/:orgId/billing/portal',
    {
      config: { ownersOnly: true },
      schema: {
        summary:
          "The billing provider's self-service portal (owners): payment methods, invoices, plan, cancel",
        description:
          '409 before the organization has a billing account (subscribe through checkout first) or without a billing provider.',
        params: orgParams,
        response: {
          200: linkSchema,
          403: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
          502: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      if (provider.name === 'none') throw billingNotConfigured();
      const account = await findBillingAccount(database, orgId);
      if (account?.customer_id == null)
        throw invalid(
          `The organization has no billing account yet: subscribe first (POST /v1/orgs/${orgId}/billing/checkout)`,
          409,
        );
      try {
        const portal = await provider.portal(
          { organizationId: orgId, customerId: account.customer_id },
          { returnUrl: `${appUrl}/orgs/${orgId}/billing` },
        );
        await audit(request, orgId, {
          action: 'billing.portal_opened',
          target: { type: 'organization', id: orgId },
          details: { provider: provider.name },
        });
        return { url: portal.url };
      } catch (error) {
        throw providerFailed(request, error);
      }
    },
  );
}
