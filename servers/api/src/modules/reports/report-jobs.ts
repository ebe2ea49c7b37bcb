// The handlers of the report jobs (`anomaly_scan`, `digest`) that the composition (services.ts)
// gives the AI job worker: ai runs the jobs, reports (after it in the module order) knows them.
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/database/schema.ts';
import {
  type AiJobHandlers,
  anomalyScanInputSchema,
  digestInputSchema,
  type JsonValue,
} from '../ai/index.ts';
import { findProjectById } from '../projects/index.ts';
import { scanAnomalies } from './anomalies.ts';
import { makeDigest } from './digests.ts';

/** The project of a job, unless it was deleted since the job was queued. */
async function liveProject(database: Kysely<Database>, projectId: string) {
  const project = await findProjectById(database, projectId);
  return project === undefined || project.deleted_at !== null ? undefined : project;
}

/**
 * The handlers of `anomaly_scan` ({@link scanAnomalies} of the job's hour) and `digest`
 * ({@link makeDigest} of the job's period), each resolving with what it did as the job's result.
 * A job of a deleted project does nothing. `onDeliveriesQueued` is called when one queued webhook
 * deliveries (the delivery worker's `wake`).
 *
 * @example
 * ```ts
 * const worker = createAiJobWorker({ database, log, handlers: createReportJobHandlers({ appUrl }) });
 * ```
 */
export function createReportJobHandlers(options: {
  appUrl?: string | undefined;
  onDeliveriesQueued?: (() => void) | undefined;
}): AiJobHandlers {
  return {
    anomaly_scan: async (job, { database, now }): Promise<JsonValue> => {
      const { hour } = anomalyScanInputSchema.parse(job.input);
      const project = await liveProject(database, job.projectId);
      if (project === undefined) return { skipped: 'the project was deleted' };
      const scan = await scanAnomalies(database, project, hour, { now, appUrl: options.appUrl });
      if (scan.deliveries > 0) options.onDeliveriesQueued?.();
      return scan;
    },
    digest: async (job, { database, now }): Promise<JsonValue> => {
      const input = digestInputSchema.parse(job.input);
      const project = await liveProject(database, job.projectId);
      if (project === undefined) return { skipped: 'the project was deleted' };
      const made = await makeDigest(database, project, input, { now, appUrl: options.appUrl });
      if (made.deliveries > 0) options.onDeliveriesQueued?.();
      return {
        digestId: made.digest.id,
        created: made.created,
        events: made.events,
        deliveries: made.deliveries,
      };
    },
  };
}
