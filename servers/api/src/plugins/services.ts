import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../blob-store/index.ts';
import type { Configuration } from '../config.ts';
import type { MasterKey } from '../crypto/index.ts';
import type { DatabaseHandle } from '../database/database.ts';
import type { Database } from '../database/schema.ts';

/** What the server process opened before building the app: the app never opens or closes them. */
export interface Services {
  configuration: Configuration;
  database: DatabaseHandle;
  blobStore: BlobStore;
  masterKey: MasterKey;
}

declare module 'fastify' {
  interface FastifyInstance {
    configuration: Configuration;
    database: Kysely<Database>;
    databaseHandle: DatabaseHandle;
    blobStore: BlobStore;
    masterKey: MasterKey;
  }
}

/** Decorates the instance with the external services (db, blob store, keys) for every route. */
export const servicesPlugin = fastifyPlugin(
  async (fastify: FastifyInstance, services: Services) => {
    fastify.decorate('configuration', services.configuration);
    fastify.decorate('database', services.database.database);
    fastify.decorate('databaseHandle', services.database);
    fastify.decorate('blobStore', services.blobStore);
    fastify.decorate('masterKey', services.masterKey);
  },
  { name: 'services' },
);
