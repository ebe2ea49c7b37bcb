import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createFactsWorker, type FactsWorker } from '../src/modules/insights/index.ts';
import { createOrganization } from '../src/modules/orgs/organizations.ts';
import type { ProcessingDependencies } from '../src/modules/processing/index.ts';
import { createProcessingWorker, type ProcessingWorker } from '../src/modules/processing/index.ts';
import { createApiTokenRecord } from '../src/modules/projects/api-tokens.ts';
import { createProject } from '../src/modules/projects/projects.ts';
import { createSymbolicator } from '../src/modules/sourcemaps/index.ts';
import { type BlobStore, createFileBlobStore } from '../src/platform/blob-store/index.ts';
import { type Configuration, loadConfiguration } from '../src/platform/config.ts';
import { loadMasterKey } from '../src/platform/crypto/index.ts';
import type { Project } from '../src/platform/database/tables/projects.table.ts';
import type { Services } from '../src/services.ts';
import { type Engine, openTestDatabase, type TestDatabase } from './test-database.ts';

/** A project with an API token, as a test client sees it. */
export interface TestProject {
  project: Project;
  projectKey: string;
  apiToken: string;
  /** `{ authorization: 'Bearer …' }` for `app.inject`. */
  headers: { authorization: string };
}

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  configuration: Configuration;
  dataDirectory: string;
  /** Creates another organization + project + token (for isolation tests). */
  /** A project in a new organization, or in `options.organizationId`'s. */
  createProject(name?: string, options?: { organizationId?: string }): Promise<TestProject>;
  /** The project created with the app. */
  first: TestProject;
  /** A call worker on the app's services: `runUntilIdle()` processes what ingest queued. */
  processingWorker: ProcessingWorker;
  /** The facts job's worker of insights, run when a test chooses (`factsWorker.runUntilIdle()`). */
  factsWorker: FactsWorker;
  /** What call processing runs on (the app's database, blob store and keys). */
  processingDependencies: ProcessingDependencies;
  close(): Promise<void>;
}

/**
 * The app around a fresh database of `engine`, file blobs and a key file in a temporary data
 * directory, and one project with a token.
 */
export async function createTestApp(
  engine: Engine,
  fastifyOptions: FastifyServerOptions = { logger: false },
  environment: Record<string, string> = {},
  extra: Pick<Services, 'licensePublicKey'> & { blobStore?: BlobStore } = {},
): Promise<TestApp> {
  const dataDirectory = await mkdtemp(join(tmpdir(), 'svc-app-'));
  const configuration = loadConfiguration({
    SVC_DATA_DIR: dataDirectory,
    PORT: '0',
    SVC_LOG_LEVEL: 'silent',
    // Tests run call processing when they choose (`app.processingWorker.runUntilIdle()`), unless they
    // turn the background worker on.
    SVC_CALL_WORKER: 'false',
    // Likewise deliveries (`app.deliveryWorker.runUntilIdle()`); receivers listen on 127.0.0.1.
    SVC_DELIVERY_WORKER: 'false',
    // And regression checks (`checkRegressions` of insights).
    SVC_REGRESSION_WORKER: 'false',
    SVC_RETENTION_WORKER: 'false',
    SVC_USAGE_WORKER: 'false',
    SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    // Domain verification asks no real DNS server (nothing listens there: the lookup fails at once).
    SVC_DNS_SERVERS: '127.0.0.1:9',
    ...environment,
  });
  const database = await openTestDatabase(engine);
  // The caller's blob store (an S3 one, say) is the caller's to close.
  const { blobStore: givenBlobStore, ...services } = extra;
  const blobStore = givenBlobStore ?? createFileBlobStore({ directory: join(dataDirectory, 'blobs') });
  const masterKey = await loadMasterKey({ dataDirectory });
  const app = await buildApp({ configuration, database, blobStore, masterKey, ...services }, fastifyOptions);

  async function createTestProject(
    name = 'Test project',
    options: { organizationId?: string } = {},
  ): Promise<TestProject> {
    const organizationId =
      options.organizationId ?? (await createOrganization(database.database, `${name} org`)).id;
    const project = await createProject(database.database, {
      organizationId,
      name,
      masterKey,
    });
    const { token } = await createApiTokenRecord(database.database, { projectId: project.id, name: 'test' });
    return {
      project,
      projectKey: project.project_key,
      apiToken: token,
      headers: { authorization: `Bearer ${token}` },
    };
  }

  const first = await createTestProject();
  const processingDependencies = {
    database: database.database,
    blobStore,
    masterKey,
    log: app.log,
    appUrl: configuration.appUrl,
    // Its own cache of parsed maps: the app's is decorated only once it is ready.
    symbolicator: createSymbolicator({ database: database.database, blobStore }),
  };
  const processingWorker = createProcessingWorker(processingDependencies);
  const factsWorker = createFactsWorker(processingDependencies);
  return {
    app,
    processingWorker,
    factsWorker,
    processingDependencies,
    database,
    configuration,
    dataDirectory,
    createProject: createTestProject,
    first,
    async close() {
      await app.close();
      if (givenBlobStore === undefined) await blobStore.close();
      await database.dispose();
      await rm(dataDirectory, { recursive: true, force: true });
    },
  };
}
