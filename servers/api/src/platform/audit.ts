import type { FastifyRequest } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from './database/schema.ts';
import { createId } from './ids.ts';

// The audit trail: every security-relevant action, who did it, on what, when, from where. Any
// module records through these functions (they sit below all of them); organizations read the
// trail (`GET /v1/orgs/{orgId}/audit`). An entry is written in the same transaction as the change
// it records, so there is never a change without its entry, nor an entry for a change rolled back.

type Executor = Kysely<Database> | Transaction<Database>;

/** Who acted: a signed-in person, an API token, or the server itself (the CLI, the first start). */
export type AuditActor =
  | { type: 'user'; id: string }
  | { type: 'api_token'; id: string }
  | { type: 'system'; label: string };

/** What happened, on what. `action` is `<area>.<verb>`, as `member.role_changed`. */
export interface AuditRecord {
  action: string;
  target?: { type: string; id: string };
  /** Facts that help the reader (the new role, the token's scopes); never a secret. */
  details?: Record<string, unknown>;
}

/** Where the request came from. */
export interface AuditOrigin {
  ip: string | null;
  userAgent: string | null;
}

/** The client address and user agent of a request. */
export function auditOrigin(request: FastifyRequest): AuditOrigin {
  const agent = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: agent === undefined ? null : agent.slice(0, 512) };
}

/** The actor's label as it is now (a person's e-mail address, a token's name). */
function actorLabel(actor: AuditActor) {
  if (actor.type === 'system') return sql<string>`${actor.label}`;
  if (actor.type === 'user') return sql<string>`(select email from users where id = ${actor.id})`;
  return sql<string>`(select name from api_tokens where id = ${actor.id})`;
}

/**
 * Records one action in one organization.
 *
 * @example
 * ```ts
 * await recordAudit(transaction, organizationId, { type: 'user', id: userId }, auditOrigin(request), {
 *   action: 'member.removed', target: { type: 'user', id: memberId },
 * });
 * ```
 */
export async function recordAudit(
  database: Executor,
  organizationId: string,
  actor: AuditActor,
  origin: AuditOrigin,
  record: AuditRecord,
): Promise<void> {
  await database
    .insertInto('audit_log')
    .values({
      id: createId('aud'),
      organization_id: organizationId,
      actor_type: actor.type,
      actor_id: actor.type === 'system' ? null : actor.id,
      actor_label: actorLabel(actor),
      action: record.action,
      target_type: record.target?.type ?? null,
      target_id: record.target?.id ?? null,
      ip: origin.ip,
      user_agent: origin.userAgent,
      details: JSON.stringify(record.details ?? {}),
    })
    .execute();
}

/**
 * Records a person's own security action (a sign-in, a password change, two-factor turned on)
 * in every organization they belong to: each organization's admins see what its members' accounts
 * went through. Nothing when they belong to none.
 */
export async function recordPersonAudit(
  database: Executor,
  userId: string,
  origin: AuditOrigin,
  record: AuditRecord,
): Promise<void> {
  const memberships = await database
    .selectFrom('organization_members')
    .select('organization_id')
    .where('user_id', '=', userId)
    .execute();
  if (memberships.length === 0) return;
  const label = actorLabel({ type: 'user', id: userId });
  await database
    .insertInto('audit_log')
    .values(
      memberships.map((membership) => ({
        id: createId('aud'),
        organization_id: membership.organization_id,
        actor_type: 'user' as const,
        actor_id: userId,
        actor_label: label,
        action: record.action,
        target_type: record.target?.type ?? 'user',
        target_id: record.target?.id ?? userId,
        ip: origin.ip,
        user_agent: origin.userAgent,
        details: JSON.stringify(record.details ?? {}),
      })),
    )
    .execute();
}
