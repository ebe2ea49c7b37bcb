import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { gatherDsarManifest } from './dsar-gather.ts';
import {
  claimDsarRequests,
  completeDsarRequest,
  expireDsarRequests,
  failDsarRequest,
} from './dsar-repository.ts';

/** How long a ready archive may be downloaded. */
export const DSAR_ARCHIVE_DAYS = 7;

/** How long a claimed request is held (a gather is a few statements, however big the subject). */
const LEASE_MS = 10 * 60 * 1000;

/** When nothing was due, how long before looking again (a new request wakes the worker at once). */
const POLL_MS = 60 * 1000;

/**
 * The worker of access requests: each batch expires the ready requests whose archive's time is
 * over, then claims one due request, gathers its manifest and makes it `ready` for
 * {@link DSAR_ARCHIVE_DAYS} days (or, after a failed attempt, queues it again with backoff).
 * Any number of processes may run it.
 *
 * @example
 * ```ts
 * const worker = createDsarWorker({ database, log });
 * worker.start(); // or, in a test: await worker.runUntilIdle();
 * ```
 */
export function createDsarWorker(
  dependencies: { database: Kysely<Database>; log: FastifyBaseLogger; now?: () => Date },
  options: { pollMs?: number } = {},
): PollingLoop {
  const { database, log } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  return createPollingLoop(
    async () => {
      const expired = await expireDsarRequests(database, now());
      if (expired > 0) log.info({ expired }, `${expired} access request archive(s) expired`);
      const [claimed] = await claimDsarRequests(database, { now: now(), leaseMs: LEASE_MS, limit: 1 });
      if (claimed === undefined) return { ran: expired, more: false };
      try {
        const manifest = await gatherDsarManifest(database, claimed.organizationId, claimed.subject);
        const at = now();
        const expiresAt = new Date(at.getTime() + DSAR_ARCHIVE_DAYS * 24 * 3600 * 1000);
        await completeDsarRequest(database, claimed, manifest, { now: at, expiresAt });
        log.info({ request: claimed.id, totals: manifest.totals }, 'access request gathered');
      } catch (error) {
        const outcome = await failDsarRequest(database, claimed, error, now());
        log.error({ err: error, request: claimed.id, outcome }, 'access request could not be gathered');
      }
      return { ran: expired + 1 };
    },
    {
      pollMs: options.pollMs ?? POLL_MS,
      onError: (error) => log.error({ err: error }, 'access request worker failed'),
    },
  );
}
