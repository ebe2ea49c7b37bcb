export {
  createDebugId,
  type InjectResult,
  injectDebugId,
  readDebugId,
  sourceMappingUrl,
} from './debug-id.ts';
export {
  type BundleFiles,
  findBundles,
  type InjectedBundle,
  injectDirectory,
  injectFiles,
} from './directory.ts';
export { SourcemapsError, type SourcemapsErrorCode } from './errors.ts';
export { type SvcSourcemapsOptions, type SvcSourcemapsPlugin, svcSourcemaps } from './plugin.ts';
export {
  readUploadFiles,
  type UploadedFile,
  type UploadFile,
  type UploadOptions,
  type UploadResult,
  uploadSourcemaps,
} from './upload.ts';
