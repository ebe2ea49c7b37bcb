import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import { type CallsStepResult, planCalls, writeLiveCalls } from '../calls/index.ts';
import { occurrencesChanged, recordSessionIssues, symbolicateSessionErrors } from '../issues/index.ts';
import { notifyCustomEvents } from '../notifications/index.ts';
import { readSettingsText } from '../projects/index.ts';
import { readChunkBytes } from '../sessions/index.ts';
import type { Symbolicator } from '../sourcemaps/index.ts';
import {
  finishProcessingJob,
  loadProcessingInput,
  type ProcessingInput,
  type ProcessingJob,
  WRITE_LIVE_JOB,
} from './jobs.ts';

/** What processing needs from the process. */
export interface ProcessingDependencies {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: FastifyBaseLogger;
  /** The dashboard's base URL, for the links notifications carry. */
  appUrl: string;
  /** Called after a job wrote deliveries (the server wakes its delivery worker). */
  onDeliveriesQueued?: () => void;
  /** Source maps, for errors' frames (their fingerprints and what the API shows). */
  symbolicator?: Symbolicator;
}

/** What one run of a job did: its calls step's result, and what the other steps recorded. */
export interface ProcessingResult extends CallsStepResult {
  /** Occurrences newly recorded into issue clusters, and the notifications they caused. */
  occurrences: number;
  events: number;
  deliveries: number;
}

/** Another job wrote the session's progress while this one ran: this one's work is discarded. */
class ProgressConflict extends Error {}

/** Runs of a job that lost a race on its session's progress before it gives up (and is retried later). */
const CONFLICT_ATTEMPTS = 3;

const NOTHING: ProcessingResult = {
  chunksRead: 0,
  itemsAdded: 0,
  recomputed: false,
  rescored: 0,
  calls: 0,
  openCalls: 0,
  findings: 0,
  trackSamples: 0,
  occurrences: 0,
  events: 0,
  deliveries: 0,
};

/**
 * Processes one session after ingest, in steps (servers/api/docs/processing.md):
 *
 * 1. **calls** (`planCalls`, in calls): the new call items into the calls' rows, series and
 *    findings, incrementally;
 * 2. **issues** (`recordSessionIssues`, in issues): when the session's occurrences changed, its
 *    findings and errors into the project's issue clusters, whose changes write the notifications
 *    they cause;
 * 3. **custom events** (`notifyCustomEvents`, in notifications): the session's new custom events
 *    against the project's custom rules.
 *
 * Every step's input is read with the claim, in one statement. The usual live run (new items for
 * calls still open, nothing for the other steps) is written with the end of the job in one
 * statement; any other run in one transaction, the calls' progress first, the end of the job
 * last. Idempotent: a job run twice, or a crash between two runs, changes nothing; a job that
 * lost a race on the session's progress with another runs again from what that one wrote.
 */
export async function processSessionJob(
  dependencies: ProcessingDependencies,
  job: ProcessingJob,
  serverNow: number = Date.now(),
): Promise<ProcessingResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      const input =
        attempt === 1 && job.input !== undefined
          ? (job.input ?? undefined)
          : await loadProcessingInput(dependencies.database, job.projectId, job.sessionId);
      return await runSteps(dependencies, job, input, serverNow);
    } catch (error) {
      if (!(error instanceof ProgressConflict) || attempt >= CONFLICT_ATTEMPTS) throw error;
    }
  }
}

async function runSteps(
  dependencies: ProcessingDependencies,
  job: ProcessingJob,
  input: ProcessingInput | undefined,
  serverNow: number,
): Promise<ProcessingResult> {
  const { database } = dependencies;
  const { projectId, sessionId } = job;
  if (input === undefined) {
    await finishProcessingJob(database, job, undefined);
    return NOTHING;
  }
  const { project, session } = input;

  const calls = await planCalls(
    {
      database,
      readChunk: (chunk) =>
        readChunkBytes(dependencies, dependencies.log, project, {
          session_id: sessionId,
          seq: chunk.seq,
          blob_key: chunk.blobKey,
        }),
    },
    {
      projectId,
      sessionId,
      settings: readSettingsText(project.settings),
      session,
      input: input.calls,
      serverNow,
    },
  );
  const { recheckAt } = calls.result;
  const issues = occurrencesChanged(input.issues, calls.findings);
  const custom = input.customEvents.unhandledCustomEvents;

  // The usual live run: new items added to calls that are still open, with no news for issue
  // clusters or custom rules. One statement.
  if (calls.live && !issues && !custom) {
    const saved = await writeLiveCalls(database, WRITE_LIVE_JOB, calls.liveWrite(), {
      generation: job.generation,
      dueAt: recheckAt,
    });
    if (!saved) throw new ProgressConflict(`Another job processed session ${sessionId} meanwhile`);
    return { ...calls.result, occurrences: 0, events: 0, deliveries: 0 };
  }

  // Errors' frames through the source maps, before the transaction: maps are read from the
  // database and the blob store.
  const { symbolicator } = dependencies;
  const symbolicated =
    issues && input.issues.unrecordedErrors && session !== undefined && symbolicator !== undefined
      ? await symbolicateSessionErrors(
          database,
          projectId,
          { id: sessionId, release: session.release },
          (id, release, frames) => symbolicator.symbolicate(id, release ?? undefined, frames),
        )
      : undefined;

  const recorded = await database.transaction().execute(async (transaction) => {
    // First the calls and their progress: a job that read another version stops here, before
    // any other write.
    if (!(await calls.write(transaction)))
      throw new ProgressConflict(`Another job processed session ${sessionId} meanwhile`);

    let notified: { occurrences: number; events: number; deliveries: number } | undefined;
    if (session !== undefined) {
      const described = {
        id: sessionId,
        startedAt: session.started_at.getTime(),
        release: session.release,
        environment: session.environment,
        url: session.url,
      };
      const at = { now: new Date(serverNow), appUrl: dependencies.appUrl };
      const clustered = issues
        ? await recordSessionIssues(transaction, project, described, calls.findings, {
            ...at,
            ...(symbolicated === undefined ? {} : { symbolicated }),
          })
        : { added: 0, events: [], deliveries: 0 };
      const customized = custom
        ? await notifyCustomEvents(transaction, project, described, at)
        : { events: [], deliveries: 0 };
      notified = {
        occurrences: clustered.added,
        events: clustered.events.length + customized.events.length,
        deliveries: clustered.deliveries + customized.deliveries,
      };
    }
    await finishProcessingJob(transaction, job, recheckAt);
    return notified;
  });
  if ((recorded?.deliveries ?? 0) > 0) dependencies.onDeliveriesQueued?.();

  return {
    ...calls.result,
    occurrences: recorded?.occurrences ?? 0,
    events: recorded?.events ?? 0,
    deliveries: recorded?.deliveries ?? 0,
  };
}
