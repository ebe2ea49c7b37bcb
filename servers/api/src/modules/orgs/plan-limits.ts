import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { ApiError } from '../../platform/http/errors.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** What an organization's plan allows of seats and projects; `null`: no limit. */
export interface SeatAndProjectLimits {
  seats: number | null;
  projects: number | null;
}

/** No limits: a self-hosted deployment without a license or billing provider. */
export const NO_SEAT_OR_PROJECT_LIMITS: SeatAndProjectLimits = { seats: null, projects: null };

/**
 * The 402 answered when the plan allows no more: nothing was created.
 *
 * @example
 * ```ts
 * throw planLimitReached('projects', 3);
 * ```
 */
export function planLimitReached(what: 'seats' | 'projects', limit: number): ApiError {
  return new ApiError({
    status: 402,
    code: 'invalid',
    message: `The organization's plan allows ${limit} ${what === 'seats' ? 'seats (members and pending invitations)' : 'projects'}; upgrade the plan or remove one first`,
  });
}

/**
 * Locks the organization's row for the rest of the caller's transaction, so concurrent requests
 * that add a member, an invitation or a project count one after the other.
 */
export async function lockOrganization(
  transaction: Transaction<Database>,
  organizationId: string,
): Promise<void> {
  await sql`select id from organizations where id = ${organizationId} for update`.execute(transaction);
}

/**
 * Seats taken: lasting members (a break-glass grant takes none) and invitations still pending.
 *
 * @example
 * ```ts
 * if (limits.seats !== null && (await seatsTaken(transaction, orgId)) >= limits.seats) throw planLimitReached('seats', limits.seats);
 * ```
 */
export async function seatsTaken(
  executor: Executor,
  organizationId: string,
  now = new Date(),
): Promise<number> {
  const row = await sql<{ seats: number }>`
    select
      (select count(*) from organization_members
       where organization_id = ${organizationId} and expires_at is null)
      + (select count(*) from organization_invitations
         where organization_id = ${organizationId} and accepted_at is null and revoked_at is null
           and expires_at > ${now}) as seats`.execute(executor);
  return Number(row.rows[0]?.seats ?? 0);
}
