// Organizations: the organizations people belong to, their members and roles, invitations, and
// the audit trail. Accounts (people) come before; projects, which belong to an organization,
// after. Other modules import this module only through this file (servers/api/README.md, Layout).

export { checkMembership, membershipOf } from './access.ts';
export {
  BREAK_GLASS_ROLES,
  type BreakGlassGrant,
  grantBreakGlass,
  MAX_BREAK_GLASS_HOURS,
  ownerAddresses,
} from './break-glass.ts';
export { createOrganization, findFirstOrganization } from './organizations.ts';
export { type AddedPerson, addPerson, DEFAULT_OWNER_EMAIL } from './people.ts';
export {
  lockOrganization,
  NO_SEAT_OR_PROJECT_LIMITS,
  planLimitReached,
  type SeatAndProjectLimits,
  seatsTaken,
} from './plan-limits.ts';
export { liveInvitationOf, MEMBERSHIP_IN_FORCE, takeInvitation } from './repository.ts';
export { scopesOfRole } from './roles.ts';
