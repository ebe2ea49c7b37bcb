import { createHash } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import type { SsoConnection } from '../../platform/database/tables/sso.table.ts';
import { createId } from '../../platform/ids.ts';

// Organization SSO's storage: connections (scoped by organization), the identities a connection's
// subjects are, the OpenID sign-ins under way, and the verified domain an address belongs to.

type Executor = Kysely<Database> | Transaction<Database>;

/** The roles SSO may give: never owner. */
export type SsoRole = 'admin' | 'member' | 'viewer';

/** The organization's connections, oldest first. */
export function listConnections(database: Executor, organizationId: string): Promise<SsoConnection[]> {
  return database
    .selectFrom('sso_connections')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** One connection of the organization. */
export function findConnection(
  database: Executor,
  organizationId: string,
  connectionId: string,
): Promise<SsoConnection | undefined> {
  return database
    .selectFrom('sso_connections')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', connectionId)
    .executeTakeFirst();
}

/** A connection by its id alone (the public `/auth/sso/{connectionId}/…` routes). */
export function findConnectionById(
  database: Executor,
  connectionId: string,
): Promise<SsoConnection | undefined> {
  return database.selectFrom('sso_connections').selectAll().where('id', '=', connectionId).executeTakeFirst();
}

/** What a new connection holds (the client secret already sealed). */
export interface ConnectionValues {
  id: string;
  organizationId: string;
  type: 'saml' | 'oidc';
  name: string;
  defaultRole: SsoRole;
  enabled: boolean;
  saml?: { entityId: string; ssoUrl: string; certificates: string[] };
  oidc?: { issuer: string; clientId: string; clientSecretSealed: Uint8Array };
}

export function insertConnection(database: Executor, values: ConnectionValues): Promise<SsoConnection> {
  return database
    .insertInto('sso_connections')
    .values({
      id: values.id,
      organization_id: values.organizationId,
      type: values.type,
      name: values.name,
      default_role: values.defaultRole,
      enabled: values.enabled,
      saml_idp_entity_id: values.saml?.entityId ?? null,
      saml_sso_url: values.saml?.ssoUrl ?? null,
      saml_certificates: JSON.stringify(values.saml?.certificates ?? []) as unknown as string[],
      oidc_issuer: values.oidc?.issuer ?? null,
      oidc_client_id: values.oidc?.clientId ?? null,
      oidc_client_secret_sealed: values.oidc?.clientSecretSealed ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A change to a connection; only the fields given change. */
export interface ConnectionChange {
  name?: string;
  defaultRole?: SsoRole;
  enabled?: boolean;
  saml?: { entityId: string; ssoUrl: string; certificates: string[] };
  oidcIssuer?: string;
  oidcClientId?: string;
  oidcClientSecretSealed?: Uint8Array;
}

/** Changes the organization's connection; undefined when it has none by that id. */
export function updateConnection(
  database: Executor,
  organizationId: string,
  connectionId: string,
  change: ConnectionChange,
  now: Date,
): Promise<SsoConnection | undefined> {
  return database
    .updateTable('sso_connections')
    .set({
      updated_at: now,
      ...(change.name === undefined ? {} : { name: change.name }),
      ...(change.defaultRole === undefined ? {} : { default_role: change.defaultRole }),
      ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
      ...(change.saml === undefined
        ? {}
        : {
            saml_idp_entity_id: change.saml.entityId,
            saml_sso_url: change.saml.ssoUrl,
            saml_certificates: JSON.stringify(change.saml.certificates) as unknown as string[],
          }),
      ...(change.oidcIssuer === undefined ? {} : { oidc_issuer: change.oidcIssuer }),
      ...(change.oidcClientId === undefined ? {} : { oidc_client_id: change.oidcClientId }),
      ...(change.oidcClientSecretSealed === undefined
        ? {}
        : { oidc_client_secret_sealed: change.oidcClientSecretSealed }),
    })
    .where('organization_id', '=', organizationId)
    .where('id', '=', connectionId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteConnection(
  database: Executor,
  organizationId: string,
  connectionId: string,
): Promise<SsoConnection | undefined> {
  return database
    .deleteFrom('sso_connections')
    .where('organization_id', '=', organizationId)
    .where('id', '=', connectionId)
    .returningAll()
    .executeTakeFirst();
}

/** How many of the organization's connections are enabled (optionally leaving one out). */
export async function enabledConnectionCount(
  database: Executor,
  organizationId: string,
  except?: string,
): Promise<number> {
  let query = database
    .selectFrom('sso_connections')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('organization_id', '=', organizationId)
    .where('enabled', '=', true);
  if (except !== undefined) query = query.where('id', '<>', except);
  const row = await query.executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Whether the organization requires SSO of its verified domains' people. */
export async function ssoRequired(database: Executor, organizationId: string): Promise<boolean> {
  const row = await database
    .selectFrom('organizations')
    .select('sso_required')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  return row?.sso_required === true;
}

export async function setSsoRequired(
  database: Executor,
  organizationId: string,
  required: boolean,
  now: Date,
): Promise<void> {
  await database
    .updateTable('organizations')
    .set({ sso_required: required, updated_at: now })
    .where('id', '=', organizationId)
    .execute();
}

/** The domain of an e-mail address, lower case (`ada@Example.com` → `example.com`). */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** The organization that verified the domain (one at most: the unique index), with its setting. */
export async function verifiedDomainOwner(
  database: Executor,
  domain: string,
): Promise<{ organizationId: string; ssoRequired: boolean } | undefined> {
  const row = await database
    .selectFrom('sso_domains')
    .innerJoin('organizations', 'organizations.id', 'sso_domains.organization_id')
    .select(['sso_domains.organization_id', 'organizations.sso_required'])
    .where('sso_domains.domain', '=', domain)
    .where('sso_domains.verified_at', 'is not', null)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { organizationId: row.organization_id, ssoRequired: row.sso_required };
}

/** The first enabled connection of the organization (oldest), the one that serves its domains. */
export function firstEnabledConnection(
  database: Executor,
  organizationId: string,
): Promise<SsoConnection | undefined> {
  return database
    .selectFrom('sso_connections')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('enabled', '=', true)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** The person's role in the organization, a break-glass grant in force included; undefined: none. */
export async function roleIn(
  database: Executor,
  organizationId: string,
  userId: string,
  now = new Date(),
): Promise<string | undefined> {
  const row = await database
    .selectFrom('organization_members')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row?.role;
}

/**
 * Makes the person a member with `role` unless they are one for good; an expired or running
 * break-glass grant becomes a membership. Whether they joined.
 */
export async function joinOrganization(
  transaction: Transaction<Database>,
  organizationId: string,
  userId: string,
  role: SsoRole,
  now: Date,
): Promise<boolean> {
  const values = { role, expires_at: null, break_glass_reason: null, updated_at: now };
  const written = await transaction
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: userId, ...values })
    .onConflict((conflict) =>
      conflict
        .columns(['organization_id', 'user_id'])
        .doUpdateSet(values)
        .where('organization_members.expires_at', 'is not', null),
    )
    .returning('user_id')
    .executeTakeFirst();
  return written !== undefined;
}

/** The user a connection's subject is, if known; its last sign-in is now. */
export async function useIdentity(
  database: Executor,
  connectionId: string,
  subject: string,
  now: Date,
): Promise<string | undefined> {
  const row = await database
    .updateTable('sso_identities')
    .set({ last_signed_in_at: now })
    .where('connection_id', '=', connectionId)
    .where('subject', '=', subject)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** Links the subject to the user (a race with another sign-in keeps the first link). The user linked. */
export async function linkIdentity(
  database: Executor,
  connection: Pick<SsoConnection, 'id' | 'organization_id'>,
  subject: string,
  userId: string,
): Promise<string> {
  await database
    .insertInto('sso_identities')
    .values({
      id: createId('idn'),
      connection_id: connection.id,
      organization_id: connection.organization_id,
      subject,
      user_id: userId,
    })
    .onConflict((conflict) => conflict.columns(['connection_id', 'subject']).doNothing())
    .execute();
  const row = await database
    .selectFrom('sso_identities')
    .select('user_id')
    .where('connection_id', '=', connection.id)
    .where('subject', '=', subject)
    .executeTakeFirstOrThrow();
  return row.user_id;
}

/** How long an OpenID sign-in may take between `/start` and `/callback`. */
export const OIDC_FLOW_LIFETIME_MS = 10 * 60_000;

/** The flow's id: the SHA-256 of the browser's flow cookie. */
function flowId(browserSecret: string): Uint8Array {
  return createHash('sha256').update(browserSecret, 'utf8').digest();
}

export async function insertOidcFlow(
  database: Executor,
  flow: { browserSecret: string; connectionId: string; state: string; nonce: string; now: Date },
): Promise<void> {
  // Flows never finished are dropped as new ones start.
  await database.deleteFrom('sso_oidc_flows').where('expires_at', '<', flow.now).execute();
  await database
    .insertInto('sso_oidc_flows')
    .values({
      id: flowId(flow.browserSecret),
      connection_id: flow.connectionId,
      state: flow.state,
      nonce: flow.nonce,
      expires_at: new Date(flow.now.getTime() + OIDC_FLOW_LIFETIME_MS),
    })
    .execute();
}

/** Takes (deletes) the browser's flow for the connection: once, and only while it lasts. */
export async function takeOidcFlow(
  database: Executor,
  browserSecret: string,
  connectionId: string,
  now: Date,
): Promise<{ state: string; nonce: string } | undefined> {
  const row = await database
    .deleteFrom('sso_oidc_flows')
    .where('id', '=', flowId(browserSecret))
    .where('connection_id', '=', connectionId)
    .returning(['state', 'nonce', 'expires_at'])
    .executeTakeFirst();
  if (row === undefined || row.expires_at <= now) return undefined;
  return { state: row.state, nonce: row.nonce };
}

/** Whether the organization has verified this domain. */
export async function organizationVerified(
  database: Executor,
  organizationId: string,
  domain: string,
): Promise<boolean> {
  const row = await database
    .selectFrom('sso_domains')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('domain', '=', domain)
    .where(sql<boolean>`verified_at is not null`)
    .executeTakeFirst();
  return row !== undefined;
}
