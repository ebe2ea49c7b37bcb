// Billing: the deployment's license, the plans and their limits, the billing provider (none or
// Stripe) and an organization's subscription. Accounts, organizations and projects come before;
// usage (the meter and caps) after, and reads an organization's plan from here. Other modules
// import this module only through this file (servers/api/README.md, Layout).

export { type Billing, createBilling, type OrganizationPlan, organizationPlan } from './billing.ts';
export { PLANS, type PlanLimits, type PlanName, planLimits } from './plans.ts';
export type { UsageRecord, UsageReport } from './provider.ts';
