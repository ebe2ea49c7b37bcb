import { createPublicKey, type KeyObject } from 'node:crypto';

// The public half of the key that signs this product's licenses (Ed25519, SPKI PEM). The private
// half never enters the repository: licenses are issued outside it. Tests make their own key pair
// and pass its public key to the verifier instead (`verifyLicense(text, { publicKey })`).
const LICENSE_PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAWtwL9MSGWedfvo69B2W/SPrzafYd75zWLjFJy0XJT6c=
-----END PUBLIC KEY-----
`;

let shipped: KeyObject | undefined;

/**
 * The public key licenses are verified with unless a caller passes another one.
 *
 * @example
 * ```ts
 * verifyLicense(text, { publicKey: shippedLicensePublicKey() });
 * ```
 */
export function shippedLicensePublicKey(): KeyObject {
  shipped ??= createPublicKey(LICENSE_PUBLIC_KEY_PEM);
  return shipped;
}
