import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { createPollingLoop, type PollingLoop } from '../../platform/jobs/polling-loop.ts';
import { readSettings } from '../projects/index.ts';
import { deleteExpiredTelemetry, RETENTION_BATCH_ROWS } from './repository.ts';

/** How often a server process sweeps expired telemetry when nothing is left to delete. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Deletes every project's spans and log records older than its `traces.retentionDays` setting
 * (whole UTC days), at most `batchRows` of each table per project; returns how many rows went and
 * whether some project has more to delete (then the caller sweeps again).
 *
 * @example
 * ```ts
 * let sweep;
 * do sweep = await sweepExpiredTelemetry(database, new Date());
 * while (sweep.more);
 * ```
 */
export async function sweepExpiredTelemetry(
  database: Kysely<Database>,
  now: Date,
  batchRows = RETENTION_BATCH_ROWS,
  /** The days a project's telemetry is kept (default: its setting); the privacy module lowers it to the plan's. */
  retentionDaysOf: (project: {
    id: string;
    organization_id: string;
    settings: unknown;
  }) => Promise<number> = async (project) => readSettings(project.settings).traces.retentionDays,
): Promise<{ spans: number; logRecords: number; more: boolean }> {
  const projects = await database
    .selectFrom('projects')
    .select(['id', 'organization_id', 'settings'])
    .execute();
  const total = { spans: 0, logRecords: 0, more: false };
  for (const project of projects) {
    const retentionDays = await retentionDaysOf(project);
    const deleted = await deleteExpiredTelemetry(database, project.id, retentionDays, now, batchRows);
    total.spans += deleted.spans;
    total.logRecords += deleted.logRecords;
    total.more ||= deleted.spans === batchRows || deleted.logRecords === batchRows;
  }
  return total;
}

/**
 * The telemetry retention sweep of a server process: {@link sweepExpiredTelemetry} when started,
 * batch after batch while rows are due, then every hour (`pollMs`). Any number of processes may
 * run one: a row is deleted once.
 *
 * @example
 * ```ts
 * const worker = createTelemetryRetentionWorker({ database, log });
 * worker.start();
 * ```
 */
export function createTelemetryRetentionWorker(
  dependencies: { database: Kysely<Database>; log: FastifyBaseLogger; now?: () => Date },
  options: { pollMs?: number; batchRows?: number } = {},
): PollingLoop {
  const now = dependencies.now ?? (() => new Date());
  return createPollingLoop(
    async () => {
      const swept = await sweepExpiredTelemetry(dependencies.database, now(), options.batchRows);
      const ran = swept.spans + swept.logRecords;
      if (ran > 0) dependencies.log.info(swept, `deleted ${ran} expired span(s) and log record(s)`);
      return { ran, more: swept.more };
    },
    {
      pollMs: options.pollMs ?? SWEEP_EVERY_MS,
      onError: (error) => dependencies.log.error({ err: error }, 'could not delete expired telemetry'),
    },
  );
}
