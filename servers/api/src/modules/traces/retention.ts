import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import { readSettings } from '../projects/index.ts';
import { deleteExpiredTelemetry } from './repository.ts';

/**
 * Deletes every project's spans and log records older than its `traces.retentionDays` setting
 * (whole UTC days); returns how many rows went. A worker runs it on a schedule (later); tests and
 * operators call it directly.
 *
 * @example
 * ```ts
 * const { spans, logRecords } = await sweepExpiredTelemetry(database, new Date());
 * ```
 */
export async function sweepExpiredTelemetry(
  database: Kysely<Database>,
  now: Date,
): Promise<{ spans: number; logRecords: number }> {
  const projects = await database.selectFrom('projects').select(['id', 'settings']).execute();
  const total = { spans: 0, logRecords: 0 };
  for (const project of projects) {
    const { retentionDays } = readSettings(project.settings).traces;
    const deleted = await deleteExpiredTelemetry(database, project.id, retentionDays, now);
    total.spans += deleted.spans;
    total.logRecords += deleted.logRecords;
  }
  return total;
}
