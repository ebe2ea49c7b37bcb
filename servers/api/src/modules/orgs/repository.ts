import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type {
  Organization,
  OrganizationInvitation,
  Role,
} from '../../platform/database/tables/organizations.table.ts';
import { createId } from '../../platform/ids.ts';
import { createLinkToken, hashSecret } from '../../platform/secrets.ts';

// Organizations, their members and invitations. Every function takes the organization it acts in;
// a change to who owns an organization locks the organization's row first, so two owners
// demoting each other at once leave one owner, never none.

type Executor = Kysely<Database> | Transaction<Database>;

/** How long an invitation link works. */
export const INVITATION_LIFETIME_DAYS = 7;

/** A person's organization and their role in it. */
export interface Membership {
  organization: Organization;
  role: Role;
}

/** Creates an organization with the person as its owner. */
export async function createOrganizationWithOwner(
  database: Kysely<Database>,
  options: { name: string; userId: string },
): Promise<Organization> {
  return database.transaction().execute(async (transaction) => {
    const organization = await transaction
      .insertInto('organizations')
      .values({ id: createId('org'), name: options.name })
      .returningAll()
      .executeTakeFirstOrThrow();
    await transaction
      .insertInto('organization_members')
      .values({ organization_id: organization.id, user_id: options.userId, role: 'owner' })
      .execute();
    return organization;
  });
}

/** Makes the person a member with the role; a member already keeps the role they have. */
export async function addMember(
  database: Executor,
  organizationId: string,
  userId: string,
  role: Role,
): Promise<void> {
  await database
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: userId, role })
    // A member for good replaces break-glass access (in force or expired); a member stays as is.
    .onConflict((conflict) =>
      conflict
        .columns(['organization_id', 'user_id'])
        .doUpdateSet({ role, expires_at: null, break_glass_reason: null, updated_at: new Date() })
        .where('organization_members.expires_at', 'is not', null),
    )
    .execute();
}

function membershipColumns() {
  return [
    'organizations.id',
    'organizations.name',
    'organizations.sso_required',
    'organizations.created_at',
    'organizations.updated_at',
    'organization_members.role',
  ] as const;
}

function toMembership(row: {
  id: string;
  name: string;
  sso_required: boolean;
  created_at: Date;
  updated_at: Date;
  role: Role;
}): Membership {
  const { role, ...organization } = row;
  return { organization, role };
}

/** A membership in force: for good, or break-glass access not expired yet. */
export const MEMBERSHIP_IN_FORCE = sql<boolean>`(organization_members.expires_at is null or organization_members.expires_at > now())`;

/** The organizations the person belongs to, oldest first. */
export async function listMemberships(database: Executor, userId: string): Promise<Membership[]> {
  const rows = await database
    .selectFrom('organization_members')
    .innerJoin('organizations', 'organizations.id', 'organization_members.organization_id')
    .select(membershipColumns())
    .where('organization_members.user_id', '=', userId)
    .where(MEMBERSHIP_IN_FORCE)
    .orderBy('organizations.id')
    .limit(1000)
    .execute();
  return rows.map(toMembership);
}

/** The person's membership of the organization, or undefined when they are no member of it. */
export async function findMembership(
  database: Executor,
  organizationId: string,
  userId: string,
): Promise<Membership | undefined> {
  const row = await database
    .selectFrom('organization_members')
    .innerJoin('organizations', 'organizations.id', 'organization_members.organization_id')
    .select(membershipColumns())
    .where('organization_members.organization_id', '=', organizationId)
    .where('organization_members.user_id', '=', userId)
    .where(MEMBERSHIP_IN_FORCE)
    .executeTakeFirst();
  return row === undefined ? undefined : toMembership(row);
}

export async function renameOrganization(
  database: Executor,
  organizationId: string,
  name: string,
): Promise<Organization | undefined> {
  return database
    .updateTable('organizations')
    .set({ name, updated_at: new Date() })
    .where('id', '=', organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** A member as the members list shows them. */
export interface MemberRow {
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  created_at: Date;
}

/** The organization's members by user id, `limit` after the user id `after` (or the one `only`). */
export async function listMembers(
  database: Executor,
  organizationId: string,
  page: { limit: number; after?: string | undefined; only?: string },
): Promise<MemberRow[]> {
  let query = database
    .selectFrom('organization_members')
    .innerJoin('users', 'users.id', 'organization_members.user_id')
    .select([
      'organization_members.user_id',
      'users.email',
      'users.name',
      'organization_members.role',
      'organization_members.created_at',
    ])
    .where('organization_members.organization_id', '=', organizationId)
    .where(MEMBERSHIP_IN_FORCE);
  if (page.after !== undefined) query = query.where('organization_members.user_id', '>', page.after);
  if (page.only !== undefined) query = query.where('organization_members.user_id', '=', page.only);
  return query.orderBy('organization_members.user_id').limit(page.limit).execute();
}

/** Why a change to a membership did not happen. */
export type MembershipRefusal = 'not_found' | 'last_owner';

/** What a change to a membership checks and records, in its transaction. */
export interface MembershipChangeHooks {
  /** Throws when the caller may not change a member of this role (before anything is counted). */
  authorize?(previous: Role): void;
  /** Writes what goes with the change (its audit entry), in the same transaction. */
  record?(transaction: Transaction<Database>, previous: Role): Promise<void>;
}

/**
 * Runs `change` on the member's row with the organization's row locked, unless the caller may
 * not (`hooks.authorize` throws) or it would leave the organization without an owner (the member
 * is its only owner and `keepsOwner` is false).
 */
async function changeMembership(
  database: Kysely<Database>,
  organizationId: string,
  userId: string,
  keepsOwner: boolean,
  hooks: MembershipChangeHooks,
  change: (transaction: Transaction<Database>) => Promise<void>,
): Promise<{ previous: Role } | MembershipRefusal> {
  return database.transaction().execute(async (transaction) => {
    const locked = await transaction
      .selectFrom('organizations')
      .select('id')
      .where('id', '=', organizationId)
      .forUpdate()
      .executeTakeFirst();
    if (locked === undefined) return 'not_found';
    const member = await transaction
      .selectFrom('organization_members')
      .select('role')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (member === undefined) return 'not_found';
    hooks.authorize?.(member.role);
    if (member.role === 'owner' && !keepsOwner) {
      const owners = await transaction
        .selectFrom('organization_members')
        .select(sql<number>`count(*)::int`.as('count'))
        .where('organization_id', '=', organizationId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      if (owners.count <= 1) return 'last_owner';
    }
    await hooks.record?.(transaction, member.role);
    await change(transaction);
    return { previous: member.role };
  });
}

/** Gives a member another role; the role they had, or why not. */
export function changeMemberRole(
  database: Kysely<Database>,
  organizationId: string,
  userId: string,
  role: Role,
  hooks: MembershipChangeHooks = {},
): Promise<{ previous: Role } | MembershipRefusal> {
  return changeMembership(database, organizationId, userId, role === 'owner', hooks, async (transaction) => {
    await transaction
      .updateTable('organization_members')
      .set({ role, updated_at: new Date() })
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  });
}

/** Removes a member (or lets them leave); the role they had, or why not. */
export function removeMember(
  database: Kysely<Database>,
  organizationId: string,
  userId: string,
  hooks: MembershipChangeHooks = {},
): Promise<{ previous: Role } | MembershipRefusal> {
  return changeMembership(database, organizationId, userId, false, hooks, async (transaction) => {
    await transaction
      .deleteFrom('organization_members')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  });
}

/**
 * Creates an invitation and its link token (returned once; stored hashed). An earlier pending
 * invitation of the same address to the organization is revoked: the newest link is the one.
 */
export async function createInvitation(
  database: Executor,
  options: { organizationId: string; email: string; role: Exclude<Role, 'owner'>; invitedBy: string },
  now = new Date(),
): Promise<{ invitation: OrganizationInvitation; token: string }> {
  await database
    .updateTable('organization_invitations')
    .set({ revoked_at: now })
    .where('organization_id', '=', options.organizationId)
    .where(sql<string>`lower(email)`, '=', options.email.toLowerCase())
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
  const token = createLinkToken();
  const invitation = await database
    .insertInto('organization_invitations')
    .values({
      id: createId('inv'),
      organization_id: options.organizationId,
      email: options.email,
      role: options.role,
      token_hash: hashSecret(token),
      invited_by: options.invitedBy,
      expires_at: new Date(now.getTime() + INVITATION_LIFETIME_DAYS * 86_400_000),
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { invitation, token };
}

/** Whether the address belongs to a member of the organization already. */
export async function isMemberEmail(
  database: Executor,
  organizationId: string,
  email: string,
): Promise<boolean> {
  const row = await database
    .selectFrom('organization_members')
    .innerJoin('users', 'users.id', 'organization_members.user_id')
    .select('users.id')
    .where('organization_members.organization_id', '=', organizationId)
    .where(sql<string>`lower(users.email)`, '=', email.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}

/** The organization's invitations not accepted nor revoked (expired ones too), newest first. */
export async function listPendingInvitations(
  database: Executor,
  organizationId: string,
): Promise<OrganizationInvitation[]> {
  return database
    .selectFrom('organization_invitations')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(1000)
    .execute();
}

/** Revokes a pending invitation; undefined when there is no such pending invitation. */
export async function revokeInvitation(
  database: Executor,
  organizationId: string,
  invitationId: string,
): Promise<OrganizationInvitation | undefined> {
  return database
    .updateTable('organization_invitations')
    .set({ revoked_at: new Date() })
    .where('organization_id', '=', organizationId)
    .where('id', '=', invitationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The pending, unexpired invitation of a link's token, with its organization's name. */
export async function findLiveInvitation(
  database: Executor,
  token: string,
  now = new Date(),
): Promise<(OrganizationInvitation & { organization_name: string }) | undefined> {
  return database
    .selectFrom('organization_invitations')
    .innerJoin('organizations', 'organizations.id', 'organization_invitations.organization_id')
    .selectAll('organization_invitations')
    .select('organizations.name as organization_name')
    .where('organization_invitations.token_hash', '=', hashSecret(token))
    .where('organization_invitations.accepted_at', 'is', null)
    .where('organization_invitations.revoked_at', 'is', null)
    .where('organization_invitations.expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Takes a link's invitation for the person (once: a second use finds nothing) and makes them a
 * member with its role. Undefined when the link is unknown, used, revoked or expired.
 */
export function acceptInvitation(
  database: Transaction<Database>,
  token: string,
  userId: string,
  now = new Date(),
): Promise<OrganizationInvitation | undefined> {
  return takeLive(database, { tokenHash: hashSecret(token) }, userId, now);
}

/**
 * The newest live invitation of `email` to the organization, or undefined: a person who joins
 * another way (SSO just in time, a verified domain) takes the role they were invited with, and
 * their invitation's seat, which was already counted.
 */
export function liveInvitationOf(
  database: Executor,
  organizationId: string,
  email: string,
  now = new Date(),
): Promise<OrganizationInvitation | undefined> {
  return database
    .selectFrom('organization_invitations')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Takes a live invitation (found by `liveInvitationOf`) for the person and makes them a member
 * with its role; false when it was used, revoked or expired meanwhile.
 */
export async function takeInvitation(
  database: Transaction<Database>,
  invitation: Pick<OrganizationInvitation, 'id'>,
  userId: string,
  now = new Date(),
): Promise<boolean> {
  return (await takeLive(database, { id: invitation.id }, userId, now)) !== undefined;
}

/** Marks the invitation (by id or link) accepted by the person if it is live, and adds the member. */
async function takeLive(
  database: Transaction<Database>,
  which: { id: string } | { tokenHash: Uint8Array },
  userId: string,
  now: Date,
): Promise<OrganizationInvitation | undefined> {
  const invitation = await database
    .updateTable('organization_invitations')
    .set({ accepted_at: now, accepted_by: userId })
    .where((eb) => ('id' in which ? eb('id', '=', which.id) : eb('token_hash', '=', which.tokenHash)))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
  if (invitation === undefined) return undefined;
  await addMember(database, invitation.organization_id, userId, invitation.role);
  return invitation;
}
