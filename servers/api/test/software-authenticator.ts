import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

// A WebAuthn authenticator in software, for API tests of passkeys (the dashboard's tests use
// Chromium's virtual authenticator): one ES256 credential, attestation "none", assertions signed
// over authenticatorData || SHA-256(clientDataJSON) with a counter the test controls.

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_BACKUP_ELIGIBLE = 0x08;
const FLAG_BACKED_UP = 0x10;
const FLAG_ATTESTED_DATA = 0x40;

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** What a ceremony may change from an honest authenticator's answer (to test refusals). */
export interface CeremonyOptions {
  /** The page's origin the browser reports (default: the authenticator's). */
  origin?: string;
  /** The relying party id whose hash starts authenticatorData (default: the authenticator's). */
  rpId?: string;
  /** Whether the authenticator verified the person (PIN, biometrics); default true. */
  userVerified?: boolean;
  /** The signature counter of an assertion (default: one more than the last). */
  counter?: number;
  /** The challenge to sign instead of the options' one. */
  challenge?: string;
}

export interface SoftwareAuthenticator {
  /** The credential id, base64url. */
  credentialId: string;
  /** The answer of `startRegistration()` to creation options (`{ challenge, user: { id } }`). */
  register(options: { challenge: string; user: { id: string } }, change?: CeremonyOptions): RegistrationJson;
  /** The answer of `startAuthentication()` to request options (`{ challenge }`). */
  authenticate(options: { challenge: string }, change?: CeremonyOptions): AuthenticationJson;
}

export interface RegistrationJson {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, never>;
}

export interface AuthenticationJson {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string };
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, never>;
}

/** A new authenticator for the relying party `rpId`, as a page of `origin` uses it. */
export function softwareAuthenticator(rpId: string, origin: string): SoftwareAuthenticator {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credential = randomBytes(16);
  const credentialId = base64url(credential);
  let counter = 0;
  let userHandle: string | undefined;

  function authenticatorData(change: CeremonyOptions, flags: number, count: number, attested?: Uint8Array) {
    const header = Buffer.alloc(37);
    sha256(change.rpId ?? rpId).copy(header, 0);
    header[32] =
      flags |
      FLAG_USER_PRESENT |
      (change.userVerified === false ? 0 : FLAG_USER_VERIFIED) |
      FLAG_BACKUP_ELIGIBLE |
      FLAG_BACKED_UP;
    header.writeUInt32BE(count, 33);
    return attested === undefined ? header : Buffer.concat([header, attested]);
  }

  function clientData(type: string, challenge: string, change: CeremonyOptions) {
    return Buffer.from(
      JSON.stringify({ type, challenge: change.challenge ?? challenge, origin: change.origin ?? origin }),
    );
  }

  return {
    credentialId,
    register(options, change = {}) {
      userHandle = options.user.id;
      // The COSE key (RFC 9053): kty EC2, alg ES256, crv P-256, x, y.
      const coseKey = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x as string, 'base64url')],
          [-3, Buffer.from(jwk.y as string, 'base64url')],
        ]),
      );
      const length = Buffer.alloc(2);
      length.writeUInt16BE(credential.length);
      const attested = Buffer.concat([Buffer.alloc(16), length, credential, coseKey]);
      const authData = authenticatorData(change, FLAG_ATTESTED_DATA, counter, attested);
      const attestationObject = isoCBOR.encode(
        new Map<string, string | Uint8Array | Map<string, string>>([
          ['fmt', 'none'],
          ['attStmt', new Map<string, string>()],
          ['authData', new Uint8Array(authData)],
        ]),
      );
      return {
        id: credentialId,
        rawId: credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: base64url(clientData('webauthn.create', options.challenge, change)),
          attestationObject: base64url(attestationObject),
          transports: ['internal'],
        },
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
      };
    },
    authenticate(options, change = {}) {
      counter = change.counter ?? counter + 1;
      const authData = authenticatorData(change, 0, counter);
      const client = clientData('webauthn.get', options.challenge, change);
      const signature = sign('sha256', Buffer.concat([authData, sha256(client)]), privateKey);
      return {
        id: credentialId,
        rawId: credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: base64url(client),
          authenticatorData: base64url(authData),
          signature: base64url(signature),
          ...(userHandle === undefined ? {} : { userHandle }),
        },
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
      };
    },
  };
}
