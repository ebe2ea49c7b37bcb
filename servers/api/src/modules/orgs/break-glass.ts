import { type Kysely, sql, type Transaction } from 'kysely';
import { recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Organization } from '../../platform/database/tables/organizations.table.ts';
import { createVerifiedUser, findUserByEmail, signInLink } from '../accounts/index.ts';
import type { Role } from './roles.ts';

/** The longest break-glass access one command grants. */
export const MAX_BREAK_GLASS_HOURS = 24;

/** The roles break-glass access may take: never owner. */
export const BREAK_GLASS_ROLES = ['viewer', 'member', 'admin'] as const satisfies readonly Role[];

/** Break-glass access granted. */
export interface BreakGlassGrant {
  organization: Pick<Organization, 'id' | 'name'>;
  userId: string;
  email: string;
  role: (typeof BREAK_GLASS_ROLES)[number];
  reason: string;
  grantedBy: string;
  expiresAt: string;
  /** A one-time sign-in link, when the operator had no account here before. */
  signInLink?: string;
}

/**
 * Grants an operator temporary access to an organization's data (`svc break-glass`): a membership
 * with the role (viewer by default, never owner) that ends at `expiresAt`, recorded in the
 * organization's audit trail (`security.break_glass`) and announced by `announce` in the same
 * transaction (the composition sends `security.break_glass` to the organization's projects and
 * mails its owners). An operator without an account gets one (verified, no password) and a
 * one-time sign-in link. A person who is a member already is refused: they need no break-glass.
 *
 * @example
 * ```ts
 * const grant = await grantBreakGlass(database, appUrl, { organizationId, email: 'ops@example.com', reason: 'ticket 4411', hours: 2, role: 'viewer', grantedBy: 'svc break-glass' }, announce);
 * ```
 */
export async function grantBreakGlass(
  database: Kysely<Database>,
  appUrl: string,
  options: {
    organizationId: string;
    email: string;
    reason: string;
    hours: number;
    role: (typeof BREAK_GLASS_ROLES)[number];
    grantedBy: string;
    now?: Date;
  },
  announce: (transaction: Transaction<Database>, grant: BreakGlassGrant) => Promise<void>,
): Promise<BreakGlassGrant | { problem: string }> {
  const reason = options.reason.trim();
  if (reason.length < 3 || reason.length > 500)
    return { problem: '--reason must say why, in 3 to 500 characters (a ticket, an incident)' };
  if (!Number.isFinite(options.hours) || options.hours <= 0 || options.hours > MAX_BREAK_GLASS_HOURS)
    return { problem: `--hours must be more than 0 and at most ${MAX_BREAK_GLASS_HOURS}` };
  const organization = await database
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where('id', '=', options.organizationId)
    .executeTakeFirst();
  if (organization === undefined) return { problem: `No organization ${options.organizationId}` };
  let user = await findUserByEmail(database, options.email);
  let link: string | undefined;
  if (user === undefined) {
    const created = await createVerifiedUser(database, { email: options.email });
    if ('problem' in created) return created;
    user = created.user;
    link = await signInLink(database, appUrl, user);
  }
  const now = options.now ?? new Date();
  const expiresAt = new Date(now.getTime() + options.hours * 3_600_000);
  const grant: BreakGlassGrant = {
    organization,
    userId: user.id,
    email: user.email,
    role: options.role,
    reason,
    grantedBy: options.grantedBy,
    expiresAt: expiresAt.toISOString(),
    ...(link === undefined ? {} : { signInLink: link }),
  };
  const userId = user.id;
  const problem = await database.transaction().execute(async (transaction) => {
    const values = { role: options.role, expires_at: expiresAt, break_glass_reason: reason, updated_at: now };
    // A member for good is refused; earlier break-glass access (in force or expired) is replaced.
    const written = await transaction
      .insertInto('organization_members')
      .values({ organization_id: organization.id, user_id: userId, ...values })
      .onConflict((conflict) =>
        conflict
          .columns(['organization_id', 'user_id'])
          .doUpdateSet(values)
          .where('organization_members.expires_at', 'is not', null),
      )
      .returning('user_id')
      .executeTakeFirst();
    if (written === undefined)
      return `${user.email} is a member of ${organization.name} already: no break-glass needed`;
    await recordAudit(
      transaction,
      organization.id,
      { type: 'system', label: options.grantedBy },
      { ip: null, userAgent: null },
      {
        action: 'security.break_glass',
        target: { type: 'user', id: userId },
        details: {
          email: user.email,
          role: options.role,
          reason,
          expiresAt: grant.expiresAt,
          hours: options.hours,
        },
      },
    );
    await announce(transaction, grant);
    return undefined;
  });
  if (problem !== undefined) return { problem };
  return grant;
}

/** The owners' addresses of an organization (to tell them of break-glass access). */
export async function ownerAddresses(
  database: Kysely<Database> | Transaction<Database>,
  organizationId: string,
) {
  const rows = await database
    .selectFrom('organization_members')
    .innerJoin('users', 'users.id', 'organization_members.user_id')
    .select('users.email')
    .where('organization_members.organization_id', '=', organizationId)
    .where('organization_members.role', '=', 'owner')
    .where(sql<boolean>`organization_members.expires_at is null`)
    .orderBy('users.email')
    .execute();
  return rows.map((row) => row.email);
}
