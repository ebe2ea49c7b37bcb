import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { AuditEntry } from '../../platform/database/tables/organizations.table.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** What the audit trail can be narrowed to. */
export interface AuditFilters {
  action?: string | undefined;
  actorId?: string | undefined;
  targetId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/**
 * A page of the organization's audit trail, newest first: `limit` entries before the entry id
 * `before` (ids are ULIDs, so their order is their time's). Served by `audit_log_organization`.
 */
export async function findAuditPage(
  database: Executor,
  organizationId: string,
  filters: AuditFilters,
  page: { limit: number; before?: string | undefined },
): Promise<AuditEntry[]> {
  let query = database.selectFrom('audit_log').selectAll().where('organization_id', '=', organizationId);
  if (filters.action !== undefined) query = query.where('action', '=', filters.action);
  if (filters.actorId !== undefined) query = query.where('actor_id', '=', filters.actorId);
  if (filters.targetId !== undefined) query = query.where('target_id', '=', filters.targetId);
  if (filters.from !== undefined) query = query.where('created_at', '>=', filters.from);
  if (filters.to !== undefined) query = query.where('created_at', '<', filters.to);
  if (page.before !== undefined) query = query.where('id', '<', page.before);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}
