import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import { insertBatches } from '../../platform/database/insert-batches.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { NewClickFact, NewPageView } from '../../platform/database/tables/insights.table.ts';
import type { PollingLoop } from '../../platform/jobs/polling-loop.ts';
import {
  claimSessionJobs,
  createSessionJobWorker,
  finishSessionJob,
  type SessionJob,
  sessionQueue,
} from '../../platform/jobs/session-jobs.ts';
import { readSettingsText } from '../projects/index.ts';
import { readChunkBytes } from '../sessions/index.ts';
import { findLeaks, type LeakFinding, reportLeaks } from './leak-radar.ts';
import {
  addFactEvents,
  type ClickFact,
  type FactEvent,
  type FactsState,
  type PageViewFact,
  startFacts,
} from './page-facts.ts';

// The facts job (servers/api/README.md, Insights): one row of `insight_jobs` per session with new
// chunks, queued by ingest in the chunk's own statement. A run reads the session's chunks after
// the ones it consumed, feeds their events to the state the last run left (`insight_progress`)
// and writes the page views it touched and the new click facts, with the state, in one
// transaction. A late chunk (one numbered below what was consumed) makes the run compute the
// session again from all its chunks. Idempotent, and safe with any number of workers: a run
// writes only over the progress version it read.

const INSIGHT_JOBS = sessionQueue('insight_jobs');

/** Bumped when the facts of a session would come out differently: stored progress is then redone. */
const FACTS_VERSION = 1;

/** What the facts job needs from the process. */
export interface FactsJobDependencies {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: FastifyBaseLogger;
  /** The dashboard's base URL, for the links the leak radar's events carry. */
  appUrl: string;
  /** Called after a run wrote deliveries (the server wakes its delivery worker). */
  onDeliveriesQueued?: () => void;
}

/** A claimed job. */
export type FactsJob = SessionJob;

/** What one run did. */
export interface FactsJobResult {
  chunksRead: number;
  events: number;
  /** Whether the session was computed again from all its chunks. */
  recomputed: boolean;
  views: number;
  clicks: number;
}

/** The state kept between runs, with what was consumed. */
interface StoredState {
  version: number;
  /** How many chunks at or below `consumed_seq` were consumed (a late chunk makes it lag). */
  consumedChunks: number;
  facts: FactsState;
}

/** Another run wrote the session's progress meanwhile: this one's work is dropped. */
class ProgressConflict extends Error {}

/**
 * Claims up to `limit` due facts jobs for `leaseMs` (`for update skip locked`: concurrent
 * workers never take the same job).
 *
 * @example
 * ```ts
 * for (const job of await claimFactsJobs(database, 8, 60_000)) await runFactsJob(dependencies, job);
 * ```
 */
export function claimFactsJobs(
  database: Kysely<Database>,
  limit: number,
  leaseMs: number,
): Promise<FactsJob[]> {
  return claimSessionJobs(database, INSIGHT_JOBS, limit, leaseMs);
}

/** A chunk's meta and wire events, as stored. */
function parseChunk(bytes: Uint8Array): { meta?: unknown; events: unknown[] } {
  const parsed = JSON.parse(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  ) as {
    meta?: unknown;
    events?: unknown;
  };
  return { meta: parsed.meta, events: Array.isArray(parsed.events) ? parsed.events : [] };
}

/** A chunk's wire events, as the facts read them. */
function eventsOf(events: readonly unknown[]): FactEvent[] {
  return events.filter(
    (event): event is FactEvent =>
      typeof event === 'object' &&
      event !== null &&
      typeof (event as FactEvent).t === 'number' &&
      typeof (event as FactEvent).type === 'string',
  );
}

/**
 * Runs one facts job: see the top of this file. A run that lost a race on the session's progress
 * runs again from what the other wrote (up to 3 times, then it throws and is retried later).
 */
export async function runFactsJob(
  dependencies: FactsJobDependencies,
  job: FactsJob,
): Promise<FactsJobResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(dependencies, job);
    } catch (error) {
      if (!(error instanceof ProgressConflict) || attempt >= 3) throw error;
    }
  }
}

async function runOnce(dependencies: FactsJobDependencies, job: FactsJob): Promise<FactsJobResult> {
  const { database } = dependencies;
  const { projectId, sessionId } = job;
  const project = await database
    .selectFrom('projects')
    .select(['id', 'organization_id', 'wrapped_data_key', sql<string | null>`settings::text`.as('settings')])
    .where('id', '=', projectId)
    .executeTakeFirst();
  const session = await database
    .selectFrom('sessions')
    .select(['url', 'device', 'browser_name', 'release', 'environment'])
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
  const nothing = { chunksRead: 0, events: 0, recomputed: false, views: 0, clicks: 0 };
  if (project === undefined) {
    await finishSessionJob(database, INSIGHT_JOBS, job);
    return nothing;
  }
  const progress = await database
    .selectFrom('insight_progress')
    .select(['version', 'consumed_seq', 'state'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  // The chunks after the watermark, and how many there are at or below it (a late chunk makes
  // that more than were consumed): two reads by the chunks' key, whatever the session's length.
  const watermark = progress?.consumed_seq ?? -1;
  const after = await database
    .selectFrom('chunks')
    .select(['seq', 'blob_key'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('seq', '>', watermark)
    .orderBy('seq')
    .execute();
  const below =
    progress === undefined
      ? 0
      : Number(
          (
            await database
              .selectFrom('chunks')
              .select((select) => select.fn.countAll<string>().as('count'))
              .where('project_id', '=', projectId)
              .where('session_id', '=', sessionId)
              .where('seq', '<=', watermark)
              .executeTakeFirstOrThrow()
          ).count,
        );

  let stored: StoredState | undefined;
  if (progress !== undefined) {
    const parsed = JSON.parse(progress.state) as StoredState;
    if (parsed.version === FACTS_VERSION && parsed.consumedChunks === below) stored = parsed;
  }
  const recomputed = stored === undefined;
  const consumedSeq = stored === undefined ? -1 : watermark;
  const fresh =
    stored === undefined && watermark >= 0
      ? await database
          .selectFrom('chunks')
          .select(['seq', 'blob_key'])
          .where('project_id', '=', projectId)
          .where('session_id', '=', sessionId)
          .orderBy('seq')
          .execute()
      : after;

  const events: FactEvent[] = [];
  // The leak radar looks at the same chunks (leak-radar.ts): a recomputed session is scanned
  // again, and its reports are held back by the project's hourly throttle.
  const leaks: LeakFinding[] = [];
  for (const chunk of fresh) {
    const bytes = await readChunkBytes(dependencies, dependencies.log, project, {
      session_id: sessionId,
      seq: chunk.seq,
      blob_key: chunk.blob_key,
    });
    const parsed = parseChunk(bytes);
    events.push(...eventsOf(parsed.events));
    leaks.push(...findLeaks(chunk.seq, parsed));
  }
  // Events are taken in the order the SDK wrote them (chunk by chunk, in seq order), not sorted
  // by time: a page's last vitals, reported as it unloads, come before the next page's load in
  // that order, though the next page's navigation started earlier.

  const facts = stored?.facts ?? startFacts();
  const settings = readSettingsText(project.settings);
  const changes = addFactEvents(facts, events, {
    url: session?.url ?? null,
    routePatterns: settings.insights.routePatterns,
  });
  const next: StoredState = {
    version: FACTS_VERSION,
    consumedChunks: (recomputed ? 0 : below) + fresh.length,
    facts,
  };

  const reported = await database.transaction().execute(async (transaction) => {
    const written = await saveProgress(transaction, job, progress?.version, {
      consumedSeq: Math.max(consumedSeq, fresh.at(-1)?.seq ?? -1),
      state: JSON.stringify(next),
    });
    if (!written)
      throw new ProgressConflict(`Another job derived the facts of session ${sessionId} meanwhile`);
    if (recomputed) {
      await transaction
        .deleteFrom('page_views')
        .where('project_id', '=', projectId)
        .where('session_id', '=', sessionId)
        .execute();
      await transaction
        .deleteFrom('click_facts')
        .where('project_id', '=', projectId)
        .where('session_id', '=', sessionId)
        .execute();
    }
    const sessionFacts = {
      device: session?.device ?? null,
      browser_name: session?.browser_name ?? null,
      release: session?.release ?? null,
      environment: session?.environment ?? null,
    };
    for (const batch of insertBatches(
      changes.views.map((view) => pageViewRow(projectId, sessionId, view, sessionFacts)),
      500,
    )) {
      await transaction
        .insertInto('page_views')
        .values(batch)
        .onConflict((conflict) =>
          conflict.columns(['project_id', 'session_id', 'view_index']).doUpdateSet((update) => ({
            ended_at: update.ref('excluded.ended_at'),
            duration_ms: update.ref('excluded.duration_ms'),
            viewport_width: update.ref('excluded.viewport_width'),
            breakpoint: update.ref('excluded.breakpoint'),
            page_height: update.ref('excluded.page_height'),
            scroll_depth: update.ref('excluded.scroll_depth'),
            clicks: update.ref('excluded.clicks'),
            rage_clicks: update.ref('excluded.rage_clicks'),
            dead_clicks: update.ref('excluded.dead_clicks'),
            lcp: update.ref('excluded.lcp'),
            inp: update.ref('excluded.inp'),
            cls: update.ref('excluded.cls'),
            fcp: update.ref('excluded.fcp'),
            ttfb: update.ref('excluded.ttfb'),
            device: update.ref('excluded.device'),
            browser_name: update.ref('excluded.browser_name'),
            release: update.ref('excluded.release'),
            environment: update.ref('excluded.environment'),
          })),
        )
        .execute();
    }
    for (const batch of insertBatches(
      changes.clicks.map((click) => clickRow(projectId, sessionId, click)),
      500,
    )) {
      await transaction
        .insertInto('click_facts')
        .values(batch)
        .onConflict((conflict) =>
          conflict.columns(['project_id', 'session_id', 'kind', 'ordinal']).doNothing(),
        )
        .execute();
    }
    const leakReports =
      leaks.length === 0
        ? { events: 0, deliveries: 0 }
        : await reportLeaks(transaction, project, sessionId, leaks, {
            now: new Date(),
            appUrl: dependencies.appUrl,
          });
    await finishSessionJob(transaction, INSIGHT_JOBS, job);
    return leakReports;
  });
  if (reported.deliveries > 0) dependencies.onDeliveriesQueued?.();
  return {
    chunksRead: fresh.length,
    events: events.length,
    recomputed,
    views: changes.views.length,
    clicks: changes.clicks.filter((click) => click.kind === 'click').length,
  };
}

/** The UTC day of a time, as `YYYY-MM-DD`. */
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

function pageViewRow(
  projectId: string,
  sessionId: string,
  view: PageViewFact,
  session: Pick<NewPageView, 'device' | 'browser_name' | 'release' | 'environment'>,
): NewPageView {
  return {
    project_id: projectId,
    session_id: sessionId,
    view_index: view.viewIndex,
    started_at: new Date(view.startedAt),
    day: dayOf(view.startedAt),
    ended_at: new Date(view.endedAt),
    duration_ms: Math.max(0, Math.round(view.endedAt - view.startedAt)),
    route: view.route,
    viewport_width: view.viewportWidth === null ? null : Math.round(view.viewportWidth),
    breakpoint: view.breakpoint,
    page_height: view.pageHeight === null ? null : Math.round(view.pageHeight),
    scroll_depth: view.scrollDepth === null ? null : Math.round(view.scrollDepth),
    clicks: view.clicks,
    rage_clicks: view.rageClicks,
    dead_clicks: view.deadClicks,
    lcp: view.vitals.LCP ?? null,
    inp: view.vitals.INP ?? null,
    cls: view.vitals.CLS ?? null,
    fcp: view.vitals.FCP ?? null,
    ttfb: view.vitals.TTFB ?? null,
    ...session,
  };
}

function clickRow(projectId: string, sessionId: string, click: ClickFact): NewClickFact {
  return {
    project_id: projectId,
    session_id: sessionId,
    kind: click.kind,
    ordinal: click.ordinal,
    view_index: click.viewIndex,
    t: new Date(click.t),
    day: dayOf(click.t),
    route: click.route,
    breakpoint: click.breakpoint,
    selector: click.selector,
    page_x: click.pageX,
    page_y: click.pageY,
    element_x: click.elementX,
    element_y: click.elementY,
    count: click.count,
  };
}

/** Writes the session's progress over the version read (none: a first row). False when it moved. */
async function saveProgress(
  transaction: Transaction<Database>,
  job: FactsJob,
  readVersion: number | undefined,
  progress: { consumedSeq: number; state: string },
): Promise<boolean> {
  const row = {
    project_id: job.projectId,
    session_id: job.sessionId,
    consumed_seq: progress.consumedSeq,
    state: progress.state,
    updated_at: new Date(),
  };
  if (readVersion === undefined) {
    const inserted = await transaction
      .insertInto('insight_progress')
      .values({ ...row, version: 1 })
      .onConflict((conflict) => conflict.columns(['project_id', 'session_id']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  }
  const updated = await transaction
    .updateTable('insight_progress')
    .set({ ...row, version: readVersion + 1 })
    .where('project_id', '=', job.projectId)
    .where('session_id', '=', job.sessionId)
    .where('version', '=', readVersion)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Totals of a facts worker since it was created. */
interface FactsWorkerStats {
  jobs: number;
  failures: number;
  chunksRead: number;
  recomputed: number;
}

/** The in-process worker of facts jobs. */
export interface FactsWorker extends PollingLoop {
  stats(): FactsWorkerStats;
}

/**
 * A worker that claims due facts jobs and runs them, a few at once. A job that throws is released
 * with a backoff (1 s doubling to 10 minutes, its error kept in `last_error`) and never lost.
 *
 * @example
 * ```ts
 * const worker = createFactsWorker({ database, blobStore, masterKey, log, appUrl });
 * worker.start();
 * ```
 */
export function createFactsWorker(
  dependencies: FactsJobDependencies,
  options: { pollMs?: number; batchSize?: number; concurrency?: number; leaseMs?: number } = {},
): FactsWorker {
  const totals = { jobs: 0, chunksRead: 0, recomputed: 0 };
  const loop = createSessionJobWorker(
    dependencies,
    INSIGHT_JOBS,
    {
      what: 'deriving session facts',
      async run(job) {
        const result = await runFactsJob(dependencies, job);
        totals.jobs += 1;
        totals.chunksRead += result.chunksRead;
        if (result.recomputed) totals.recomputed += 1;
      },
    },
    {
      batchSize: options.batchSize ?? 8,
      leaseMs: options.leaseMs ?? 120_000,
      concurrency: options.concurrency ?? 1,
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    },
  );
  return { ...loop, stats: () => ({ ...totals, failures: loop.failures() }) };
}
