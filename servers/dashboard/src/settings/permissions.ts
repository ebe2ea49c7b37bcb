import type { Role } from './types.ts';

// What a role may change (servers/api/src/modules/orgs/roles.ts): the pages show only the controls
// the server would accept; the server refuses the rest anyway.

/** `settings:write`: change the project's settings, rotate its key, delete it. */
export function changesSettings(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

/**
 * Organization administration: invitations, roles, members, API tokens, the audit trail, the
 * organization's own caps, reading billing, end users' erasure.
 */
export function administers(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

/** Buying a plan and the billing provider's portal: they commit the organization's money. */
export function paysForTheOrganization(role: Role): boolean {
  return role === 'owner';
}

/** The roles `role` may give or take away (only owners make or unmake owners). */
export function assignableRoles(role: Role): Role[] {
  return role === 'owner' ? ['owner', 'admin', 'member', 'viewer'] : ['admin', 'member', 'viewer'];
}
