import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type AuditOrigin, recordAudit } from '../../platform/audit.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { User } from '../../platform/database/tables/accounts.table.ts';
import type { OrganizationInvitation } from '../../platform/database/tables/organizations.table.ts';
import type { SsoConnection } from '../../platform/database/tables/sso.table.ts';
import { findUserByEmail, findUserById, hashPassword, insertUser } from '../accounts/index.ts';
import {
  liveInvitationOf,
  lockOrganization,
  type SeatAndProjectLimits,
  seatsTaken,
  takeInvitation,
} from '../orgs/index.ts';
import {
  domainOf,
  joinOrganization,
  linkIdentity,
  organizationVerified,
  roleIn,
  useIdentity,
} from './repository.ts';

/** Who the IdP says signed in (an ID token's claims, a SAML assertion). */
export interface AssertedPerson {
  /** OIDC `sub`, SAML NameID. */
  subject: string;
  email?: string | undefined;
  /** OIDC `email_verified`: false refuses a new link by address. */
  emailVerified?: boolean | undefined;
  name?: string | undefined;
}

/** Why an SSO sign-in is refused: the audit trail's `reason` and a message for it. */
export interface SsoRefusal {
  reason: string;
  message: string;
}

/**
 * Records a refused SSO sign-in in the connection's organization's audit trail
 * (`sso.sign_in_refused`, actor `sso`): which connection, why, and what the IdP asserted.
 */
export async function auditRefusal(
  database: Kysely<Database>,
  connection: Pick<SsoConnection, 'id' | 'organization_id' | 'type'>,
  origin: AuditOrigin,
  refusal: SsoRefusal,
): Promise<void> {
  await recordAudit(database, connection.organization_id, { type: 'system', label: 'sso' }, origin, {
    action: 'sso.sign_in_refused',
    target: { type: 'sso_connection', id: connection.id },
    details: { type: connection.type, reason: refusal.reason, message: refusal.message.slice(0, 500) },
  });
}

/**
 * The person an SSO sign-in is for, made a member of the connection's organization:
 * 1. the person linked to the connection's subject; else
 * 2. the account of the asserted address, only when its domain is one the organization verified
 *    (an IdP must not assert addresses its organization does not own), linked from now on; or a
 *    new account for it (verified: the organization vouches for its domain);
 * then just-in-time membership for someone who is no member (audited `sso.member_joined`): with
 * the role of their live invitation to the organization, if any (taking it, on the seat it holds),
 * else with the connection's default role. Refuses (`{ refusal }`, nothing written) without a usable
 * address, for another domain, or when the plan has no seat left.
 */
export async function resolveSsoPerson(
  database: Kysely<Database>,
  connection: SsoConnection,
  asserted: AssertedPerson,
  origin: AuditOrigin,
  seatLimits: (organizationId: string) => Promise<SeatAndProjectLimits>,
  now = new Date(),
): Promise<{ user: User } | { refusal: SsoRefusal }> {
  const organizationId = connection.organization_id;
  let user: User | undefined;
  const linkedId = await useIdentity(database, connection.id, asserted.subject, now);
  if (linkedId !== undefined) user = await findUserById(database, linkedId);
  /** The account to make for a new person (its unusable password hashed before the transaction). */
  let newAccount: { email: string; name: string | undefined; passwordHash: string } | undefined;
  // The subject is linked to the person found (or made) by the asserted address.
  const link = user === undefined;
  if (user === undefined) {
    const email = asserted.email?.trim().toLowerCase();
    if (email === undefined || !/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 254)
      return { refusal: { reason: 'no_email', message: 'The identity provider sent no e-mail address' } };
    if (asserted.emailVerified === false)
      return {
        refusal: {
          reason: 'email_unverified',
          message: `The identity provider says ${email} is not verified`,
        },
      };
    if (!(await organizationVerified(database, organizationId, domainOf(email))))
      return {
        refusal: {
          reason: 'domain',
          message: `${email} is not in a domain the organization verified: the identity provider may not assert it`,
        },
      };
    user = await findUserByEmail(database, email);
    if (user === undefined)
      newAccount = {
        email,
        name: asserted.name?.slice(0, 200),
        // SSO is its way in; a password can be set later through a reset.
        passwordHash: await hashPassword(randomBytes(32).toString('base64url')),
      };
  }
  const limits = await seatLimits(organizationId);
  const outcome = await database
    .transaction()
    .execute(async (transaction): Promise<{ user: User } | { refusal: SsoRefusal }> => {
      let person = user;
      const member =
        person !== undefined && (await roleIn(transaction, organizationId, person.id, now)) !== undefined;
      let invitation: OrganizationInvitation | undefined;
      if (!member) {
        await lockOrganization(transaction, organizationId);
        // Someone invited joins with the invitation's role, on the seat it already holds.
        const email = person?.email ?? newAccount?.email;
        if (email !== undefined) invitation = await liveInvitationOf(transaction, organizationId, email, now);
        // Checked before a new account is made: a person refused for seats leaves nothing behind.
        if (
          invitation === undefined &&
          limits.seats !== null &&
          (await seatsTaken(transaction, organizationId, now)) >= limits.seats
        )
          return {
            refusal: {
              reason: 'seats',
              message: `The organization's plan allows ${limits.seats} seats: ${person?.email ?? newAccount?.email} cannot join`,
            },
          };
      }
      if (person === undefined && newAccount !== undefined) {
        const inserted = await insertUser(transaction, { ...newAccount, emailVerified: true });
        // A concurrent sign-in made it a moment ago: use that one.
        person = inserted ?? (await findUserByEmail(transaction, newAccount.email));
      }
      if (person === undefined)
        return {
          refusal: { reason: 'account', message: `No account for ${newAccount?.email ?? asserted.subject}` },
        };
      if (link) await linkIdentity(transaction, connection, asserted.subject, person.id);
      if (member) return { user: person };
      const invited =
        invitation !== undefined && (await takeInvitation(transaction, invitation, person.id, now));
      const role = invited && invitation !== undefined ? invitation.role : connection.default_role;
      const joined = invited || (await joinOrganization(transaction, organizationId, person.id, role, now));
      if (joined)
        await recordAudit(transaction, organizationId, { type: 'user', id: person.id }, origin, {
          action: 'sso.member_joined',
          target: { type: 'user', id: person.id },
          details: {
            connectionId: connection.id,
            role,
            ...(invited && invitation !== undefined ? { invitationId: invitation.id } : {}),
          },
        });
      return { user: person };
    });
  return outcome;
}
