import type { ColumnType, Selectable } from 'kysely';

/** The deployment's license as installed (migration 2026-12-17-billing): one row, slot `current`. */
export interface DeploymentLicenseTable {
  slot: ColumnType<'current', 'current' | undefined, never>;
  /** The license's `id` (`lic_…`), for listing; the document is what counts. */
  license_id: string;
  /** The signed text, verified whenever it is read (a row edited by hand verifies as forged). */
  document: string;
  /** Who installed it (`svc license install`). */
  installed_by: string;
  installed_at: ColumnType<Date, Date | undefined, Date>;
}

/** A Stripe subscription's status, as Stripe names it. */
export type SubscriptionStatus =
  | 'incomplete'
  | 'incomplete_expired'
  | 'trialing'
  | 'active'
  | 'past_due'
  | 'canceled'
  | 'unpaid'
  | 'paused';

/** An organization's account with the billing provider. */
export interface BillingAccountsTable {
  organization_id: string;
  /** `stripe`. */
  provider: string;
  /** The provider's customer (`cus_…`), once made. */
  customer_id: string | null;
  /** The subscription (`sub_…`) last reported. */
  subscription_id: string | null;
  /** The plan of the subscription's price. */
  plan: string | null;
  price_id: string | null;
  status: SubscriptionStatus | null;
  current_period_start: Date | null;
  current_period_end: Date | null;
  cancel_at_period_end: ColumnType<boolean, boolean | undefined, boolean>;
  /** When the newest provider event applied was created: older ones arriving late are not applied. */
  last_event_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type BillingAccount = Selectable<BillingAccountsTable>;

/** A provider event handled (its id makes redeliveries no-ops). */
export interface BillingEventsTable {
  provider: string;
  /** The provider's event id (`evt_…`). */
  id: string;
  type: string;
  organization_id: string | null;
  /** `applied`, `stale` (older than what was applied), `unknown_organization`, `ignored`. */
  outcome: string;
  received_at: ColumnType<Date, Date | undefined, never>;
}
