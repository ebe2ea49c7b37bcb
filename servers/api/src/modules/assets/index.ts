// Assets: the stylesheets, fonts and images of sessions' snapshots, archived content-addressed
// so that a replay looks the same after the site changed (servers/api/README.md, Archived assets).
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { type AssetDependencies, archiveSessionAssets } from './archive.ts';
export { type AssetWorker, createAssetWorker } from './asset-job.ts';
export { assetBlobKey } from './repository.ts';
