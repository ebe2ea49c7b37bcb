import { z } from 'zod';
import type {
  AuditEntry,
  OrganizationInvitation,
} from '../../platform/database/tables/organizations.table.ts';
import type { MemberRow, Membership } from './repository.ts';
import { ROLES } from './roles.ts';

export const roleSchema = z.enum(ROLES as ['owner', 'admin', 'member', 'viewer']);
/** The roles an invitation may offer: owners are made by owners, from members. */
export const invitedRoleSchema = z.enum(['admin', 'member', 'viewer']);

export const organizationViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  role: roleSchema.describe("The caller's role in it"),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export function toOrganizationView(membership: Membership): z.infer<typeof organizationViewSchema> {
  return {
    id: membership.organization.id,
    name: membership.organization.name,
    role: membership.role,
    createdAt: membership.organization.created_at.toISOString(),
    updatedAt: membership.organization.updated_at.toISOString(),
  };
}

export const memberViewSchema = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string().optional(),
  role: roleSchema,
  joinedAt: z.iso.datetime(),
});

export function toMemberView(row: MemberRow): z.infer<typeof memberViewSchema> {
  return {
    userId: row.user_id,
    email: row.email,
    ...(row.name === null ? {} : { name: row.name }),
    role: row.role,
    joinedAt: row.created_at.toISOString(),
  };
}

export const invitationViewSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: invitedRoleSchema,
  invitedBy: z.string().optional().describe('The user id of who sent it'),
  expiresAt: z.iso.datetime(),
  expired: z.boolean(),
  createdAt: z.iso.datetime(),
});

export function toInvitationView(
  invitation: OrganizationInvitation,
  now = new Date(),
): z.infer<typeof invitationViewSchema> {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    ...(invitation.invited_by === null ? {} : { invitedBy: invitation.invited_by }),
    expiresAt: invitation.expires_at.toISOString(),
    expired: invitation.expires_at <= now,
    createdAt: invitation.created_at.toISOString(),
  };
}

export const auditEntryViewSchema = z.object({
  id: z.string(),
  action: z.string().describe('`<area>.<verb>`, as `member.role_changed`'),
  actor: z.object({
    type: z.enum(['user', 'api_token', 'system']),
    id: z.string().optional(),
    label: z.string().optional().describe("An e-mail address or a token's name, as it was then"),
  }),
  target: z.object({ type: z.string(), id: z.string() }).optional(),
  details: z.record(z.string(), z.unknown()),
  ip: z.string().optional(),
  userAgent: z.string().optional(),
  createdAt: z.iso.datetime(),
});

export function toAuditEntryView(entry: AuditEntry): z.infer<typeof auditEntryViewSchema> {
  return {
    id: entry.id,
    action: entry.action,
    actor: {
      type: entry.actor_type,
      ...(entry.actor_id === null ? {} : { id: entry.actor_id }),
      ...(entry.actor_label === null ? {} : { label: entry.actor_label }),
    },
    ...(entry.target_type === null || entry.target_id === null
      ? {}
      : { target: { type: entry.target_type, id: entry.target_id } }),
    details: entry.details,
    ...(entry.ip === null ? {} : { ip: entry.ip }),
    ...(entry.user_agent === null ? {} : { userAgent: entry.user_agent }),
    createdAt: entry.created_at.toISOString(),
  };
}
