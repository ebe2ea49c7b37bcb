import { type Kysely, sql } from 'kysely';

// Break-glass access (issue 25; servers/api/README.md, Break-glass access): an operator's
// temporary membership of an organization, granted with `svc break-glass`. It is a membership row
// with an expiry and the reason given; every membership lookup ignores it once expired.

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function up(database: Kysely<any>): Promise<void> {
  await sql`alter table organization_members add column expires_at timestamptz`.execute(database);
  await sql`alter table organization_members add column break_glass_reason text`.execute(database);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations work on any schema
export async function down(database: Kysely<any>): Promise<void> {
  await sql`alter table organization_members drop column break_glass_reason`.execute(database);
  await sql`alter table organization_members drop column expires_at`.execute(database);
}
