import type { KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import {
  judgeLicense,
  type LicensePayload,
  type LicenseStanding,
  MAX_LICENSE_LENGTH,
  verifyLicense,
} from './license.ts';

// The deployment's license lives in the database (`deployment_license`), not in the data
// directory: every server process on one PostgreSQL reads the same license, and the embedded
// store keeps it with the rest of the data (backed up and moved together).

type Executor = Kysely<Database> | Transaction<Database>;

/** How a license is checked: the public key (default: the shipped one) and the time. */
export interface LicenseOptions {
  publicKey?: KeyObject;
  now?: Date;
}

/** The deployment's license standing, with when it was installed. */
export type DeploymentLicense = LicenseStanding & { installedAt?: string };

/**
 * The deployment's license as installed, judged now: its plan while valid (and during the grace
 * period after expiry), the free plan otherwise, with a warning saying why.
 *
 * @example
 * ```ts
 * const { plan, limits, warning } = await deploymentLicense(database);
 * ```
 */
export async function deploymentLicense(
  database: Executor,
  options: LicenseOptions = {},
): Promise<DeploymentLicense> {
  const row = await database
    .selectFrom('deployment_license')
    .select(['document', 'installed_at'])
    .where('slot', '=', 'current')
    .executeTakeFirst();
  if (row === undefined) return judgeLicense(undefined, options);
  return { ...judgeLicense(row.document, options), installedAt: new Date(row.installed_at).toISOString() };
}

/** A license file read and checked by {@link checkLicenseFile}. */
export type CheckedLicenseFile =
  | { ok: true; text: string; license: LicensePayload; standing: LicenseStanding }
  | { ok: false; problem: string };

/**
 * Reads a license file (at most {@link MAX_LICENSE_LENGTH} bytes) and checks it: its signature,
 * its payload, and that it has not expired. Touches no database, so a bad file is refused before
 * the store is opened.
 *
 * @example
 * ```ts
 * const checked = await checkLicenseFile('/etc/svc/license.txt');
 * if (checked.ok) await storeLicense(database, checked, 'svc license install');
 * ```
 */
export async function checkLicenseFile(
  path: string,
  options: LicenseOptions = {},
): Promise<CheckedLicenseFile> {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > MAX_LICENSE_LENGTH)
      return { ok: false, problem: `${path} is ${size} bytes: a license is at most ${MAX_LICENSE_LENGTH}` };
    text = (await readFile(path, 'utf8')).trim();
  } catch (error) {
    return { ok: false, problem: `Cannot read ${path}: ${(error as Error).message}` };
  }
  const checked = verifyLicense(text, options);
  if (!checked.ok) return { ok: false, problem: `Not installed: ${checked.message}` };
  const standing = judgeLicense(text, options);
  if (standing.status !== 'valid')
    return {
      ok: false,
      problem: `Not installed: the license ${checked.license.id} expired on ${checked.license.expiresAt}`,
    };
  return { ok: true, text, license: checked.license, standing };
}

/**
 * Stores a checked license as the deployment's license, replacing the one before.
 *
 * @example
 * ```ts
 * await storeLicense(database, checked, 'svc license install');
 * ```
 */
export async function storeLicense(
  database: Executor,
  checked: { text: string; license: LicensePayload },
  installedBy: string,
): Promise<void> {
  const { text, license } = checked;
  await database
    .insertInto('deployment_license')
    .values({ license_id: license.id, document: text, installed_by: installedBy })
    .onConflict((conflict) =>
      conflict.column('slot').doUpdateSet({
        license_id: license.id,
        document: text,
        installed_by: installedBy,
        installed_at: sql`now()`,
      }),
    )
    .execute();
}
