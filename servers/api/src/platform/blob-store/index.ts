export {
  type BlobStore,
  BlobStoreError,
  type BlobStoreErrorCode,
  isValidBlobKey,
  MAX_BLOB_KEY_LENGTH,
  MAX_BLOB_KEY_SEGMENT_LENGTH,
  type PutOptions,
} from './blob-store.ts';
export { createFileBlobStore, type FileBlobStoreOptions } from './file-blob-store.ts';
export { createS3BlobStore, type S3BlobStoreOptions } from './s3-blob-store.ts';
