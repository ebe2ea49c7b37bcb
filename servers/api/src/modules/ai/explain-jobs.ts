// Asynchronous explanations (servers/api/README.md, The model): `POST …/explain` with
// `async: true` queues an AI job instead of answering at once (a model may take a minute); the job
// keeps the answer as its result (`GET /v1/ai/jobs/{id}`) and announces it with
// `ai.deep_analysis_ready` through the notification rules.

import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { Configuration } from '../../platform/config.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { Project } from '../../platform/database/tables/projects.table.ts';
import {
  buildTranscript,
  explainCall,
  explainCluster,
  explainSession,
  readTranscriptSources,
} from '../analysis/index.ts';
import { findCluster } from '../issues/index.ts';
import { type NotificationDraft, notify } from '../notifications/index.ts';
import { findProjectById } from '../projects/index.ts';
import type { AiJobHandlers } from './job-worker.ts';
import type { JsonValue } from './jobs.ts';
import { modelAccess } from './model.ts';
import { type ModelNote, noModel } from './model-note.ts';
import { clusterPrompt, evidenceIdsOf, sessionPrompt, writeProse } from './prose.ts';
import { scrubText } from './scrub.ts';

const explainSessionInputSchema = z.object({ sessionId: z.string(), callId: z.string().optional() });
const explainIssueInputSchema = z.object({ clusterId: z.string() });

/** What the explanation jobs need besides the database: chunks to read, the model, links. */
interface ExplainJobOptions {
  blobStore: BlobStore;
  masterKey: MasterKey;
  configuration: Pick<Configuration, 'ai' | 'appUrl'>;
  onDeliveriesQueued?: () => void;
}

function announce(
  subject: { type: 'session' | 'call' | 'issue'; id: string },
  summary: string,
  problems: number,
  ai: ModelNote,
  links: Record<string, string>,
  jobId: string,
): NotificationDraft {
  return {
    type: 'ai.deep_analysis_ready',
    subject: { type: 'ai.deep_analysis_ready' },
    throttleKey: `ai.deep_analysis_ready:${jobId}`,
    data: {
      title: `Explanation ready: ${subject.type} ${subject.id}`,
      // What the app put in the clear in an error message (an e-mail address) does not travel on.
      summary: scrubText(ai.used ? `${summary} A model added an explanation.` : summary).text,
      severity: 'info',
      counts: { problems },
      links,
      analysis: { jobId, subject, modelUsed: ai.used },
    } as NotificationDraft['data'],
  };
}

/**
 * The handlers of `explain_session` and `explain_issue`: the deterministic explanation, the
 * model's prose when the organization's settings allow it, kept as the job's result and announced
 * with `ai.deep_analysis_ready`. A session or issue gone since the job was queued ends it with
 * `{ skipped }`. Run again after a crash, a job may announce twice (webhooks are at least once).
 */
export function createExplainJobHandlers(options: ExplainJobOptions): AiJobHandlers {
  const { configuration } = options;
  const appUrl = configuration.appUrl;
  const stores = (database: Kysely<Database>) => ({
    database,
    blobStore: options.blobStore,
    masterKey: options.masterKey,
  });

  async function proseOf(
    database: Kysely<Database>,
    project: Project,
    ask: () => Promise<{ prompt: string; known: ReadonlySet<string> }>,
    log: FastifyBaseLogger,
  ): Promise<ModelNote> {
    const access = await modelAccess(database, configuration, {
      organizationId: project.organization_id,
      projectId: project.id,
      feature: 'explain',
    });
    if (!access.allowed) return noModel(access.reason);
    const { prompt, known } = await ask();
    return writeProse(database, access, { prompt, known, log });
  }

  async function finish(database: Kysely<Database>, project: Project, draft: NotificationDraft, now: Date) {
    const notified = await notify(database, project, [draft], now);
    if (notified.deliveries > 0) options.onDeliveriesQueued?.();
    return notified.events[0] ?? null;
  }

  return {
    explain_session: async (job, { database, now, log }): Promise<JsonValue> => {
      const { sessionId, callId } = explainSessionInputSchema.parse(job.input);
      const project = await findProjectById(database, job.projectId);
      if (project === undefined || project.deleted_at !== null) return { skipped: 'the project was deleted' };
      const sources = await readTranscriptSources(stores(database), log, project, sessionId);
      if (sources === undefined) return { skipped: 'the session is gone' };
      const explanation = callId === undefined ? explainSession(sources) : explainCall(sources, callId);
      if (explanation === undefined) return { skipped: 'the call is gone' };
      const ai = await proseOf(
        database,
        project,
        async () => {
          const transcript = buildTranscript(sources);
          return {
            prompt: sessionPrompt(
              transcript,
              explanation,
              project,
              `Explain the problems of this ${callId === undefined ? 'session' : `call (${callId})`} to a developer, most severe first: what happened, with its evidence, the most likely cause and what to try first. Cite evidence ids.`,
            ),
            known: evidenceIdsOf(transcript),
          };
        },
        log,
      );
      const eventId = await finish(
        database,
        project,
        announce(
          explanation.subject,
          explanation.summary,
          explanation.problems.length,
          ai,
          { session: `${appUrl}/sessions/${sessionId}` },
          job.id,
        ),
        now,
      );
      return { explanation, ai, eventId } as unknown as JsonValue;
    },
    explain_issue: async (job, { database, now, log }): Promise<JsonValue> => {
      const { clusterId } = explainIssueInputSchema.parse(job.input);
      const project = await findProjectById(database, job.projectId);
      if (project === undefined || project.deleted_at !== null) return { skipped: 'the project was deleted' };
      const cluster = await findCluster(database, project.id, clusterId);
      if (cluster === undefined) return { skipped: 'the issue is gone' };
      const explanation = await explainCluster(database, project.id, cluster);
      const ai = await proseOf(
        database,
        project,
        () => clusterPrompt(stores(database), log, project, explanation),
        log,
      );
      const eventId = await finish(
        database,
        project,
        announce(
          explanation.subject,
          explanation.summary,
          explanation.causes.length,
          ai,
          { issue: `${appUrl}/issues/${clusterId}` },
          job.id,
        ),
        now,
      );
      return { explanation, ai, eventId } as unknown as JsonValue;
    },
  };
}
