import { WRAPPED_KEY_LENGTH } from '../../platform/crypto/envelope.ts';
import {
  createDataKey,
  type MasterKey,
  openBlob,
  sealBlob,
  unwrapDataKey,
} from '../../platform/crypto/index.ts';

// An OIDC connection's client secret at rest: a data key of its own, wrapped by the master key,
// then the secret sealed with it (AES-256-GCM, `sealBlob`) and bound to the connection id, so a
// sealed secret copied to another connection does not open. Stored as one value
// (`oidc_client_secret_sealed`): the wrapped key (69 bytes) followed by the sealed blob.

function associatedData(connectionId: string): string {
  return `sso_connections/${connectionId}/oidc-client-secret`;
}

/** Seals a connection's client secret. */
export function sealClientSecret(masterKey: MasterKey, connectionId: string, secret: string): Uint8Array {
  const { dataKey, wrappedKey } = createDataKey(masterKey);
  const sealed = sealBlob(dataKey, Buffer.from(secret, 'utf8'), associatedData(connectionId));
  return Buffer.concat([wrappedKey, sealed]);
}

/** Opens what {@link sealClientSecret} sealed. */
export function openClientSecret(masterKey: MasterKey, connectionId: string, stored: Uint8Array): string {
  const bytes = Buffer.from(stored);
  const dataKey = unwrapDataKey(masterKey, bytes.subarray(0, WRAPPED_KEY_LENGTH));
  const plain = openBlob(dataKey, bytes.subarray(WRAPPED_KEY_LENGTH), associatedData(connectionId));
  return Buffer.from(plain).toString('utf8');
}
