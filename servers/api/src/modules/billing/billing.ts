import type { KeyObject } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { BillingAccount } from '../../platform/database/tables/billing.table.ts';
import { findBillingAccount, isPaidStatus } from './billing-accounts.ts';
import { type DeploymentLicense, deploymentLicense } from './license-store.ts';
import { isPlanName, type PlanLimits, type PlanName, planLimits } from './plans.ts';
import type { BillingProvider, UsageRecord, UsageReport } from './provider.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** An organization's plan in force, and where it comes from. */
export interface OrganizationPlan {
  organizationId: string;
  plan: PlanName;
  limits: PlanLimits;
  /**
   * `subscription`: a paid subscription (active, trialing, or past due while the provider
   * retries); `license`: the deployment's license (valid, or in its grace period); `free`:
   * neither.
   */
  source: 'subscription' | 'license' | 'free';
  /** The license's warning (expired, in grace, not valid), when the license is what decides. */
  warning?: string;
}

/**
 * The plan in force for an organization: its paid subscription's plan when it has one, else the
 * deployment's license plan (while valid and during the grace period), else the free plan. The
 * usage module checks caps against `limits`.
 *
 * @example
 * ```ts
 * const { plan, limits } = await organizationPlan(database, organizationId);
 * if (limits.sessionsPerMonth !== null && used >= limits.sessionsPerMonth) refuse();
 * ```
 */
export async function organizationPlan(
  database: Executor,
  organizationId: string,
  options: { publicKey?: KeyObject; now?: Date } = {},
): Promise<OrganizationPlan> {
  const account = await findBillingAccount(database, organizationId);
  return planFrom(organizationId, account, await deploymentLicense(database, options));
}

/** The plan in force given the organization's account and the deployment's license. */
function planFrom(
  organizationId: string,
  account: BillingAccount | undefined,
  license: DeploymentLicense,
): OrganizationPlan {
  if (
    account !== undefined &&
    isPaidStatus(account.status) &&
    account.plan !== null &&
    isPlanName(account.plan)
  )
    return { organizationId, plan: account.plan, limits: planLimits(account.plan), source: 'subscription' };
  const warning = license.warning === undefined ? {} : { warning: license.warning };
  if (license.status === 'valid' || license.status === 'grace')
    return { organizationId, plan: license.plan, limits: license.limits, source: 'license', ...warning };
  return { organizationId, plan: 'free', limits: planLimits('free'), source: 'free', ...warning };
}

/** Billing as the rest of the server uses it (built once by the composition root). */
export interface Billing {
  /** The payment provider: `none` (self-hosted) or Stripe. */
  provider: BillingProvider;
  /** The key licenses are verified with, when not the shipped one (tests). */
  licensePublicKey?: KeyObject;
  /** The deployment's license, judged now. */
  license(now?: Date): Promise<DeploymentLicense>;
  /** An organization's plan in force, see {@link organizationPlan}. */
  planOf(organizationId: string, now?: Date): Promise<OrganizationPlan>;
  /**
   * Reports metered usage of an organization to the provider (Stripe: a Billing Meter Event,
   * counted once per `identifier`). Nothing is reported without a provider or before the
   * organization has a customer; the answer says so.
   */
  reportUsage(organizationId: string, usage: UsageRecord): Promise<UsageReport>;
}

/**
 * Billing over a database and a provider.
 *
 * @example
 * ```ts
 * const billing = createBilling({ database, provider: createNoBillingProvider() });
 * const { plan } = await billing.planOf(organizationId);
 * await billing.reportUsage(organizationId, { metric: 'sessions', quantity: 120, timestamp: new Date(), identifier: 'org_1:sessions:2026-12-17T10' });
 * ```
 */
export function createBilling(options: {
  database: Kysely<Database>;
  provider: BillingProvider;
  licensePublicKey?: KeyObject | undefined;
}): Billing {
  const { database, provider, licensePublicKey } = options;
  const keyOption = licensePublicKey === undefined ? {} : { publicKey: licensePublicKey };
  return {
    provider,
    ...(licensePublicKey === undefined ? {} : { licensePublicKey }),
    license: (now = new Date()) => deploymentLicense(database, { ...keyOption, now }),
    planOf: (organizationId, now = new Date()) =>
      organizationPlan(database, organizationId, { ...keyOption, now }),
    async reportUsage(organizationId, usage) {
      if (!Number.isSafeInteger(usage.quantity) || usage.quantity < 0)
        throw new RangeError(`usage quantity must be a non-negative integer, not ${usage.quantity}`);
      if (provider.name === 'none') return provider.reportUsage({ organizationId, customerId: '' }, usage);
      const account = await findBillingAccount(database, organizationId);
      if (account?.customer_id == null)
        return {
          reported: false,
          reason: `organization ${organizationId} has no ${provider.name} customer yet`,
        };
      return provider.reportUsage({ organizationId, customerId: account.customer_id }, usage);
    },
  };
}
