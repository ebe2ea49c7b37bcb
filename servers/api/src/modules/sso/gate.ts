import type { Kysely } from 'kysely';
import { recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { User } from '../../platform/database/tables/accounts.table.ts';
import { forbidden } from '../../platform/http/errors.ts';
import type { SignInGate, SignInMethod } from '../accounts/index.ts';
import {
  liveInvitationOf,
  lockOrganization,
  type SeatAndProjectLimits,
  seatsTaken,
  takeInvitation,
} from '../orgs/index.ts';
import {
  domainOf,
  firstEnabledConnection,
  joinOrganization,
  roleIn,
  type SsoRole,
  verifiedDomainOwner,
} from './repository.ts';

/**
 * The sign-in gate of organization SSO (servers/api/README.md, Organization SSO), asked before
 * every session starts:
 * - **Require SSO.** A person whose address is in a domain verified by an organization that
 *   requires SSO signs in through SSO only: any other way in (password, its MFA step, magic
 *   link, invitation, OAuth, passkey) is refused with 403, except for that organization's owners
 *   (their way in when the IdP is down or misconfigured).
 * - **Auto-join.** A person with a verified address in a domain an organization verified, who is
 *   not its member, joins it with the role of their live invitation to it (taken), else the
 *   default role of its first enabled connection (`member` without one), audited `member.joined`
 *   (`via: verified_domain`); skipped silently when the plan has no seat left. With `checkOnly` (the password step before the second factor) nothing
 *   is joined.
 */
export function createSsoSignInGate(
  database: Kysely<Database>,
  seatLimits: (organizationId: string) => Promise<SeatAndProjectLimits>,
): SignInGate {
  return async (user: User, method: SignInMethod, options?: { checkOnly?: boolean }) => {
    const owner = await verifiedDomainOwner(database, domainOf(user.email));
    if (owner === undefined) return;
    const role = await roleIn(database, owner.organizationId, user.id);
    if (owner.ssoRequired && method !== 'sso' && role !== 'owner')
      throw forbidden(
        'Your organization requires single sign-on (SSO) for your address: use "Sign in with SSO"',
      );
    if (options?.checkOnly === true || role !== undefined || user.email_verified_at === null) return;
    await autoJoin(database, owner.organizationId, user, seatLimits);
  };
}

async function autoJoin(
  database: Kysely<Database>,
  organizationId: string,
  user: User,
  seatLimits: (organizationId: string) => Promise<SeatAndProjectLimits>,
): Promise<void> {
  const limits = await seatLimits(organizationId);
  await database.transaction().execute(async (transaction) => {
    await lockOrganization(transaction, organizationId);
    const now = new Date();
    // Someone invited joins with the invitation's role, on the seat it already holds.
    const invitation = await liveInvitationOf(transaction, organizationId, user.email, now);
    const invited = invitation !== undefined && (await takeInvitation(transaction, invitation, user.id, now));
    let role: SsoRole;
    let joined: boolean;
    if (invited) {
      role = invitation.role;
      joined = true;
    } else {
      if (limits.seats !== null && (await seatsTaken(transaction, organizationId)) >= limits.seats) return;
      const connection = await firstEnabledConnection(transaction, organizationId);
      role = connection?.default_role ?? 'member';
      joined = await joinOrganization(transaction, organizationId, user.id, role, now);
    }
    if (!joined) return;
    await recordAudit(
      transaction,
      organizationId,
      { type: 'user', id: user.id },
      { ip: null, userAgent: null },
      {
        action: 'member.joined',
        target: { type: 'user', id: user.id },
        details: {
          role,
          via: 'verified_domain',
          domain: domainOf(user.email),
          ...(invited ? { invitationId: invitation.id } : {}),
        },
      },
    );
  });
}
