import { type Kysely, sql } from 'kysely';

// Billing and the license of issue 25 (servers/api/README.md, Billing):
// - `deployment_license`: the license `svc license install` stored, one row (the deployment's),
//   kept as the signed text and verified whenever it is read;
// - `billing_accounts`: an organization's account with the billing provider (Stripe): its customer
//   and its subscription as the provider's webhooks last described it;
// - `billing_events`: every provider event handled, by the provider's event id, so that a
//   redelivered event changes nothing.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`
    create table deployment_license (
      slot text primary key default 'current' check (slot = 'current'),
      license_id text not null,
      document text not null,
      installed_by text not null,
      installed_at timestamptz not null default now()
    )`.execute(database);
  await sql`
    create table billing_accounts (
      organization_id text primary key references organizations (id) on delete cascade,
      provider text not null,
      customer_id text,
      subscription_id text,
      plan text,
      price_id text,
      status text,
      current_period_start timestamptz,
      current_period_end timestamptz,
      cancel_at_period_end boolean not null default false,
      last_event_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(database);
  await sql`
    create unique index billing_accounts_customer on billing_accounts (provider, customer_id)
      where customer_id is not null`.execute(database);
  await sql`
    create table billing_events (
      provider text not null,
      id text not null,
      type text not null,
      organization_id text,
      outcome text not null,
      received_at timestamptz not null default now(),
      primary key (provider, id)
    )`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`drop table billing_events`.execute(database);
  await sql`drop table billing_accounts`.execute(database);
  await sql`drop table deployment_license`.execute(database);
}
