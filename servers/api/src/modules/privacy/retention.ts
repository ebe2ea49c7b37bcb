import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { readSettings } from '../projects/index.ts';
import { sweepExpiredTelemetry } from '../traces/index.ts';
import {
  addRemoved,
  correctClusters,
  deleted,
  deleteSessions,
  drainBlobDeletions,
  type Removed,
} from './delete-sessions.ts';

const DAY_MS = 86_400_000;

/** Days each kind of data is kept. */
interface RetentionDays {
  sessions: number;
  calls: number;
  traces: number;
}

/**
 * The plan's retention days of an organization, or `null` when its plan sets none (a self-hosted
 * deployment without a license or billing provider: the projects' settings alone decide).
 */
export type PlanRetention = (organizationId: string) => Promise<RetentionDays | null>;

/** Sessions deleted per transaction by the sweep: a batch holds its rows' locks this long. */
const RETENTION_BATCH_SESSIONS = 100;

/**
 * A project's retention: its settings, lowered to its plan's days. Calls are never kept longer
 * than their session (deleting a session deletes its calls).
 *
 * @example
 * ```ts
 * const days = await projectRetention(project, async () => ({ sessions: 30, calls: 30, traces: 14 }));
 * ```
 */
async function projectRetention(
  project: { organization_id: string; settings: unknown },
  planRetention: PlanRetention,
): Promise<RetentionDays> {
  const settings = readSettings(project.settings);
  const plan = await planRetention(project.organization_id);
  const sessions = Math.min(settings.sessions.retentionDays, plan?.sessions ?? Number.POSITIVE_INFINITY);
  return {
    sessions,
    calls: Math.min(settings.calls.retentionDays, plan?.calls ?? Number.POSITIVE_INFINITY, sessions),
    traces: Math.min(settings.traces.retentionDays, plan?.traces ?? Number.POSITIVE_INFINITY),
  };
}

/** What one sweep removed, and whether some project has more due (sweep again at once). */
interface RetentionSweep {
  removed: Removed;
  more: boolean;
}

/**
 * One round of retention over every project: at most `batchSessions` sessions that started, and
 * were received, more than the project's `sessions` days before `now` (deleted everywhere by {@link deleteSessions},
 * one transaction per batch), at most as many calls older than its `calls` days (their rows only:
 * the session's replay stays), and a batch of spans and log records past its `traces` days; then
 * the queued blobs are removed. A crash anywhere leaves each batch either done or untouched, and
 * the blob queue drained by the next round.
 *
 * @example
 * ```ts
 * let sweep;
 * do sweep = await sweepRetention({ database, blobStore, planRetention }, new Date());
 * while (sweep.more);
 * ```
 */
export async function sweepRetention(
  dependencies: { database: Kysely<Database>; blobStore: BlobStore; planRetention: PlanRetention },
  now: Date,
  options: { batchSessions?: number; batchRows?: number } = {},
): Promise<RetentionSweep> {
  const { database, blobStore, planRetention } = dependencies;
  const batch = options.batchSessions ?? RETENTION_BATCH_SESSIONS;
  const removed: Removed = {};
  let more = false;
  const projects = await database
    .selectFrom('projects')
    .select(['id', 'organization_id', 'settings'])
    .orderBy('id')
    .execute();
  const daysByProject = new Map<string, RetentionDays>();
  for (const project of projects) {
    const days = await projectRetention(project, planRetention);
    daysByProject.set(project.id, days);
    const sessionCutoff = new Date(now.getTime() - days.sessions * DAY_MS);
    const expired = (
      await database
        .selectFrom('sessions')
        .select('id')
        .where('project_id', '=', project.id)
        .where('started_at', '<', sessionCutoff)
        // And received before then: a device whose clock is far behind does not lose its sessions
        // the moment they arrive.
        .where('created_at', '<', sessionCutoff)
        .orderBy('started_at')
        .orderBy('id')
        .limit(batch)
        .execute()
    ).map((row) => row.id);
    if (expired.length > 0) {
      addRemoved(
        removed,
        await database
          .transaction()
          .execute((transaction) => deleteSessions(transaction, project.id, expired, now)),
      );
      more ||= expired.length === batch;
    }
    const callCutoff = new Date(now.getTime() - days.calls * DAY_MS);
    const calls = await deleteExpiredCalls(database, project.id, callCutoff, batch);
    addRemoved(removed, calls);
    more ||= (calls.calls ?? 0) === batch;
  }
  const telemetry = await sweepExpiredTelemetry(
    database,
    now,
    options.batchRows,
    async (project) =>
      daysByProject.get(project.id)?.traces ?? (await projectRetention(project, planRetention)).traces,
  );
  addRemoved(removed, { spans: telemetry.spans, log_records: telemetry.logRecords });
  more ||= telemetry.more;
  addRemoved(removed, { blobs_removed: await drainBlobDeletions(database, blobStore) });
  return { removed, more };
}

/**
 * Deletes at most `limit` calls of a project that started before `cutoff`, with their tracks,
 * series pieces, items and findings (and the issue occurrences of those findings, clusters
 * corrected), in one transaction; a session left with no call loses its call progress too.
 */
async function deleteExpiredCalls(
  database: Kysely<Database>,
  projectId: string,
  cutoff: Date,
  limit: number,
): Promise<Removed> {
  return database.transaction().execute(async (transaction) => {
    const calls = await transaction
      .selectFrom('calls')
      .select(['id', 'session_id', 'pc'])
      .where('project_id', '=', projectId)
      .where('started_at', '<', cutoff)
      .where('created_at', '<', cutoff)
      .orderBy('started_at')
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .execute();
    if (calls.length === 0) return {};
    const removed: Removed = {};
    const callIds = calls.map((call) => call.id);
    for (const table of ['call_tracks', 'call_series_pieces', 'call_findings'] as const) {
      removed[table] = await deleted(
        transaction.deleteFrom(table).where('project_id', '=', projectId).where('call_id', 'in', callIds),
      );
    }
    const places = sql.join(calls.map((call) => sql`(${call.session_id}, ${call.pc})`));
    const items = await sql`
      delete from call_items where project_id = ${projectId} and (session_id, pc) in (${places})`.execute(
      transaction,
    );
    removed.call_items = Number(items.numAffectedRows ?? 0);
    const occurrences = await sql<{ cluster_id: string }>`
      delete from cluster_occurrences as occurrence
      using (values ${places}) as call (session_id, pc)
      where occurrence.project_id = ${projectId} and occurrence.session_id = call.session_id
        and occurrence.occurrence_key like 'finding:' || call.pc || ':%'
      returning occurrence.cluster_id`.execute(transaction);
    removed.cluster_occurrences = occurrences.rows.length;
    const clusterIds = [...new Set(occurrences.rows.map((row) => row.cluster_id))].sort();
    if (clusterIds.length > 0) addRemoved(removed, await correctClusters(transaction, projectId, clusterIds));
    removed.calls = await deleted(
      transaction.deleteFrom('calls').where('project_id', '=', projectId).where('id', 'in', callIds),
    );
    const sessionIds = [...new Set(calls.map((call) => call.session_id))];
    const progress = await transaction
      .deleteFrom('call_progress')
      .where('project_id', '=', projectId)
      .where('session_id', 'in', sessionIds)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('calls')
              .select(sql`1`.as('one'))
              .whereRef('calls.project_id', '=', 'call_progress.project_id')
              .whereRef('calls.session_id', '=', 'call_progress.session_id'),
          ),
        ),
      )
      .executeTakeFirst();
    removed.call_progress = Number(progress.numDeletedRows);
    return removed;
  });
}

/** How often a server process sweeps when nothing was due. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * The retention sweep of a server process: {@link sweepRetention} when started, round after round
 * while data is due, then hourly. Any number of processes may run one.
 *
 * @example
 * ```ts
 * const worker = createRetentionWorker({ database, blobStore, planRetention, log });
 * worker.start();
 * ```
 */
export function createRetentionWorker(
  dependencies: {
    database: Kysely<Database>;
    blobStore: BlobStore;
    planRetention: PlanRetention;
    log: FastifyBaseLogger;
    now?: () => Date;
  },
  options: { pollMs?: number; batchSessions?: number } = {},
): PollingLoop {
  const now = dependencies.now ?? (() => new Date());
  return createPollingLoop(
    async () => {
      const sweep = await sweepRetention(dependencies, now(), options);
      const ran = Object.values(sweep.removed).reduce((total, count) => total + count, 0);
      if (ran > 0) dependencies.log.info({ removed: sweep.removed }, 'deleted expired data');
      return { ran, more: sweep.more };
    },
    {
      pollMs: options.pollMs ?? SWEEP_EVERY_MS,
      onError: (error) => dependencies.log.error({ err: error }, 'could not delete expired data'),
    },
  );
}
