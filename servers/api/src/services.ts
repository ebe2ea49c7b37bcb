import type { KeyObject } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Kysely } from 'kysely';
import { createExplainJobHandlers } from './modules/ai/explain-jobs.ts';
import { type AiJobWorker, createAiJobWorker } from './modules/ai/job-worker.ts';
import { releaseAiJobLeases } from './modules/ai/jobs.ts';
import { type AssetWorker, createAssetWorker } from './modules/assets/index.ts';
import { organizationPlan } from './modules/billing/index.ts';
import { createFactsWorker, createRegressionWorker, type FactsWorker } from './modules/insights/index.ts';
import { releaseDeliveryLeases } from './modules/notifications/deliveries.ts';
import { createDeliveryWorker, type DeliveryWorker } from './modules/notifications/delivery-worker.ts';
import { notifyAccountEvent } from './modules/notifications/index.ts';
import { NO_SEAT_OR_PROJECT_LIMITS, type SeatAndProjectLimits } from './modules/orgs/index.ts';
import { createErasureWorker, createRetentionWorker, type PlanRetention } from './modules/privacy/index.ts';
import { createProcessingWorker, type ProcessingWorker } from './modules/processing/index.ts';
import { createReportJobHandlers } from './modules/reports/report-jobs.ts';
import {
  type ChunkIndexWriter,
  createChunkIndexWriter,
  SERVER_LINGER_MS,
} from './modules/sessions/chunk-index-writer.ts';
import { createIngestCounters, type IngestCounters } from './modules/sessions/ingest-counters.ts';
import { createSymbolicator, type Symbolicator } from './modules/sourcemaps/index.ts';
import { createSsoSignInGate } from './modules/sso/gate.ts';
import { createDomainRecheckWorker, createTxtResolver } from './modules/sso/index.ts';
import {
  createUsageGate,
  NO_CAPS,
  type PlanCaps,
  type UsageGate,
  usageThresholdEvent,
} from './modules/usage/index.ts';
import type { BlobStore } from './platform/blob-store/index.ts';
import type { Configuration } from './platform/config.ts';
import type { MasterKey } from './platform/crypto/index.ts';
import type { DatabaseHandle } from './platform/database/database.ts';
import type { Database } from './platform/database/schema.ts';
import { createDestinationPolicy } from './platform/http/destination-policy.ts';
import type { PollingLoop } from './platform/jobs/polling-loop.ts';
import { createMailer, type Mailer } from './platform/mail/index.ts';

/** What the server process opened before building the app: the app never opens or closes them. */
export interface Services {
  configuration: Configuration;
  database: DatabaseHandle;
  blobStore: BlobStore;
  masterKey: MasterKey;
  /** The key licenses are verified with; absent: the one the server ships with (tests pass theirs). */
  licensePublicKey?: KeyObject;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route made its writes durable itself (ingest, through the chunk index writer). */
    flushedBeforeReply?: boolean;
  }
  interface FastifyInstance {
    configuration: Configuration;
    database: Kysely<Database>;
    databaseHandle: DatabaseHandle;
    blobStore: BlobStore;
    masterKey: MasterKey;
    /** Group commit of ingested chunks' index rows. */
    chunkIndex: ChunkIndexWriter;
    /** What ingest dropped (optional meta fields) and redacted (privacy rules), counted. */
    ingestCounters: IngestCounters;
    /** Processing jobs (started in the background unless `configuration.callWorker`, SVC_CALL_WORKER, is off). */
    processingWorker: ProcessingWorker;
    /** Facts jobs of insights (started with the processing worker: `configuration.callWorker`). */
    factsWorker: FactsWorker;
    /** Archiving of sessions' assets (started with the processing worker: `configuration.callWorker`). */
    assetWorker: AssetWorker;
    /** Webhook deliveries (started in the background unless `configuration.deliveryWorker` is off). */
    deliveryWorker: DeliveryWorker;
    /** The server's e-mail: SMTP (`SVC_SMTP_URL`), else `.eml` files in the data directory. */
    mailer: Mailer;
    /** Source maps of every project, with the process's cache of parsed maps. */
    symbolicator: Symbolicator;
    /** AI jobs: anomaly scans, digests, asynchronous explanations (started with `configuration.callWorker`). */
    aiJobWorker: AiJobWorker;
    /** Monthly caps as ingest, `/v1/config` and the model read them; its sweep sends `usage.threshold`. */
    usageGate: UsageGate;
    /** The caps of an organization's plan (the license or the billing provider). */
    usagePlanCaps: PlanCaps;
    /** The seats and projects the organization's plan allows (none where no plan applies). */
    planSeatsAndProjects: (organizationId: string) => Promise<SeatAndProjectLimits>;
    /** End users' erasures (started with `configuration.retentionWorker`); woken by a new request. */
    erasureWorker: PollingLoop;
  }
}

/**
 * Batches of chunk index rows in flight at once: PGlite has one connection, so 1; on PostgreSQL
 * a few, always leaving connections to the reading routes.
 */
export function chunkIndexConcurrency(database: Configuration['database']): number {
  return database.engine === 'pglite' ? 1 : Math.max(1, Math.min(4, Math.floor(database.poolSize / 2)));
}

/**
 * Decorates the instance with the external services (db, blob store, keys) for every route, and
 * the chunk index writer built on them (drained when the app closes).
 */
export const servicesPlugin = fastifyPlugin(
  async (fastify: FastifyInstance, services: Services) => {
    fastify.decorate('configuration', services.configuration);
    fastify.decorate('database', services.database.database);
    fastify.decorate('databaseHandle', services.database);
    fastify.decorate('blobStore', services.blobStore);
    fastify.decorate('masterKey', services.masterKey);
    const mailer = createMailer({
      ...(services.configuration.smtpUrl === undefined ? {} : { smtpUrl: services.configuration.smtpUrl }),
      ...(services.configuration.mailFrom === undefined ? {} : { from: services.configuration.mailFrom }),
      appUrl: services.configuration.appUrl,
      dataDirectory: services.configuration.dataDirectory,
      log: fastify.log.child({ component: 'mail' }),
    });
    fastify.decorate('mailer', mailer);
    const chunkIndex = createChunkIndexWriter({
      database: services.database.database,
      concurrency: chunkIndexConcurrency(services.configuration.database),
      lingerMs: SERVER_LINGER_MS,
      flush: services.database.flush,
    });
    fastify.decorate('chunkIndex', chunkIndex);
    const ingestCounters = createIngestCounters();
    fastify.decorate('ingestCounters', ingestCounters);
    // Webhooks and archived assets connect out under the same policy (SVC_WEBHOOK_ALLOWED_HOSTS).
    const destinationPolicy = createDestinationPolicy(services.configuration.webhookAllowedHosts);
    const deliveryWorker = createDeliveryWorker({
      database: services.database.database,
      masterKey: services.masterKey,
      policy: destinationPolicy,
      log: fastify.log.child({ worker: 'deliveries' }),
    });
    fastify.decorate('deliveryWorker', deliveryWorker);
    const symbolicator = createSymbolicator({
      database: services.database.database,
      blobStore: services.blobStore,
    });
    fastify.decorate('symbolicator', symbolicator);
    const processingWorker = createProcessingWorker(
      {
        database: services.database.database,
        symbolicator,
        blobStore: services.blobStore,
        masterKey: services.masterKey,
        log: fastify.log.child({ worker: 'processing' }),
        appUrl: services.configuration.appUrl,
        onDeliveriesQueued: () => deliveryWorker.wake(),
      },
      // Jobs wait on the database most of their time: as many at once as index batches.
      {
        concurrency: chunkIndexConcurrency(services.configuration.database),
        coalesceMs: services.configuration.callCoalesceMs,
      },
    );
    fastify.decorate('processingWorker', processingWorker);
    const regressionWorker = createRegressionWorker({
      database: services.database.database,
      log: fastify.log.child({ worker: 'regressions' }),
      appUrl: services.configuration.appUrl,
      onDeliveriesQueued: () => deliveryWorker.wake(),
    });
    if (services.configuration.callWorker) fastify.addHook('onReady', async () => processingWorker.start());
    const factsWorker = createFactsWorker(
      {
        database: services.database.database,
        blobStore: services.blobStore,
        masterKey: services.masterKey,
        log: fastify.log.child({ worker: 'facts' }),
        appUrl: services.configuration.appUrl,
        onDeliveriesQueued: () => deliveryWorker.wake(),
      },
      { concurrency: chunkIndexConcurrency(services.configuration.database) },
    );
    fastify.decorate('factsWorker', factsWorker);
    if (services.configuration.callWorker) fastify.addHook('onReady', async () => factsWorker.start());
    const assetWorker = createAssetWorker({
      database: services.database.database,
      blobStore: services.blobStore,
      masterKey: services.masterKey,
      log: fastify.log.child({ worker: 'assets' }),
      policy: destinationPolicy,
    });
    fastify.decorate('assetWorker', assetWorker);
    if (services.configuration.callWorker) fastify.addHook('onReady', async () => assetWorker.start());
    if (services.configuration.regressionWorker)
      fastify.addHook('onReady', async () => regressionWorker.start());
    // AI jobs (anomaly scans, digests, explanations) and their hourly scheduler, with the other job workers.
    const aiJobWorker = createAiJobWorker({
      database: services.database.database,
      handlers: {
        ...createReportJobHandlers({
          appUrl: services.configuration.appUrl,
          onDeliveriesQueued: () => deliveryWorker.wake(),
        }),
        ...createExplainJobHandlers({
          blobStore: services.blobStore,
          masterKey: services.masterKey,
          configuration: services.configuration,
          onDeliveriesQueued: () => deliveryWorker.wake(),
        }),
      },
      log: fastify.log.child({ worker: 'ai-jobs' }),
    });
    fastify.decorate('aiJobWorker', aiJobWorker);
    if (services.configuration.callWorker)
      fastify.addHook('onReady', async () => {
        // The embedded store is one process: a running job's lease is from a process that died.
        if (services.configuration.database.engine === 'pglite')
          await releaseAiJobLeases(services.database.database);
        aiJobWorker.start();
      });
    // The plan's caps: the subscription's, else the license's, else the free plan's; none on a
    // self-hosted deployment that has neither a license nor a billing provider (servers/api/README.md,
    // Usage and caps).
    const planOf = async (organizationId: string) => {
      const plan = await organizationPlan(services.database.database, organizationId, {
        ...(services.licensePublicKey === undefined ? {} : { publicKey: services.licensePublicKey }),
      });
      const applies = !(
        plan.source === 'free' &&
        plan.warning === undefined &&
        services.configuration.stripe === undefined
      );
      return applies ? plan : undefined;
    };
    const planCaps: PlanCaps = async (organizationId) => {
      const plan = await planOf(organizationId);
      if (plan === undefined) return NO_CAPS;
      return {
        sessions: plan.limits.sessionsPerMonth,
        storedBytes: plan.limits.storedBytes,
        aiTokens: plan.limits.aiTokensPerMonth,
      };
    };
    fastify.decorate('usagePlanCaps', planCaps);
    const planSeatsAndProjects = async (organizationId: string): Promise<SeatAndProjectLimits> => {
      const plan = await planOf(organizationId);
      return plan === undefined
        ? NO_SEAT_OR_PROJECT_LIMITS
        : { seats: plan.limits.seats, projects: plan.limits.projects };
    };
    fastify.decorate('planSeatsAndProjects', planSeatsAndProjects);
    // Organization SSO decides the ways in: require SSO for verified domains, auto-join by domain.
    fastify.decorate('signInGate', createSsoSignInGate(services.database.database, planSeatsAndProjects));
    const usageGate = createUsageGate({
      database: services.database.database,
      planCaps,
      onThreshold: async (transaction, organizationId, reached) => {
        const event = usageThresholdEvent(organizationId, reached, services.configuration.appUrl);
        await notifyAccountEvent(transaction, organizationId, event, new Date());
        // The deliveries are committed with the threshold's row, a moment after this.
        setImmediate(() => deliveryWorker.wake());
      },
      log: fastify.log.child({ worker: 'usage' }),
    });
    fastify.decorate('usageGate', usageGate);
    if (services.configuration.usageWorker) fastify.addHook('onReady', async () => usageGate.worker.start());
    // The plan's retention days; none on a self-hosted deployment without a license or billing
    // provider, as for caps: the projects' settings decide (servers/api/README.md, Retention).
    const planRetention: PlanRetention = async (organizationId) =>
      (await planOf(organizationId))?.limits.retentionDays ?? null;
    const retentionWorker = createRetentionWorker({
      database: services.database.database,
      blobStore: services.blobStore,
      planRetention,
      log: fastify.log.child({ worker: 'retention' }),
    });
    const erasureWorker = createErasureWorker({
      database: services.database.database,
      blobStore: services.blobStore,
      log: fastify.log.child({ worker: 'erasure' }),
    });
    fastify.decorate('erasureWorker', erasureWorker);
    // The daily re-check of verified domains (modules/sso), with the retention worker.
    const domainRecheckWorker = createDomainRecheckWorker({
      database: services.database.database,
      resolver: createTxtResolver(services.configuration.dnsServers),
      log: fastify.log.child({ worker: 'domains' }),
    });
    if (services.configuration.retentionWorker)
      fastify.addHook('onReady', async () => {
        retentionWorker.start();
        erasureWorker.start();
        domainRecheckWorker.start();
      });
    if (services.configuration.deliveryWorker) {
      fastify.addHook('onReady', async () => {
        // The embedded store is one process: a lease still held is from a process that died.
        if (services.configuration.database.engine === 'pglite')
          await releaseDeliveryLeases(services.database.database);
        deliveryWorker.start();
      });
    }
    // Writes other than ingest (which flushes per batch) are made durable before their answer.
    fastify.addHook('onSend', async (request, reply, payload) => {
      if (
        !SAFE_METHODS.has(request.method) &&
        reply.statusCode < 400 &&
        request.routeOptions.config?.flushedBeforeReply !== true
      ) {
        await services.database.flush();
      }
      return payload;
    });
    fastify.addHook('onClose', async () => {
      await processingWorker.stop();
      await factsWorker.stop();
      await assetWorker.stop();
      await regressionWorker.stop();
      await aiJobWorker.stop();
      await retentionWorker.stop();
      await erasureWorker.stop();
      await domainRecheckWorker.stop();
      await usageGate.worker.stop();
      await deliveryWorker.stop();
      await chunkIndex.drain();
      mailer.close();
      const { batches, chunks } = chunkIndex.stats();
      if (batches > 0)
        fastify.log.info({ batches, chunks }, `indexed ${chunks} chunk(s) in ${batches} transaction(s)`);
      const removed = ingestCounters.snapshot();
      if (removed.chunksWithDroppedMeta > 0 || removed.chunksRedacted > 0)
        fastify.log.info(
          removed,
          `ingest dropped optional meta fields from ${removed.chunksWithDroppedMeta} chunk(s) and redacted call data in ${removed.chunksRedacted}`,
        );
    });
  },
  { name: 'services' },
);
