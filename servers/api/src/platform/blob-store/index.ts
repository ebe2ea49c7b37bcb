export type { BlobStore } from './blob-store.ts';
export { createFileBlobStore } from './file-blob-store.ts';
export { createS3BlobStore } from './s3-blob-store.ts';
