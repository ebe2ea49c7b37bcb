import { type Finding, resolveThresholds, type Thresholds } from '@svc/detectors';
import { type CallEvent, type CallSample, parseChunk } from '@svc/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import { insertBatches } from '../../platform/database/insert-batches.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { NewCall, NewCallItem } from '../../platform/database/tables/calls.table.ts';
import type { Session } from '../../platform/database/tables/sessions.table.ts';
import { createId } from '../../platform/ids.ts';
import {
  addItems,
  type CALL_COLUMNS,
  type CallFacts,
  type CallJobInput,
  claimAndLoadCallJobs,
  comesAfter,
  deleteCallProgress,
  deleteSeriesPieces,
  emptyConnectionSeries,
  findCallItems,
  findCallSamples,
  findChunksAfter,
  findErrorSignals,
  foldSeriesPieces,
  insertSeriesPieces,
  KEPT_CALL_COLUMNS,
  loadCallJob,
  type PlacedCallItem,
  PROGRESS_VERSION,
  rescoreCall,
  type SeriesPiece,
  type SeriesPieces,
  type SessionChunk,
  type SessionProgress,
  type StoredCallProgress,
  sameThresholds,
  saveCallProgress,
  seriesPiecesRow,
  sortItems,
  startProgress,
  summarizeProgress,
  writeIncrementalJob,
} from '../calls/index.ts';
import { errorOccurrence, findingOccurrences, recordOccurrences } from '../issues/index.ts';
import { notifyCustomEvents } from '../notifications/index.ts';
import { readSettingsText } from '../projects/index.ts';
import { readChunkBytes } from '../sessions/index.ts';

/** What processing needs from the process. */
export interface CallProcessingDependencies {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: FastifyBaseLogger;
  /** The dashboard's base URL, for the links notifications carry. */
  appUrl: string;
  /** Called after a job wrote deliveries (the server wakes its delivery worker). */
  onDeliveriesQueued?: () => void;
}

/** A claimed job: the session to process and the generation the worker saw. */
export interface ClaimedCallJob {
  projectId: string;
  sessionId: string;
  generation: number;
  attempts: number;
  /**
   * What the job reads, read with the claim (`null`: the project is gone). Absent, the job reads
   * it when it runs; a run that lost a race on the session's progress reads it again.
   */
  input?: CallJobInput | null;
}

/**
 * Claims up to `limit` due jobs for `leaseMs` (a worker that dies loses them when the lease
 * ends) and reads what each needs, in one statement. Concurrent workers, in this process or
 * others on the same PostgreSQL, never claim the same job: `for update skip locked`. With
 * `coalesceMs`, a job whose previous run finished less than that ago is left until then (see
 * {@link claimCallJobBatch}).
 */
export async function claimCallJobs(
  database: Kysely<Database>,
  limit: number,
  leaseMs: number,
  options: { coalesceMs?: number } = {},
): Promise<ClaimedCallJob[]> {
  return (await claimCallJobBatch(database, { limit, leaseMs, coalesceMs: options.coalesceMs ?? 0 })).jobs;
}

/**
 * {@link claimCallJobs}, and when the next job not claimed now becomes claimable (looking
 * `horizonMs` ahead): what a worker sleeps until. A session's job that ran less than
 * `coalesceMs` ago is left until then, so that the chunks it receives meanwhile become one job.
 */
export async function claimCallJobBatch(
  database: Kysely<Database>,
  options: { limit: number; leaseMs: number; coalesceMs: number; horizonMs?: number },
): Promise<{ jobs: ClaimedCallJob[]; nextDueInMs: number | undefined }> {
  const claimed = await claimAndLoadCallJobs(database, {
    limit: options.limit,
    leaseSeconds: options.leaseMs / 1000,
    coalesceSeconds: options.coalesceMs / 1000,
    horizonSeconds: (options.horizonMs ?? 0) / 1000,
  });
  return {
    jobs: claimed.jobs.map((row) => ({
      projectId: row.projectId,
      sessionId: row.sessionId,
      generation: row.generation,
      attempts: row.attempts,
      input: row.input ?? null,
    })),
    nextDueInMs: claimed.nextDueInMs,
  };
}

/**
 * Ends a job that ran: deleted when no chunk arrived meanwhile and every call is closed; due
 * again at `recheckAt` when a call is still open (to close it for inactivity); due at once when
 * a chunk arrived meanwhile (its generation moved on).
 */
async function finishCallJob(
  executor: Kysely<Database> | Transaction<Database>,
  job: ClaimedCallJob,
  recheckAt: Date | undefined,
): Promise<void> {
  const where = { project_id: job.projectId, session_id: job.sessionId };
  if (recheckAt === undefined) {
    await executor
      .deleteFrom('call_jobs')
      .where((w) => w.and({ ...where, generation: job.generation }))
      .execute();
  }
  await executor
    .updateTable('call_jobs')
    .set({
      locked_until: null,
      attempts: 0,
      last_error: null,
      finished_at: sql<Date>`now()`,
      due_at: sql<Date>`case when generation = ${job.generation} then ${recheckAt ?? new Date()}::timestamptz else due_at end`,
    })
    .where((w) => w.and(where))
    .execute();
}

/**
 * Queues every session with call data (of one project, or of all) for processing again, due now,
 * and deletes their incremental progress so that each is recomputed from all its items: after a
 * change of detector thresholds, or of this server's processing. Items already read stay in
 * `call_items`, so this recomputes without reading blobs again.
 *
 * @returns how many sessions were queued.
 */
export async function queueCallReprocessing(database: Kysely<Database>, projectId?: string): Promise<number> {
  return database.transaction().execute(async (transaction) => {
    await deleteCallProgress(transaction, projectId);
    const { rows } = await sql<{ session_id: string }>`
      insert into call_jobs (project_id, session_id, due_at)
      select distinct project_id, session_id, now() from chunks
      where call_item_count > 0 ${projectId === undefined ? sql`` : sql`and project_id = ${projectId}`}
      order by project_id, session_id
      on conflict (project_id, session_id) do update
        set generation = call_jobs.generation + 1, due_at = now()
      returning session_id`.execute(transaction);
    return rows.length;
  });
}

/** Backoff after the n-th failed attempt: 1 s, 2 s, 4 s, ... at most 10 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(600_000, 1_000 * 2 ** Math.max(0, attempts - 1));
}

/** Releases a job whose processing threw; it is due again after {@link retryDelayMs}. */
export async function failCallJob(
  database: Kysely<Database>,
  job: ClaimedCallJob,
  error: unknown,
): Promise<void> {
  await database
    .updateTable('call_jobs')
    .set({
      locked_until: null,
      due_at: new Date(Date.now() + retryDelayMs(job.attempts)),
      last_error: String(error instanceof Error ? error.message : error).slice(0, 1000),
    })
    .where((w) => w.and({ project_id: job.projectId, session_id: job.sessionId }))
    .execute();
}

/**
 * The call items of a stored chunk's JSON, validated exactly as ingest validated them, at their
 * places (`index` counts every event as sent, unknown types included).
 */
export function callItemsOfChunk(bytes: Uint8Array, seq: number): PlacedCallItem[] {
  const parsed = parseChunk(
    JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')),
  );
  if (!parsed.success) throw new Error(`Stored chunk ${seq} no longer validates: ${parsed.error.message}`);
  const skipped = new Set(parsed.skipped.map((entry) => entry.index));
  const placed: PlacedCallItem[] = [];
  let index = 0;
  for (const event of parsed.chunk.events) {
    while (skipped.has(index)) index += 1;
    if (event.type === 'call.sample' || event.type === 'call.event')
      placed.push({ seq, index, item: event as CallSample | CallEvent });
    index += 1;
  }
  return placed;
}

/** A `call_items` row, its item as a value (for a jsonb parameter). */
function itemRecord(projectId: string, sessionId: string, entry: PlacedCallItem) {
  const { item } = entry;
  return {
    project_id: projectId,
    session_id: sessionId,
    seq: entry.seq,
    event_index: entry.index,
    pc: item.pc ?? null,
    t: new Date(item.t),
    type: item.type,
    name: item.type === 'call.event' ? item.name : null,
    item,
  };
}

function itemRow(projectId: string, sessionId: string, entry: PlacedCallItem): NewCallItem {
  const record = itemRecord(projectId, sessionId, entry);
  return { ...record, item: JSON.stringify(record.item) as never };
}

/** The `calls` row of a call, jsonb columns as values (its id is kept when the call exists). */
function callRecord(
  projectId: string,
  sessionId: string,
  call: CallFacts,
  session: SessionFacts | undefined,
  series: object,
) {
  return {
    project_id: projectId,
    id: createId('call'),
    session_id: sessionId,
    pc: call.pc,
    started_at: new Date(call.startedAt),
    last_item_at: new Date(call.lastItemAt),
    ended_at: call.endedAt === null ? null : new Date(call.endedAt),
    duration_ms: call.durationMs,
    state: call.state,
    end_reason: call.endReason,
    setup_ms: call.setupMs,
    connected: call.connected,
    failed_to_connect: call.failedToConnect,
    failure_reason: call.failureReason,
    relayed: call.relayed,
    local_types: call.localTypes,
    remote_types: call.remoteTypes,
    protocol: call.protocol,
    network_type: call.networkType,
    browser_name: session?.browser_name ?? null,
    browser_version: session?.browser_version ?? null,
    os_name: session?.os_name ?? null,
    os_version: session?.os_version ?? null,
    device: session?.device ?? null,
    release: session?.release ?? null,
    environment: session?.environment ?? null,
    end_user_id: session?.user_id ?? null,
    quality_score: call.qualityScore,
    codec: call.codec,
    codecs: call.codecs,
    sample_count: call.sampleCount,
    track_count: call.trackCount,
    issue_kinds: call.issueKinds,
    issue_count: call.issueKinds.length,
    has_issue: call.hasIssue,
    max_severity: call.maxSeverity,
    series,
  } satisfies Record<(typeof CALL_COLUMNS)[number], unknown>;
}

/** The `calls` row of a call for kysely (jsonb columns as JSON text). */
function callRow(...parameters: Parameters<typeof callRecord>): NewCall {
  const record = callRecord(...parameters);
  return {
    ...record,
    local_types: JSON.stringify(record.local_types),
    remote_types: JSON.stringify(record.remote_types),
    codecs: JSON.stringify(record.codecs),
    issue_kinds: JSON.stringify(record.issue_kinds),
    series: JSON.stringify(record.series),
  };
}

/** The session's columns a call copies. */
const SESSION_FACTS = [
  'browser_name',
  'browser_version',
  'os_name',
  'os_version',
  'device',
  'release',
  'environment',
  'user_id',
] as const satisfies ReadonlyArray<keyof Session>;

type SessionFacts = Pick<Session, (typeof SESSION_FACTS)[number]>;

/** What one run of a job did. */
export interface CallProcessingResult {
  /** Chunks read from the blob store in this run (their items are now in `call_items`). */
  chunksRead: number;
  itemsAdded: number;
  /**
   * Whether the session was computed from all its items (no usable progress, other thresholds,
   * or a late chunk whose items come before items already consumed) rather than by adding the
   * new items to its progress.
   */
  recomputed: boolean;
  /** Calls whose score was summed again from all their samples (a window longer than every one before). */
  rescored: number;
  calls: number;
  openCalls: number;
  findings: number;
  /** Track samples added to the calls' series in this run (all of the session's when recomputed). */
  trackSamples: number;
  /** Occurrences newly recorded into issue clusters, and the notifications they caused. */
  occurrences: number;
  events: number;
  deliveries: number;
  /** When to look again (a call is still open), or undefined. */
  recheckAt?: Date;
}

/** Another job wrote the session's progress while this one ran: this one's work is discarded. */
class ProgressConflict extends Error {}

/** Runs of a job that lost a race on its session's progress before it gives up (and is retried later). */
const CONFLICT_ATTEMPTS = 3;

/**
 * Processes one session's call data and errors, incrementally:
 *
 * 1. reads the session's progress (`call_progress`: the detector's snapshot, each call's facts,
 *    the score's sums, and the watermark of consumed chunks) and the chunks after its watermark;
 *    reads the chunks with call items not consumed yet (late chunks included) from the blob
 *    store and validates their items as ingest did;
 * 2. adds the new items, in session order, to the progress: the calls' rows are computed from it
 *    (`scoreCall`, setup time, path, network, codec, the session's browser/os/device/release/user)
 *    with the findings of `@svc/detectors` (project thresholds, judged up to the session's last
 *    sign of life), and the new samples' series are appended as pieces. When there is no usable
 *    progress (a first job, `svc reprocess-calls`, changed thresholds) or a new item comes before
 *    one already consumed (a late chunk), the session is computed from all its items instead;
 * 3. writes the new items, the progress (only over the version it read: two jobs never both
 *    write), the calls, their tracks and series pieces and the findings that changed, and ends
 *    the job, atomically: the usual live job (calls still open, nothing for issue clusters or
 *    custom rules) in one statement, any other in a transaction that also folds a closed call's
 *    pieces back into its rows, records the findings and the session's errors into the project's
 *    issue clusters when they changed, which write the notifications (events, outbox rows) their
 *    changes cause (`recordOccurrences`), and matches new custom events against custom rules
 *    (`notifyCustomEvents`).
 *
 * A job's work is proportional to its new items, not to the session's history. The rows are
 * exactly those of a computation from all the items at once (`summarizeCalls`), however the
 * items were chunked and whatever order chunks arrived in. Idempotent: a job run twice, or a
 * crash between two runs, changes nothing. Calls with no `pc_closed` are closed once the session
 * sent nothing for the project's `calls.inactivityTimeoutSec`.
 */
export async function processCallJob(
  dependencies: CallProcessingDependencies,
  job: ClaimedCallJob,
  serverNow: number = Date.now(),
): Promise<CallProcessingResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runCallJob(dependencies, job, attempt === 1 ? job.input : undefined, serverNow);
    } catch (error) {
      if (!(error instanceof ProgressConflict) || attempt >= CONFLICT_ATTEMPTS) throw error;
    }
  }
}

/**
 * The stored progress when processing can go on from it: same format, same thresholds. Parsed
 * anew by every run: the progress is changed in place.
 */
function usableProgress(stored: StoredCallProgress | undefined, thresholds: Thresholds) {
  const progress = (stored === undefined ? undefined : JSON.parse(stored.progress)) as
    | SessionProgress
    | undefined
    | null;
  if (progress?.version !== PROGRESS_VERSION) return undefined;
  return sameThresholds(progress.detector.thresholds, thresholds) ? progress : undefined;
}

const latest = (dates: ReadonlyArray<Date | null | undefined>): Date | null =>
  dates.reduce<Date | null>(
    (found, date) => (date == null || (found !== null && found >= date) ? found : new Date(date)),
    null,
  );

/**
 * The new watermark: from `consumedSeq`, over the chunks after it that follow each other without
 * a gap (once the job is written each of them is consumed: read by this job or an earlier one,
 * or without call items), with the latest `sentAt` and arrival among the chunks it covers.
 */
function advanceWatermark(
  stored: Pick<StoredCallProgress, 'consumedSeq' | 'consumedSentAt' | 'consumedReceivedAt'>,
  chunks: readonly SessionChunk[],
): Pick<StoredCallProgress, 'consumedSeq' | 'consumedSentAt' | 'consumedReceivedAt'> {
  let { consumedSeq } = stored;
  const covered: SessionChunk[] = [];
  for (const chunk of chunks) {
    if (chunk.seq !== consumedSeq + 1) break;
    consumedSeq = chunk.seq;
    covered.push(chunk);
  }
  return {
    consumedSeq,
    consumedSentAt: latest([stored.consumedSentAt, ...covered.map((chunk) => chunk.sentAt)]),
    consumedReceivedAt: latest([stored.consumedReceivedAt, ...covered.map((chunk) => chunk.receivedAt)]),
  };
}

async function runCallJob(
  dependencies: CallProcessingDependencies,
  job: ClaimedCallJob,
  claimed: CallJobInput | null | undefined,
  serverNow: number,
): Promise<CallProcessingResult> {
  const { database } = dependencies;
  const { projectId, sessionId } = job;
  const input =
    claimed === undefined ? await loadCallJob(database, projectId, sessionId) : (claimed ?? undefined);
  if (input === undefined) {
    await finishCallJob(database, job, undefined);
    return {
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
  }
  const { project, stored, session } = input;
  const settings = readSettingsText(project.settings);
  const thresholds = resolveThresholds(settings.detectorThresholds);

  // What was consumed: the progress, and the chunks after its watermark (all of them when the
  // progress cannot be gone on from).
  const kept = usableProgress(stored, thresholds);
  const watermark =
    stored !== undefined && kept !== undefined
      ? stored
      : { consumedSeq: -1, consumedSentAt: null, consumedReceivedAt: null };
  const chunks =
    stored !== undefined && kept === undefined && stored.consumedSeq >= 0
      ? await findChunksAfter(database, projectId, sessionId, -1)
      : input.chunks;
  const unread = chunks.filter((chunk) => chunk.callItemCount > 0 && !chunk.consumed);
  const fresh: PlacedCallItem[] = [];
  for (const chunk of unread) {
    const bytes = await readChunkBytes(dependencies, dependencies.log, project, {
      session_id: sessionId,
      seq: chunk.seq,
      blob_key: chunk.blobKey,
    });
    fresh.push(...callItemsOfChunk(bytes, chunk.seq));
  }
  sortItems(fresh);
  const consumed = advanceWatermark(watermark, chunks);

  // Go on from the progress when the new items all come after what it consumed; else recompute.
  let progress: SessionProgress;
  let pieces: SeriesPiece[];
  let rescored = 0;
  const recomputed = kept === undefined || !comesAfter(kept, fresh);
  if (!recomputed) {
    progress = kept;
    const added = addItems(progress, fresh);
    for (const pc of added.rescore) {
      const own = fresh.flatMap((entry) =>
        entry.item.type === 'call.sample' && entry.item.pc === pc ? [entry.item] : [],
      );
      rescoreCall(progress, pc, [...(await findCallSamples(database, projectId, sessionId, pc)), ...own]);
    }
    pieces = added.pieces;
    rescored = added.rescore.length;
  } else {
    progress = startProgress(thresholds);
    const all = [...(await findCallItems(database, projectId, sessionId)), ...fresh];
    pieces = addItems(progress, sortItems(all)).pieces;
  }

  // When the session was last seen alive: its newest chunk's `sentAt` (client clock) and
  // arrival (server clock).
  const sent = latest([watermark.consumedSentAt, ...chunks.map((chunk) => chunk.sentAt)]);
  const received = latest([watermark.consumedReceivedAt, ...chunks.map((chunk) => chunk.receivedAt)]);
  const lastSent = sent === null ? 0 : sent.getTime();
  const lastReceived = received === null ? serverNow : received.getTime();
  const aliveUntil = Math.max(lastSent, progress.latestItemAt ?? 0);
  const inactivityMs = settings.calls.inactivityTimeoutSec * 1000;
  const clientNow = aliveUntil + Math.max(0, serverNow - lastReceived);

  const { calls, findings } = summarizeProgress(progress, { aliveUntil, clientNow, inactivityMs });

  const open = calls.filter((call) => call.state === 'open');
  const recheckAt =
    open.length === 0
      ? undefined
      : new Date(
          serverNow +
            Math.max(1_000, inactivityMs - (clientNow - Math.min(...open.map((call) => call.lastItemAt)))),
        );

  // Pieces go into the rows when the session is recomputed; else they are appended, and folded
  // into the rows of the calls that are closed now.
  const appended = recomputed ? [] : pieces;
  for (const call of progress.calls) if (appended.some((piece) => piece.pc === call.pc)) call.segments += 1;
  const folded = new Set<string>();
  for (const call of calls) {
    const own = progress.calls.find((candidate) => candidate.pc === call.pc);
    if (call.state === 'closed' && own !== undefined && own.segments > 0) {
      folded.add(call.pc);
      own.segments = 0;
    }
  }

  // Issue clusters hear of the session only when its occurrences changed: a finding appeared or
  // went, or an error has no occurrence yet (otherwise recording them again changes nothing).
  const findingKeys = findingOccurrences(findings).map((occurrence) => occurrence.key);
  const occurrencesChanged =
    input.unrecordedErrors ||
    findingKeys.length !== input.findingOccurrenceKeys.length ||
    findingKeys.some((key) => !input.findingOccurrenceKeys.includes(key));
  const findingsChanged = !sameFindings(findings, input.findings);

  const result = {
    chunksRead: unread.length,
    itemsAdded: fresh.length,
    recomputed,
    rescored,
    calls: calls.length,
    openCalls: open.length,
    findings: findings.length,
    trackSamples: pieces.reduce(
      (sum, piece) => sum + (piece.track === null ? 0 : (piece.series.t?.length ?? 0)),
      0,
    ),
    ...(recheckAt === undefined ? {} : { recheckAt }),
  };

  // The usual live job: new items added to calls that are still open, with no news for issue
  // clusters or custom rules. One statement.
  if (
    !recomputed &&
    stored !== undefined &&
    recheckAt !== undefined &&
    folded.size === 0 &&
    !occurrencesChanged &&
    !input.unhandledCustomEvents
  ) {
    const saved = await writeIncrementalJob(database, {
      projectId,
      sessionId,
      readVersion: stored.version,
      ...consumed,
      progress,
      items: fresh.map((entry) => itemRecord(projectId, sessionId, entry)),
      calls: calls.map((call) => callRecord(projectId, sessionId, call, session, emptyConnectionSeries())),
      tracks: newTracks(progress, pieces).map(({ pc, track }) => ({
        pc,
        track_id: track.id,
        kind: track.kind,
        dir: track.dir,
      })),
      pieces: [...piecesByCall(pieces)].map(([pc, own]) => {
        const row = seriesPiecesRow('', own);
        return { pc, first_sample: row.firstSample, series: row.series };
      }),
      findings: findingsChanged
        ? findings.map((finding) => ({
            pc: finding.pc ?? '',
            kind: finding.kind,
            severity: finding.severity,
            t: new Date(finding.t),
            track: finding.track ?? null,
            evidence: finding.evidence,
          }))
        : null,
      generation: job.generation,
      dueAt: recheckAt,
    });
    if (!saved) throw new ProgressConflict(`Another job processed session ${sessionId} meanwhile`);
    return { ...result, occurrences: 0, events: 0, deliveries: 0 };
  }

  const errors = occurrencesChanged ? await findErrorSignals(database, projectId, sessionId) : [];
  const occurrences = [...findingOccurrences(findings), ...errors.map(errorOccurrence)];

  const recorded = await database.transaction().execute(async (transaction) => {
    // First the progress: a job that read another version stops here, before any other write.
    const saved = await saveCallProgress(
      transaction,
      projectId,
      sessionId,
      { ...consumed, progress },
      stored?.version,
    );
    if (!saved) throw new ProgressConflict(`Another job processed session ${sessionId} meanwhile`);

    const rows = fresh.map((entry) => itemRow(projectId, sessionId, entry));
    for (const batch of insertBatches(rows)) {
      await transaction
        .insertInto('call_items')
        .values(batch)
        .onConflict((conflict) => conflict.doNothing())
        .execute();
    }

    const callIds = await writeCalls(transaction, {
      projectId,
      sessionId,
      calls,
      progress,
      pieces,
      recomputed,
      session,
    });
    for (const pc of folded) {
      const callId = callIds.get(pc);
      if (callId !== undefined) await foldSeriesPieces(transaction, projectId, callId);
    }
    if (findingsChanged) await writeFindings(transaction, projectId, sessionId, findings, callIds);

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
      const clustered = occurrencesChanged
        ? await recordOccurrences(transaction, project, described, occurrences, at)
        : { added: 0, events: [], deliveries: 0 };
      const custom = input.unhandledCustomEvents
        ? await notifyCustomEvents(transaction, project, described, at)
        : { events: [], deliveries: 0 };
      notified = {
        occurrences: clustered.added,
        events: clustered.events.length + custom.events.length,
        deliveries: clustered.deliveries + custom.deliveries,
      };
    }
    await finishCallJob(transaction, job, recheckAt);
    return notified;
  });
  if ((recorded?.deliveries ?? 0) > 0) dependencies.onDeliveriesQueued?.();

  return {
    ...result,
    occurrences: recorded?.occurrences ?? 0,
    events: recorded?.events ?? 0,
    deliveries: recorded?.deliveries ?? 0,
  };
}

/** A finding as compared with its stored row: every column that matters but its call id, as text. */
function findingIdentity(row: {
  pc: string;
  kind: string;
  severity: string;
  t: Date | string | number;
  track: string | null;
  evidence: Record<string, unknown>;
}): string {
  const evidence = Object.keys(row.evidence)
    .sort()
    .map((key) => [key, row.evidence[key]]);
  return JSON.stringify([row.pc, row.kind, row.severity, new Date(row.t).getTime(), row.track, evidence]);
}

/**
 * Whether the stored finding rows are already these findings (a call keeps its id, so its
 * findings' `call_id` cannot have changed).
 */
function sameFindings(findings: readonly Finding[], stored: CallJobInput['findings']): boolean {
  if (findings.length !== stored.length) return false;
  const identities = new Set(stored.map(findingIdentity));
  return findings.every((finding) =>
    identities.has(
      findingIdentity({
        pc: finding.pc ?? '',
        kind: finding.kind,
        severity: finding.severity,
        t: finding.t,
        track: finding.track ?? null,
        evidence: finding.evidence,
      }),
    ),
  );
}

/**
 * Findings: one row per (pc, kind); a finding that no longer holds (a late chunk showed the call
 * connected after all) is removed, one that still holds keeps its created_at.
 */
async function writeFindings(
  transaction: Transaction<Database>,
  projectId: string,
  sessionId: string,
  findings: readonly Finding[],
  callIds: ReadonlyMap<string, string>,
): Promise<void> {
  const findingRows = findings.map((finding) => ({
    project_id: projectId,
    session_id: sessionId,
    pc: finding.pc ?? '',
    kind: finding.kind,
    call_id: finding.pc === undefined ? null : (callIds.get(finding.pc) ?? null),
    severity: finding.severity,
    t: new Date(finding.t),
    track: finding.track ?? null,
    evidence: JSON.stringify(finding.evidence),
  }));
  let stale = transaction
    .deleteFrom('call_findings')
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId);
  if (findingRows.length > 0) {
    stale = stale.where(({ not, or, and, eb }) =>
      not(or(findingRows.map((row) => and([eb('pc', '=', row.pc), eb('kind', '=', row.kind)])))),
    );
    await transaction
      .insertInto('call_findings')
      .values(findingRows)
      .onConflict((conflict) =>
        conflict.columns(['project_id', 'session_id', 'pc', 'kind']).doUpdateSet((update) => ({
          call_id: update.ref('excluded.call_id'),
          severity: update.ref('excluded.severity'),
          t: update.ref('excluded.t'),
          track: update.ref('excluded.track'),
          evidence: update.ref('excluded.evidence'),
          updated_at: sql<Date>`now()`,
        })),
      )
      .execute();
  }
  await stale.execute();
}

/**
 * Writes the session's calls, their tracks and series: every computed column of each call row
 * (its id kept); recomputed, the whole series into the rows (the calls' appended pieces
 * deleted); else the new pieces appended. Returns each call's id by peer connection.
 */
async function writeCalls(
  transaction: Transaction<Database>,
  input: {
    projectId: string;
    sessionId: string;
    calls: readonly CallFacts[];
    progress: SessionProgress;
    pieces: readonly SeriesPiece[];
    recomputed: boolean;
    session: SessionFacts | undefined;
  },
): Promise<Map<string, string>> {
  const { projectId, sessionId, calls, progress, pieces, recomputed } = input;
  const callIds = new Map<string, string>();
  if (calls.length === 0) return callIds;
  const connectionOf = (pc: string) =>
    (recomputed ? pieces.find((piece) => piece.pc === pc && piece.track === null)?.series : undefined) ??
    emptyConnectionSeries();
  const rows = calls.map((call) => callRow(projectId, sessionId, call, input.session, connectionOf(call.pc)));
  // Every column the row computes is replaced, but the key, the id and, when going on from the
  // progress, the series (new samples are appended as pieces).
  const kept = recomputed ? KEPT_CALL_COLUMNS : new Set([...KEPT_CALL_COLUMNS, 'series']);
  const computed = Object.keys(rows[0] ?? {}).filter((column) => !kept.has(column));
  const upserted = await transaction
    .insertInto('calls')
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(['project_id', 'session_id', 'pc']).doUpdateSet((update) => ({
        ...Object.fromEntries(
          computed.map((column) => [column, update.ref(`excluded.${column}` as 'excluded.state')]),
        ),
        updated_at: sql<Date>`now()`,
      })),
    )
    .returning(['id', 'pc'])
    .execute();
  for (const row of upserted) callIds.set(row.pc, row.id);

  const trackRow = (
    callId: string,
    track: { id: string; kind: string; dir: string; sampleCount: number },
  ) => ({
    project_id: projectId,
    call_id: callId,
    track_id: track.id,
    kind: track.kind,
    dir: track.dir,
    sample_count: track.sampleCount,
  });
  if (recomputed) {
    const ids = [...callIds.values()];
    await deleteSeriesPieces(transaction, projectId, ids);
    await transaction
      .deleteFrom('call_tracks')
      .where('project_id', '=', projectId)
      .where('call_id', 'in', ids)
      .execute();
    const tracks = progress.calls.flatMap((call) => {
      const callId = callIds.get(call.pc);
      if (callId === undefined) return [];
      return call.tracks.map((track) => ({
        ...trackRow(callId, track),
        series: JSON.stringify(
          pieces.find((piece) => piece.pc === call.pc && piece.track === track.id)?.series ?? {},
        ),
      }));
    });
    // Each row holds a track's whole series: 500 rows keep one statement a few MB.
    for (const batch of insertBatches(tracks, 500)) {
      await transaction.insertInto('call_tracks').values(batch).execute();
    }
    return callIds;
  }

  // Going on: a new track gets its row (an empty series: its samples are in the pieces), and the
  // new pieces are appended, a row per call.
  const added = newTracks(progress, pieces).flatMap(({ pc, track }) => {
    const callId = callIds.get(pc);
    return callId === undefined
      ? []
      : [
          {
            ...trackRow(callId, { ...track, sampleCount: 0 }),
            series: JSON.stringify({ t: [], windowMs: [] }),
          },
        ];
  });
  for (const batch of insertBatches(added, 500)) {
    await transaction
      .insertInto('call_tracks')
      .values(batch)
      .onConflict((conflict) => conflict.columns(['project_id', 'call_id', 'track_id']).doNothing())
      .execute();
  }
  await insertSeriesPieces(
    transaction,
    projectId,
    [...piecesByCall(pieces)].flatMap(([pc, own]) => {
      const callId = callIds.get(pc);
      return callId === undefined ? [] : [seriesPiecesRow(callId, own)];
    }),
  );
  return callIds;
}

/** New samples' pieces by peer connection, as `[trackId, firstSample, series]` ('' the connection). */
function piecesByCall(pieces: readonly SeriesPiece[]): Map<string, SeriesPieces> {
  const byCall = new Map<string, Array<SeriesPieces[number]>>();
  for (const piece of pieces) {
    const own = byCall.get(piece.pc) ?? [];
    own.push([piece.track ?? '', piece.firstSample, piece.series]);
    byCall.set(piece.pc, own);
  }
  return byCall;
}

/** The tracks whose first samples are in these pieces (their rows do not exist yet). */
function newTracks(progress: SessionProgress, pieces: readonly SeriesPiece[]) {
  return pieces.flatMap((piece) => {
    if (piece.track === null || piece.firstSample !== 0) return [];
    const track = progress.calls
      .find((call) => call.pc === piece.pc)
      ?.tracks.find((candidate) => candidate.id === piece.track);
    return track === undefined ? [] : [{ pc: piece.pc, track }];
  });
}
