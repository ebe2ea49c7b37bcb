import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { type AuditActor, type AuditOrigin, recordAudit } from '../../platform/audit.ts';
import { isUniqueViolation } from '../../platform/database/errors.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { SsoDomain } from '../../platform/database/tables/sso.table.ts';
import { invalid, notFound } from '../../platform/http/errors.ts';
import { createId } from '../../platform/ids.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';

// Verified domains (issue 26; servers/api/README.md, Verified domains): an organization claims a
// domain, publishes a TXT record with the token it is given, and a DNS lookup verifies it. Several
// organizations may claim a domain; one may have it verified (the partial unique index on
// sso_domains). Verified domains are looked up again daily and lose their verification when the
// record is gone.

type Executor = Kysely<Database> | Transaction<Database>;

/** The label the TXT record is published under, before the domain. */
const VERIFICATION_LABEL = '_svc-verification';
/** The prefix of the TXT record's value. */
const VERIFICATION_PREFIX = 'svc-verification=';
/** How often a verified domain's record is looked up again. */
const RECHECK_EVERY_MS = 24 * 60 * 60 * 1000;

/** Looks up TXT records (node:dns's `Resolver.resolveTxt`: each record as its strings). */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}

/**
 * A resolver asking `servers` (`1.2.3.4`, `1.2.3.4:53`, `[::1]:53`), or the system's, with a
 * short timeout: a lookup gives up after about 4 s.
 */
export function createTxtResolver(servers?: readonly string[]): TxtResolver {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers !== undefined && servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

/**
 * Suffixes under which anyone may register names: claiming one alone would claim everyone's.
 * Not the whole public suffix list; the common ones and single labels (`com`) are refused.
 */
const PUBLIC_SUFFIXES = new Set([
  'co.uk',
  'org.uk',
  'ac.uk',
  'gov.uk',
  'me.uk',
  'ltd.uk',
  'plc.uk',
  'com.au',
  'net.au',
  'org.au',
  'edu.au',
  'gov.au',
  'co.nz',
  'org.nz',
  'co.jp',
  'ne.jp',
  'or.jp',
  'co.kr',
  'com.br',
  'com.cn',
  'com.mx',
  'com.tr',
  'com.tw',
  'com.sg',
  'com.hk',
  'co.in',
  'co.za',
  'co.il',
  'eu.org',
  'github.io',
  'gitlab.io',
  'pages.dev',
  'vercel.app',
  'netlify.app',
  'herokuapp.com',
  'appspot.com',
  'blogspot.com',
  'cloudfront.net',
  'azurewebsites.net',
  'amazonaws.com',
]);

/**
 * `text` as a domain: trimmed, lower case, without a trailing dot, internationalized names in
 * their ASCII (punycode) form. Throws `invalid` (400) for what is not a registrable-looking domain
 * name: an IP address, a single label, a public suffix alone, bad labels.
 */
export function normalizeDomain(text: string): string {
  const trimmed = text.trim().toLowerCase().replace(/\.$/, '');
  if (trimmed === '' || trimmed.length > 253)
    throw invalid('domain: give a domain name, such as example.com');
  if (isIP(trimmed) !== 0 || isIP(trimmed.replace(/^\[|\]$/g, '')) !== 0) {
    throw invalid('domain: an IP address cannot be claimed, give a domain name');
  }
  if (/[/:@\s]/.test(trimmed))
    throw invalid('domain: give the domain name alone (example.com), not a URL or address');
  const ascii = domainToASCII(trimmed);
  if (ascii === '' || ascii.length > 253) throw invalid(`domain: ${trimmed} is not a valid domain name`);
  const labels = ascii.split('.');
  if (labels.length < 2) throw invalid(`domain: ${ascii} is a top-level domain; claim a domain under it`);
  for (const label of labels) {
    if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label)) {
      throw invalid(`domain: ${ascii} is not a valid domain name (label "${label}")`);
    }
  }
  const tld = labels[labels.length - 1] ?? '';
  if (!/^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(tld)) {
    throw invalid(`domain: ${ascii} does not end in a top-level domain`);
  }
  if (PUBLIC_SUFFIXES.has(ascii))
    throw invalid(`domain: ${ascii} is a public suffix; claim a domain under it`);
  return ascii;
}

/** The TXT record that proves control of a claimed domain. */
export function txtRecordOf(row: Pick<SsoDomain, 'domain' | 'verification_token'>): {
  name: string;
  value: string;
} {
  return {
    name: `${VERIFICATION_LABEL}.${row.domain}`,
    value: `${VERIFICATION_PREFIX}${row.verification_token}`,
  };
}

/** The organization whose verified domain `domain` is (the domain of an e-mail address, say). */
export async function verifiedDomainOrganization(
  database: Executor,
  domain: string,
): Promise<{ organizationId: string; domainId: string } | undefined> {
  const row = await database
    .selectFrom('sso_domains')
    .select(['organization_id', 'id'])
    .where('domain', '=', domain.trim().toLowerCase().replace(/\.$/, ''))
    .where('verified_at', 'is not', null)
    .executeTakeFirst();
  return row === undefined ? undefined : { organizationId: row.organization_id, domainId: row.id };
}

/** The organization's claimed domains, verified or not, by domain name. */
export async function listDomains(database: Executor, organizationId: string): Promise<SsoDomain[]> {
  return database
    .selectFrom('sso_domains')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('domain')
    .orderBy('id')
    .execute();
}

async function findDomain(
  database: Executor,
  organizationId: string,
  domainId: string,
): Promise<SsoDomain | undefined> {
  return database
    .selectFrom('sso_domains')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', domainId)
    .executeTakeFirst();
}

/** Whom an action is audited as, and from where. */
export interface AuditContext {
  actor: AuditActor;
  origin: AuditOrigin;
}

/** Claims `domain` (normalized) for the organization: 409 when it already claimed it. Audited. */
export async function claimDomain(
  database: Kysely<Database>,
  organizationId: string,
  domain: string,
  audit: AuditContext,
): Promise<SsoDomain> {
  const name = normalizeDomain(domain);
  try {
    return await database.transaction().execute(async (transaction) => {
      const row = await transaction
        .insertInto('sso_domains')
        .values({
          id: createId('dom'),
          organization_id: organizationId,
          domain: name,
          verification_token: randomBytes(24).toString('base64url'),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAudit(transaction, organizationId, audit.actor, audit.origin, {
        action: 'domain.claimed',
        target: { type: 'domain', id: row.id },
        details: { domain: name },
      });
      return row;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw invalid(`${name} is already claimed by this organization`, 409);
    throw error;
  }
}

/** Removes a claimed domain (its verification with it). Audited; 404 when there is none. */
export async function removeDomain(
  database: Kysely<Database>,
  organizationId: string,
  domainId: string,
  audit: AuditContext,
): Promise<void> {
  await database.transaction().execute(async (transaction) => {
    const row = await transaction
      .deleteFrom('sso_domains')
      .where('organization_id', '=', organizationId)
      .where('id', '=', domainId)
      .returning(['id', 'domain', 'verified_at'])
      .executeTakeFirst();
    if (row === undefined) throw notFound(`No domain ${domainId}`);
    await recordAudit(transaction, organizationId, audit.actor, audit.origin, {
      action: 'domain.removed',
      target: { type: 'domain', id: row.id },
      details: { domain: row.domain, wasVerified: row.verified_at !== null },
    });
  });
}

/** What a lookup of a domain's TXT record found. */
type TxtLookup =
  | { found: true }
  /** Definitely not there: no such name, no TXT record, or TXT records without the value. */
  | { found: false; gone: true; detail: string }
  /** The lookup failed (timeout, server failure): nothing is known. */
  | { found: false; gone: false; detail: string };

const ABSENT_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/** Looks up the domain's TXT record and says whether it carries the expected value. */
async function lookUpVerification(
  resolver: TxtResolver,
  row: Pick<SsoDomain, 'domain' | 'verification_token'>,
): Promise<TxtLookup> {
  const { name, value } = txtRecordOf(row);
  let records: string[][];
  try {
    records = await resolver.resolveTxt(name);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && ABSENT_CODES.has(code)) {
      return { found: false, gone: true, detail: `no TXT record at ${name} (${code})` };
    }
    return {
      found: false,
      gone: false,
      detail: `the DNS lookup of ${name} failed: ${typeof code === 'string' ? code : String(error)}`,
    };
  }
  // A long TXT value may come in several strings; they are one value.
  const values = records.map((strings) => strings.join(''));
  if (values.some((found) => found.trim() === value)) return { found: true };
  const shown = values
    .slice(0, 5)
    .map((found) => JSON.stringify(found.slice(0, 100)))
    .join(', ');
  return {
    found: false,
    gone: true,
    detail:
      values.length === 0
        ? `no TXT record at ${name}`
        : `the TXT records at ${name} are ${shown}, not "${value}"`,
  };
}

/**
 * Looks the claimed domain's TXT record up now. Found: the domain is verified (409 when another
 * organization has it verified). Not found: 409 with what was found (a verified domain whose
 * record is gone loses its verification). Both are recorded on the row (`last_checked_at`,
 * `last_check_error`) and audited.
 */
export async function verifyDomain(
  database: Kysely<Database>,
  resolver: TxtResolver,
  organizationId: string,
  domainId: string,
  now: Date,
  audit: AuditContext,
): Promise<SsoDomain> {
  const row = await findDomain(database, organizationId, domainId);
  if (row === undefined) throw notFound(`No domain ${domainId}`);
  const lookup = await lookUpVerification(resolver, row);
  if (!lookup.found) {
    // A verified domain whose record is gone loses its verification, as at the daily re-check.
    const cleared = lookup.gone && row.verified_at !== null;
    await database.transaction().execute(async (transaction) => {
      await transaction
        .updateTable('sso_domains')
        .set({
          last_checked_at: now,
          last_check_error: lookup.detail,
          ...(cleared ? { verified_at: null } : {}),
        })
        .where('id', '=', row.id)
        .execute();
      await recordAudit(transaction, organizationId, audit.actor, audit.origin, {
        action: cleared ? 'domain.unverified' : 'domain.verification_failed',
        target: { type: 'domain', id: row.id },
        details: { domain: row.domain, found: lookup.detail },
      });
    });
    throw invalid(
      `${row.domain} is not verified: ${lookup.detail}. Publish a TXT record ${txtRecordOf(row).name} with the value "${txtRecordOf(row).value}" and verify again (DNS changes may take a few minutes)`,
      409,
    );
  }
  try {
    return await database.transaction().execute(async (transaction) => {
      const verified = await transaction
        .updateTable('sso_domains')
        .set({ verified_at: row.verified_at ?? now, last_checked_at: now, last_check_error: null })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirst();
      if (verified === undefined) throw notFound(`No domain ${domainId}`);
      await recordAudit(transaction, organizationId, audit.actor, audit.origin, {
        action: 'domain.verified',
        target: { type: 'domain', id: row.id },
        details: { domain: row.domain },
      });
      return verified;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      const detail = 'the domain is verified by another organization';
      await database.transaction().execute(async (transaction) => {
        await transaction
          .updateTable('sso_domains')
          .set({ last_checked_at: now, last_check_error: detail })
          .where('id', '=', row.id)
          .execute();
        await recordAudit(transaction, organizationId, audit.actor, audit.origin, {
          action: 'domain.verification_failed',
          target: { type: 'domain', id: row.id },
          details: { domain: row.domain, found: detail },
        });
      });
      throw invalid(`${row.domain} is verified by another organization; it cannot be verified by two`, 409);
    }
    throw error;
  }
}

/**
 * Looks up again the verified domains not checked for a day (at most `batch` of them): the
 * verification of one whose record is gone is cleared (audited as `domain.unverified`); a lookup
 * that fails (timeout) leaves it verified and notes the failure.
 */
export async function recheckDomains(
  database: Kysely<Database>,
  resolver: TxtResolver,
  now: Date,
  options: { batch?: number } = {},
): Promise<{ checked: number; unverified: number; more: boolean }> {
  const batch = options.batch ?? 50;
  const due = await database
    .selectFrom('sso_domains')
    .selectAll()
    .where('verified_at', 'is not', null)
    .where((where) =>
      where.or([
        where('last_checked_at', 'is', null),
        where('last_checked_at', '<=', new Date(now.getTime() - RECHECK_EVERY_MS)),
      ]),
    )
    .orderBy('last_checked_at')
    .orderBy('id')
    .limit(batch + 1)
    .execute();
  let unverified = 0;
  for (const row of due.slice(0, batch)) {
    const lookup = await lookUpVerification(resolver, row);
    await database.transaction().execute(async (transaction) => {
      const cleared = !lookup.found && lookup.gone;
      const updated = await transaction
        .updateTable('sso_domains')
        .set({
          last_checked_at: now,
          last_check_error: lookup.found ? null : lookup.detail,
          ...(cleared ? { verified_at: null } : {}),
        })
        .where('id', '=', row.id)
        .where('verified_at', 'is not', null)
        .returning('id')
        .executeTakeFirst();
      if (cleared && updated !== undefined) {
        unverified += 1;
        await recordAudit(
          transaction,
          row.organization_id,
          { type: 'system', label: 'domain re-check' },
          { ip: null, userAgent: null },
          {
            action: 'domain.unverified',
            target: { type: 'domain', id: row.id },
            details: { domain: row.domain, found: lookup.detail },
          },
        );
      }
    });
  }
  return { checked: Math.min(due.length, batch), unverified, more: due.length > batch };
}

/**
 * The daily re-check of verified domains on the polling loop (started with the retention worker,
 * `SVC_RETENTION_WORKER`). Any number of processes may run it: a domain checked twice is no harm.
 */
export function createDomainRecheckWorker(
  dependencies: {
    database: Kysely<Database>;
    resolver: TxtResolver;
    log: FastifyBaseLogger;
    now?: () => Date;
  },
  options: { pollMs?: number } = {},
): PollingLoop {
  const now = dependencies.now ?? (() => new Date());
  return createPollingLoop(
    async () => {
      const result = await recheckDomains(dependencies.database, dependencies.resolver, now());
      if (result.unverified > 0)
        dependencies.log.warn({ unverified: result.unverified }, 'verified domains lost their TXT record');
      return { ran: result.checked, more: result.more };
    },
    {
      pollMs: options.pollMs ?? 60 * 60 * 1000,
      onError: (error) => dependencies.log.error({ err: error }, 'could not re-check verified domains'),
    },
  );
}
