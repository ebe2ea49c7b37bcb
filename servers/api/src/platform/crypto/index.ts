export { EncryptionError } from './encryption-error.ts';
export {
  createDataKey,
  openBlob,
  sealBlob,
  unwrapDataKey,
  wrapDataKey,
  wrappingKeyId,
} from './envelope.ts';
export type { DataKey, MasterKey } from './keys.ts';
export {
  finishMasterKeyRotation,
  loadMasterKey,
  MASTER_KEY_FILE_NAME,
  rotateMasterKeyFile,
} from './master-key.ts';
