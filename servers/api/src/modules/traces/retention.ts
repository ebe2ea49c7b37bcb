import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { readSettings } from '../projects/index.ts';
import { deleteExpiredTelemetry, RETENTION_BATCH_ROWS } from './repository.ts';

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
