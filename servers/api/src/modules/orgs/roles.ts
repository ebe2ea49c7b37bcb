import type { Role, Scope } from '../../platform/http/authentication.ts';

// What each role may do (servers/api/README.md, Roles). In a project of their organization a
// person holds the scopes of their role; organization administration (members, invitations,
// projects, tokens, the audit trail) takes an admin or an owner; owners alone make or unmake
// owners.

export type { Role };

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

const READ: readonly Scope[] = [
  'sessions:read',
  'calls:read',
  'issues:read',
  'notifications:read',
  'settings:read',
  'sourcemaps:read',
  'ai:read',
];
const MEMBER: readonly Scope[] = [
  ...READ,
  'sessions:write',
  'issues:write',
  'notifications:write',
  'ai:write',
];
const ADMIN: readonly Scope[] = [...MEMBER, 'settings:write', 'sourcemaps:write'];

const ROLE_SCOPES: Readonly<Record<Role, ReadonlySet<Scope>>> = {
  owner: new Set(ADMIN),
  admin: new Set(ADMIN),
  member: new Set(MEMBER),
  viewer: new Set(READ),
};

/** The scopes a role holds in every project of its organization. */
export function scopesOfRole(role: Role): ReadonlySet<Scope> {
  return ROLE_SCOPES[role];
}

/** Whether the role administers its organization (members, invitations, projects, tokens, audit). */
export function administers(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}
