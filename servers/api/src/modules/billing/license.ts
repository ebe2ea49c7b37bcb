import { type KeyObject, sign, verify } from 'node:crypto';
import { z } from 'zod';
import { shippedLicensePublicKey } from './license-key.ts';
import { type PlanLimits, type PlanName, planLimits, planLimitsSchema, planNameSchema } from './plans.ts';

// A deployment's license (servers/api/README.md, Billing, The license): one line of text,
//
//   svc-license-v1.<payload>.<signature>
//
// `<payload>` is the base64url (no padding) of the license's JSON (`licensePayloadSchema`),
// `<signature>` the base64url of the Ed25519 signature of the ASCII bytes `svc-license-v1.<payload>`
// (the prefix is signed too, so a signature never verifies a document of another format). Only the
// public key is in the server; whoever holds the private key issues licenses.

const LICENSE_PREFIX = 'svc-license-v1';

/** Days a license keeps its plan after it expired, with a warning, before the free plan applies. */
export const LICENSE_GRACE_DAYS = 14;

/** The longest license text read (a license is a few hundred bytes). */
export const MAX_LICENSE_LENGTH = 16 * 1024;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** What a license says: who it is for, the plan, its limits (the plan's when absent), its dates. */
export const licensePayloadSchema = z
  .strictObject({
    /** `lic_` and letters or digits. */
    id: z.string().regex(/^lic_[0-9A-Za-z]{1,64}$/, 'lic_ and up to 64 letters or digits'),
    /** The licensee, as shown to operators. */
    organization: z.string().trim().min(1).max(200),
    plan: planNameSchema,
    /** Limits negotiated for this license; absent: the plan's. */
    limits: planLimitsSchema.optional(),
    issuedAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .refine((payload) => Date.parse(payload.issuedAt) < Date.parse(payload.expiresAt), {
    message: 'expiresAt must be after issuedAt',
  });

export type LicensePayload = z.infer<typeof licensePayloadSchema>;

/** The outcome of checking a license's signature and shape (not its dates). */
export type LicenseVerification =
  | { ok: true; license: LicensePayload }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'invalid_payload'; message: string };

/**
 * Signs a license: the text to give a licensee (and to `svc license install`). Kept beside the
 * verifier so the format has one definition; the server itself never holds a private key.
 *
 * @example
 * ```ts
 * const { privateKey, publicKey } = generateKeyPairSync('ed25519');
 * const text = signLicense({ id: 'lic_1', organization: 'Acme', plan: 'team',
 *   issuedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2027-01-01T00:00:00.000Z' }, privateKey);
 * verifyLicense(text, { publicKey }).ok; // true
 * ```
 */
export function signLicense(payload: LicensePayload, privateKey: KeyObject): string {
  const body = `${LICENSE_PREFIX}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${body}.${sign(null, Buffer.from(body, 'ascii'), privateKey).toString('base64url')}`;
}

/** The bytes of a base64url part, or undefined unless it is canonical base64url. */
function decodePart(part: string): Buffer | undefined {
  if (!BASE64URL.test(part)) return undefined;
  const bytes = Buffer.from(part, 'base64url');
  return bytes.toString('base64url') === part ? bytes : undefined;
}

/**
 * Checks a license's signature with the public key (the one the server ships with unless
 * `publicKey` is given), then its payload. Dates are not judged here: see {@link judgeLicense}.
 * Never throws for a bad document: the reason is in the result.
 *
 * @example
 * ```ts
 * const checked = verifyLicense(text);
 * if (!checked.ok) log.warn(checked.message);
 * ```
 */
export function verifyLicense(text: string, options: { publicKey?: KeyObject } = {}): LicenseVerification {
  const trimmed = text.trim();
  if (trimmed.length > MAX_LICENSE_LENGTH)
    return {
      ok: false,
      reason: 'malformed',
      message: `A license is at most ${MAX_LICENSE_LENGTH} characters`,
    };
  const parts = trimmed.split('.');
  if (parts.length !== 3 || parts[0] !== LICENSE_PREFIX)
    return {
      ok: false,
      reason: 'malformed',
      message: `Not a license: expected ${LICENSE_PREFIX}.<payload>.<signature>`,
    };
  const [, payloadPart = '', signaturePart = ''] = parts;
  const payloadBytes = decodePart(payloadPart);
  const signature = decodePart(signaturePart);
  if (payloadBytes === undefined || signature === undefined || signature.length !== 64)
    return { ok: false, reason: 'malformed', message: 'Not a license: its parts are not base64url' };
  const signed = Buffer.from(`${LICENSE_PREFIX}.${payloadPart}`, 'ascii');
  let authentic = false;
  try {
    authentic = verify(null, signed, options.publicKey ?? shippedLicensePublicKey(), signature);
  } catch {
    authentic = false;
  }
  if (!authentic)
    return {
      ok: false,
      reason: 'bad_signature',
      message: 'The license signature does not verify: it was altered or not issued for this product',
    };
  let json: unknown;
  try {
    json = JSON.parse(payloadBytes.toString('utf8'));
  } catch {
    return { ok: false, reason: 'invalid_payload', message: 'The license payload is not JSON' };
  }
  const parsed = licensePayloadSchema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      reason: 'invalid_payload',
      message: `The license payload is not valid: ${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || 'payload'}: ${issue.message}`)
        .join('; ')}`,
    };
  return { ok: true, license: parsed.data };
}

/** Where a deployment stands with its license. */
export interface LicenseStanding {
  /**
   * `valid`; `grace` (expired less than {@link LICENSE_GRACE_DAYS} days ago: its plan still
   * applies, with a warning); `expired` (after the grace: the free plan); `invalid` (forged,
   * altered, not for this product: the free plan); `missing` (none installed: the free plan).
   */
  status: 'valid' | 'grace' | 'expired' | 'invalid' | 'missing';
  /** The plan in force for the deployment. */
  plan: PlanName;
  limits: PlanLimits;
  /** The license's content, when its signature verified. */
  license?: LicensePayload & { graceEndsAt: string };
  /** Why the free plan applies, or that it soon will; absent when all is well. */
  warning?: string;
}

/**
 * Judges an installed license at `now`: its plan and limits while valid and during the grace
 * period after expiry, the free plan's otherwise (with a warning saying why). Never throws.
 *
 * @example
 * ```ts
 * const standing = judgeLicense(installedText, { now: new Date() });
 * if (standing.warning !== undefined) log.warn(standing.warning);
 * ```
 */
export function judgeLicense(
  text: string | undefined,
  options: { publicKey?: KeyObject; now?: Date } = {},
): LicenseStanding {
  const free = { plan: 'free' as const, limits: planLimits('free') };
  if (text === undefined) return { status: 'missing', ...free };
  const checked = verifyLicense(text, options);
  if (!checked.ok)
    return {
      status: 'invalid',
      ...free,
      warning: `The installed license is not valid (${checked.message}); the free plan's limits apply. Install a valid license with svc license install <file>.`,
    };
  const { license } = checked;
  const now = (options.now ?? new Date()).getTime();
  const expiresAt = Date.parse(license.expiresAt);
  const graceEndsAt = expiresAt + LICENSE_GRACE_DAYS * 86_400_000;
  const content = { ...license, graceEndsAt: new Date(graceEndsAt).toISOString() };
  const licensed = { plan: license.plan, limits: license.limits ?? planLimits(license.plan) };
  if (now < expiresAt) return { status: 'valid', ...licensed, license: content };
  if (now < graceEndsAt)
    return {
      status: 'grace',
      ...licensed,
      license: content,
      warning: `The license ${license.id} expired on ${license.expiresAt}; its ${license.plan} plan applies until ${content.graceEndsAt}, then the free plan's limits. Install a renewed license with svc license install <file>.`,
    };
  return {
    status: 'expired',
    ...free,
    license: content,
    warning: `The license ${license.id} expired on ${license.expiresAt} and its grace period ended on ${content.graceEndsAt}; the free plan's limits apply. Install a renewed license with svc license install <file>.`,
  };
}
