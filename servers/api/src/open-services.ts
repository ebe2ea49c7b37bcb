import { mkdir } from 'node:fs/promises';
import { type BlobStore, createFileBlobStore, createS3BlobStore } from './platform/blob-store/index.ts';
import type { Configuration } from './platform/config.ts';
import { loadMasterKey } from './platform/crypto/index.ts';
import { lockDataDirectory } from './platform/data-directory-lock.ts';
import { createDatabase } from './platform/database/database.ts';
import { migrateToLatest } from './platform/database/migrate.ts';
import type { Services } from './services.ts';

/** The services a process opened, and how to close them (in reverse order). */
export interface OpenedServices extends Services {
  close(): Promise<void>;
}

function openBlobStore(configuration: Configuration): BlobStore {
  const blobStore = configuration.blobStore;
  if (blobStore.kind === 'file') return createFileBlobStore({ directory: blobStore.directory });
  return createS3BlobStore({
    bucket: blobStore.bucket,
    region: blobStore.region,
    forcePathStyle: blobStore.forcePathStyle,
    ...(blobStore.endpoint === undefined ? {} : { endpoint: blobStore.endpoint }),
    ...(blobStore.accessKeyId === undefined ? {} : { accessKeyId: blobStore.accessKeyId }),
    ...(blobStore.secretAccessKey === undefined ? {} : { secretAccessKey: blobStore.secretAccessKey }),
    ...(blobStore.prefix === undefined ? {} : { prefix: blobStore.prefix }),
  });
}

/**
 * Opens what the server and the CLI work on: the data directory (locked when it holds the
 * embedded store), the master key, the database (migrated to the latest schema unless
 * `migrate: false`) and the blob
 * store. Anything opened is closed again when a later step fails.
 */
export async function openServices(
  configuration: Configuration,
  options: { migrate?: boolean } = {},
): Promise<OpenedServices> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => {});
  };
  try {
    await mkdir(configuration.dataDirectory, { recursive: true, mode: 0o700 });
    if (configuration.database.engine === 'pglite')
      closers.push(await lockDataDirectory(configuration.dataDirectory));
    const masterKey = await loadMasterKey({
      dataDirectory: configuration.dataDirectory,
      ...(configuration.masterKey === undefined ? {} : { masterKey: configuration.masterKey }),
      ...(configuration.previousMasterKeys === undefined
        ? {}
        : { previousMasterKeys: configuration.previousMasterKeys }),
    });
    const database = await createDatabase(configuration.database);
    closers.push(() => database.close());
    if (options.migrate ?? true) {
      await migrateToLatest(database.database);
      await database.flush();
    }
    const blobStore = openBlobStore(configuration);
    closers.push(() => blobStore.close());
    return { configuration, database, blobStore, masterKey, close };
  } catch (error) {
    await close();
    throw error;
  }
}
