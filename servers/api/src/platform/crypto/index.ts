export { EncryptionError, type EncryptionErrorCode } from './encryption-error.ts';
export {
  createDataKey,
  openBlob,
  SEALED_BLOB_OVERHEAD,
  SEALED_BLOB_VERSION,
  sealBlob,
  unwrapDataKey,
  WRAPPED_KEY_LENGTH,
  WRAPPED_KEY_VERSION,
  wrapDataKey,
  wrappingKeyId,
} from './envelope.ts';
export type { DataKey, MasterKey } from './keys.ts';
export {
  finishMasterKeyRotation,
  type LoadMasterKeyOptions,
  loadMasterKey,
  MASTER_KEY_FILE_NAME,
  PREVIOUS_MASTER_KEY_FILE_NAME,
  rotateMasterKeyFile,
} from './master-key.ts';
