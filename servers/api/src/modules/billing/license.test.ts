import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  judgeLicense,
  LICENSE_GRACE_DAYS,
  type LicensePayload,
  signLicense,
  verifyLicense,
} from './license.ts';
import { shippedLicensePublicKey } from './license-key.ts';
import { planLimits } from './plans.ts';

// The license's format and its verdicts, with a key pair made here (the product's private key is
// not in the repository): valid, expired (within and after the grace period), forged, tampered,
// signed by another key, malformed.

const issuer = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const DAY = 86_400_000;

const payload: LicensePayload = {
  id: 'lic_01TEST',
  organization: 'Acme Calls GmbH',
  plan: 'business',
  issuedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2027-01-01T00:00:00.000Z',
};
const text = signLicense(payload, issuer.privateKey);
const options = { publicKey: issuer.publicKey };
const inForce = new Date('2026-06-01T00:00:00.000Z');

/** The text with its payload replaced by `changed`, keeping the original signature. */
function withPayload(changed: unknown): string {
  const [prefix, , signature] = text.split('.');
  return `${prefix}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`;
}

describe('license', () => {
  it('is svc-license-v1.<base64url payload>.<base64url Ed25519 signature>', () => {
    const [prefix, body, signature] = text.split('.');
    expect(prefix).toBe('svc-license-v1');
    expect(JSON.parse(Buffer.from(body as string, 'base64url').toString('utf8'))).toEqual(payload);
    expect(Buffer.from(signature as string, 'base64url')).toHaveLength(64);
  });

  it('verifies a license signed by the key it is checked with, with whitespace around it', () => {
    expect(verifyLicense(`\n${text}\n`, options)).toEqual({ ok: true, license: payload });
    const standing = judgeLicense(text, { ...options, now: inForce });
    expect(standing).toMatchObject({ status: 'valid', plan: 'business', limits: planLimits('business') });
    expect(standing.warning).toBeUndefined();
    expect(standing.license?.graceEndsAt).toBe(
      new Date(Date.parse(payload.expiresAt) + LICENSE_GRACE_DAYS * DAY).toISOString(),
    );
  });

  it("applies a license's own limits over its plan's", () => {
    const limits = { ...planLimits('enterprise'), seats: 400 };
    const custom = signLicense(
      { ...payload, id: 'lic_CUSTOM', plan: 'enterprise', limits },
      issuer.privateKey,
    );
    expect(judgeLicense(custom, { ...options, now: inForce })).toMatchObject({
      status: 'valid',
      plan: 'enterprise',
      limits: { seats: 400, storedBytes: null },
    });
  });

  it('keeps the plan with a warning during the grace period, then falls back to the free plan', () => {
    const expiry = Date.parse(payload.expiresAt);
    const grace = judgeLicense(text, { ...options, now: new Date(expiry + DAY) });
    expect(grace).toMatchObject({ status: 'grace', plan: 'business', limits: planLimits('business') });
    expect(grace.warning).toMatch(
      /lic_01TEST expired on 2027-01-01T00:00:00.000Z; its business plan applies until/,
    );

    const after = judgeLicense(text, { ...options, now: new Date(expiry + LICENSE_GRACE_DAYS * DAY) });
    expect(after).toMatchObject({ status: 'expired', plan: 'free', limits: planLimits('free') });
    expect(after.warning).toMatch(/grace period ended .* the free plan's limits apply/);
    expect(after.license?.id).toBe('lic_01TEST');
  });

  it('refuses a forged signature, a tampered payload and another key, and falls back to free', () => {
    const [prefix, body, signature] = text.split('.') as [string, string, string];
    const flipped = Buffer.from(signature, 'base64url');
    flipped[10] = (flipped[10] as number) ^ 1;
    const forged = `${prefix}.${body}.${flipped.toString('base64url')}`;
    const tampered = withPayload({ ...payload, plan: 'enterprise' });
    const otherKey = signLicense(payload, stranger.privateKey);
    for (const document of [forged, tampered, otherKey]) {
      expect(verifyLicense(document, options)).toMatchObject({ ok: false, reason: 'bad_signature' });
      const standing = judgeLicense(document, { ...options, now: inForce });
      expect(standing).toMatchObject({ status: 'invalid', plan: 'free', limits: planLimits('free') });
      expect(standing.license).toBeUndefined();
      expect(standing.warning).toMatch(/not valid \(The license signature does not verify/);
    }
    // The test key's license does not verify with the key the server ships with either.
    expect(verifyLicense(text, { publicKey: shippedLicensePublicKey() })).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyLicense(text)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses what is not a license, and a signed payload of the wrong shape', () => {
    for (const document of [
      '',
      'hello',
      text.replace('svc-license-v1', 'svc-license-v2'),
      `${text}.extra`,
      text.replace(/\.([^.]+)$/, '.$1='), // padding is not canonical base64url
      `${text.slice(0, -4)}`, // a signature too short
    ])
      expect(verifyLicense(document, options)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(verifyLicense('x'.repeat(20_000), options)).toMatchObject({ ok: false, reason: 'malformed' });
    const wrongShape = signLicense(
      { ...payload, plan: 'platinum' } as unknown as LicensePayload,
      issuer.privateKey,
    );
    expect(verifyLicense(wrongShape, options)).toMatchObject({
      ok: false,
      reason: 'invalid_payload',
      message: expect.stringMatching(/plan/),
    });
    const backwards = signLicense({ ...payload, expiresAt: payload.issuedAt }, issuer.privateKey);
    expect(verifyLicense(backwards, options)).toMatchObject({ ok: false, reason: 'invalid_payload' });
  });

  it('is the free plan, without a warning, when none is installed', () => {
    expect(judgeLicense(undefined)).toEqual({ status: 'missing', plan: 'free', limits: planLimits('free') });
  });
});
