import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

export interface OrganizationsTable {
  id: string;
  name: string;
  /** The people of its verified domains sign in through its SSO only (owners keep their other ways in). */
  sso_required: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export type Organization = Selectable<OrganizationsTable>;

/** A person's role in an organization: what they may do there (servers/api/README.md, Roles). */
export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  role: Role;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  /** Break-glass access ends then (`svc break-glass`); null: a member for good. */
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Why break-glass access was granted. */
  break_glass_reason: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An invitation by e-mail to join an organization with a role (never as owner). */
export interface OrganizationInvitationsTable {
  id: string;
  organization_id: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  token_hash: Uint8Array;
  invited_by: string | null;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: string | null;
  revoked_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type OrganizationInvitation = Selectable<OrganizationInvitationsTable>;

/** One security-relevant action in an organization. */
export interface AuditLogTable {
  id: string;
  organization_id: string;
  actor_type: 'user' | 'api_token' | 'system';
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export type AuditEntry = Selectable<AuditLogTable>;
