import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { createTtlCache } from '../../platform/ttl-cache.ts';
import {
  type CapState,
  evaluateCaps,
  type PlanCaps,
  SESSION_GRACE_MS,
  type ThresholdReached,
} from './caps.ts';
import { monthOf } from './metrics.ts';

/** How long a process trusts an organization's cap state before reading it again. */
const CAP_STATE_TTL_MS = 10_000;

/** How often the threshold sweep looks at every organization that used something this month. */
const SWEEP_EVERY_MS = 60_000;

/** What {@link UsageGate.admitChunk} decided. */
type ChunkAdmission =
  | { admitted: true }
  | { admitted: false; reason: string; retryAfterSeconds: number; metric: 'sessions' | 'storedBytes' };

/** Caps as the hot paths read them: cached per process, refreshed every {@link CAP_STATE_TTL_MS}. */
export interface UsageGate {
  /** The organization's cap state (cached). */
  state(organizationId: string): Promise<CapState>;
  /**
   * Whether a chunk of this session may be stored: always, but while new sessions are refused;
   * then only for a session that started before that moment, for {@link SESSION_GRACE_MS}.
   */
  admitChunk(project: { id: string; organization_id: string }, sessionId: string): Promise<ChunkAdmission>;
  /** The organization's state read afresh (and cached): after its caps changed, for its usage page. */
  refresh(organizationId: string): Promise<CapState>;
  /** Evaluates every organization that used something this month (thresholds and their events). */
  sweep(): Promise<number>;
  /** The sweep, every minute, in the background. */
  worker: PollingLoop;
}

export interface UsageGateDependencies {
  database: Kysely<Database>;
  planCaps: PlanCaps;
  /** Sends `usage.threshold`, in the transaction that records the threshold. */
  onThreshold: (
    transaction: Transaction<Database>,
    organizationId: string,
    reached: ThresholdReached,
  ) => Promise<void>;
  log: FastifyBaseLogger;
  now?: () => Date;
  ttlMs?: number;
}

/**
 * The usage gate of a server process: ingest asks it whether a chunk may be stored, `/v1/config`
 * whether SDKs may start recording, the model whether it may answer. Its state of an organization
 * is at most {@link CAP_STATE_TTL_MS} old, so a cap is enforced within that much of being reached
 * (the count itself is exact: see `meter.ts`).
 *
 * @example
 * ```ts
 * const gate = createUsageGate({ database, planCaps, onThreshold, log });
 * const admission = await gate.admitChunk(project, chunk.sessionId);
 * ```
 */
export function createUsageGate(dependencies: UsageGateDependencies): UsageGate {
  const { database } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const cache = createTtlCache<Promise<CapState>>({
    ttlMs: dependencies.ttlMs ?? CAP_STATE_TTL_MS,
    maxEntries: 100_000,
  });
  const evaluate = (organizationId: string) =>
    evaluateCaps(database, organizationId, now(), dependencies.planCaps, (transaction, reached) =>
      dependencies.onThreshold(transaction, organizationId, reached),
    );

  /** Reads the organization's state afresh, and caches it. */
  function load(organizationId: string): Promise<CapState> {
    const loading = evaluate(organizationId);
    cache.set(organizationId, loading);
    // A failed read is not kept: the next request tries again.
    loading.catch(() => cache.deleteWhere((value) => value === loading));
    return loading;
  }

  function state(organizationId: string): Promise<CapState> {
    return cache.get(organizationId) ?? load(organizationId);
  }

  const gate: UsageGate = {
    state,
    async admitChunk(project, sessionId) {
      const current = await state(project.organization_id);
      const since = current.refusedSince;
      if (since === undefined) return { admitted: true };
      const at = now();
      const metric =
        current.metrics.sessions.cap !== null && current.metrics.sessions.used >= current.metrics.sessions.cap
          ? 'sessions'
          : 'storedBytes';
      const retryAfterSeconds = Math.max(
        1,
        Math.min(3600, Math.ceil((current.resetsAt.getTime() - at.getTime()) / 1000)),
      );
      const refused = (reason: string): ChunkAdmission => ({
        admitted: false,
        reason,
        retryAfterSeconds,
        metric,
      });
      const what = metric === 'sessions' ? 'sessions' : 'stored bytes';
      if (at.getTime() - since.getTime() > SESSION_GRACE_MS)
        return refused(
          `The organization has reached its monthly cap of ${what}: no session is recorded until the cap is raised or the month ends`,
        );
      const session = await database
        .selectFrom('sessions')
        .select('created_at')
        .where('project_id', '=', project.id)
        .where('id', '=', sessionId)
        .executeTakeFirst();
      if (session !== undefined && session.created_at.getTime() <= since.getTime()) return { admitted: true };
      return refused(
        `The organization has reached its monthly cap of ${what}: new sessions are not recorded until the cap is raised or the month ends (sessions already started may finish)`,
      );
    },
    refresh: load,
    async sweep() {
      const organizations = await database
        .selectFrom('usage_daily')
        .select('organization_id')
        .distinct()
        .where('day', '>=', sql<Date>`${monthOf(now())}::date`)
        .union(database.selectFrom('usage_caps').select('organization_id'))
        .execute();
      for (const { organization_id: organizationId } of organizations) await load(organizationId);
      return organizations.length;
    },
    worker: createPollingLoop(
      async () => {
        await gate.sweep();
        return 0;
      },
      {
        pollMs: SWEEP_EVERY_MS,
        onError: (error) => dependencies.log.error({ err: error }, 'could not check usage thresholds'),
      },
    ),
  };
  return gate;
}
