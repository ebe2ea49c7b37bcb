import { type Finding, resolveThresholds, type Thresholds } from '@svc/detectors';
import { type CallEvent, type CallSample, parseChunk } from '@svc/protocol';
import { type Kysely, sql, type Transaction } from 'kysely';
import { insertBatches } from '../../platform/database/insert-batches.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { NewCall, NewCallItem } from '../../platform/database/tables/calls.table.ts';
import { createId } from '../../platform/ids.ts';
import type { StepInput } from '../../platform/jobs/step-input.ts';
import type { ProjectSettings } from '../projects/index.ts';
import { meter } from '../usage/index.ts';
import {
  addItems,
  type CallFacts,
  comesAfter,
  type PlacedCallItem,
  PROGRESS_VERSION,
  rescoreCall,
  type SeriesPiece,
  type SessionProgress,
  sameThresholds,
  sortItems,
  startProgress,
  summarizeProgress,
} from './call-progress.ts';
import {
  type CALL_COLUMNS,
  type CallSessionFacts,
  deleteSeriesPieces,
  findCallItems,
  findCallSamples,
  findChunksAfter,
  foldSeriesPieces,
  insertSeriesPieces,
  KEPT_CALL_COLUMNS,
  type LiveCallsWrite,
  type SeriesPieces,
  type SessionChunk,
  type StoredCallProgress,
  type StoredFinding,
  saveCallProgress,
  seriesPiecesRow,
} from './call-progress-repository.ts';
import { emptyConnectionSeries } from './summarize-calls.ts';

// The calls step of a session's processing (servers/api/docs/processing.md): from the chunks'
// call items to the calls' rows, series and findings, incrementally. Processing runs it with the
// other steps (issues, custom events) and ends the job.

/** What the calls step reads with its job (see {@link CALLS_INPUT}). */
export interface CallsInput {
  /** The session's progress row, if any. */
  stored: StoredCallProgress | undefined;
  /** The chunks after the stored watermark (all of them without a progress row). */
  chunks: SessionChunk[];
  /** The session's stored findings (to write only what changed). */
  findings: StoredFinding[];
}

/**
 * The calls step's part of the statement that claims or loads a job: the session's progress, the
 * chunks after its watermark (whether their call items are consumed yet), and the stored
 * findings. The progress comes as JSON text: the step parses it, where the database's jsonb
 * output and the driver's parsing cost more.
 */
export const CALLS_INPUT: StepInput<CallsInput> = {
  columns: `
      progress.version, progress.consumed_seq, progress.consumed_sent_at, progress.consumed_received_at,
      progress.progress,
      (select coalesce(jsonb_agg(chunk order by chunk.seq), '[]'::jsonb) from (
        select seq, blob_key, call_item_count, sent_at, received_at,
          call_item_count > 0 and exists (
            select 1 from call_items
            where call_items.project_id = chunks.project_id and call_items.session_id = chunks.session_id
              and call_items.seq = chunks.seq) as consumed
        from chunks
        where chunks.project_id = job.project_id and chunks.session_id = job.session_id
          and chunks.seq > coalesce(progress.consumed_seq, -1)) as chunk) as chunks,
      (select coalesce(jsonb_agg(finding), '[]'::jsonb) from (
        select pc, kind, call_id, severity, t, track, evidence from call_findings
        where call_findings.project_id = job.project_id
          and call_findings.session_id = job.session_id) as finding) as findings`,
  joins: `
    left join call_progress as progress
      on progress.project_id = job.project_id and progress.session_id = job.session_id`,
  read(row) {
    const loaded = row as unknown as LoadedCallsInput;
    return {
      stored:
        loaded.version === null
          ? undefined
          : {
              version: loaded.version,
              consumedSeq: loaded.consumed_seq ?? -1,
              consumedSentAt: loaded.consumed_sent_at === null ? null : new Date(loaded.consumed_sent_at),
              consumedReceivedAt:
                loaded.consumed_received_at === null ? null : new Date(loaded.consumed_received_at),
              progress: loaded.progress ?? 'null',
            },
      chunks: loaded.chunks.map((chunk) => ({
        seq: chunk.seq,
        blobKey: chunk.blob_key,
        callItemCount: chunk.call_item_count,
        sentAt: new Date(chunk.sent_at),
        receivedAt: new Date(chunk.received_at),
        consumed: chunk.consumed,
      })),
      findings: loaded.findings,
    };
  },
};

/** The columns of {@link CALLS_INPUT} as the driver returns them. */
interface LoadedCallsInput {
  version: number | null;
  consumed_seq: number | null;
  consumed_sent_at: Date | string | null;
  consumed_received_at: Date | string | null;
  progress: string | null;
  chunks: Array<{
    seq: number;
    blob_key: string;
    call_item_count: number;
    sent_at: string;
    received_at: string;
    consumed: boolean;
  }>;
  findings: StoredFinding[];
}

/** What the calls step needs from the process. */
export interface CallsStepDependencies {
  database: Kysely<Database>;
  /** A stored chunk's JSON bytes (sessions' chunk reader, opened with the project's key). */
  readChunk(chunk: { seq: number; blobKey: string }): Promise<Uint8Array>;
}

/** What the calls step did in one run. */
export interface CallsStepResult {
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
  /** When to look again (a call is still open), or undefined. */
  recheckAt?: Date;
}

/** What the calls step computed, to be written by the job that runs it. */
export interface CallsPlan {
  result: CallsStepResult;
  /** The session's findings now (issue clusters record them). */
  findings: readonly Finding[];
  /**
   * The usual live run: new items added to calls that are all still open, and nothing folded.
   * Its writes fit the one statement of {@link liveCallsStatement} ({@link CallsPlan.liveWrite}).
   */
  live: boolean;
  /** The payload of the live write (only when {@link CallsPlan.live}). */
  liveWrite(): LiveCallsWrite;
  /**
   * Writes what the run computed inside the job's transaction, the progress first. False, having
   * written nothing, when another job wrote the session's progress since it was read: the
   * transaction must then be given up and the job run again.
   */
  write(transaction: Transaction<Database>): Promise<boolean>;
}

/**
 * The calls step of one session's job, computed incrementally:
 *
 * 1. reads the session's progress (`call_progress`: the detector's snapshot, each call's facts,
 *    the score's sums, and the watermark of consumed chunks) and the chunks after its watermark;
 *    reads the chunks with call items not consumed yet (late chunks included) and validates their
 *    items as ingest did;
 * 2. adds the new items, in session order, to the progress: the calls' rows are computed from it
 *    (`scoreCall`, setup time, path, network, codec, the session's browser/os/device/release/user)
 *    with the findings of `@svc/detectors` (project thresholds, judged up to the session's last
 *    sign of life), and the new samples' series are appended as pieces. When there is no usable
 *    progress (a first job, `svc reprocess-calls`, changed thresholds) or a new item comes before
 *    one already consumed (a late chunk), the session is computed from all its items instead;
 * 3. returns the plan of its writes: the new items, the progress (only over the version it read:
 *    two jobs never both write), the calls, their tracks and series pieces and the findings that
 *    changed, a closed call's pieces folded back into its rows.
 *
 * A run's work is proportional to its new items, not to the session's history. The rows are
 * exactly those of a computation from all the items at once (`summarizeCalls`), however the
 * items were chunked and whatever order chunks arrived in. Calls with no `pc_closed` are closed
 * once the session sent nothing for the project's `calls.inactivityTimeoutSec`.
 */
export async function planCalls(
  dependencies: CallsStepDependencies,
  job: {
    projectId: string;
    sessionId: string;
    settings: ProjectSettings;
    /** The session's facts the calls copy, if its row exists. */
    session: CallSessionFacts | undefined;
    input: CallsInput;
    serverNow: number;
  },
): Promise<CallsPlan> {
  const { database } = dependencies;
  const { projectId, sessionId, settings, session, input, serverNow } = job;
  const { stored } = input;
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
  for (const chunk of unread) fresh.push(...callItemsOfChunk(await dependencies.readChunk(chunk), chunk.seq));
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
  const findingsChanged = !sameFindings(findings, input.findings);

  const result: CallsStepResult = {
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

  return {
    result,
    findings,
    live: !recomputed && stored !== undefined && recheckAt !== undefined && folded.size === 0,
    liveWrite() {
      if (stored === undefined) throw new Error('A live calls write goes on from a stored progress');
      return {
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
      };
    },
    async write(transaction) {
      // First the progress: a job that read another version stops here, before any other write.
      const saved = await saveCallProgress(
        transaction,
        projectId,
        sessionId,
        { ...consumed, progress },
        stored?.version,
      );
      if (!saved) return false;

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
      return true;
    },
  };
}

/**
 * The call items of a stored chunk's JSON, validated exactly as ingest validated them, at their
 * places (`index` counts every event as sent, unknown types included).
 */
function callItemsOfChunk(bytes: Uint8Array, seq: number): PlacedCallItem[] {
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
  session: CallSessionFacts | undefined,
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
function sameFindings(findings: readonly Finding[], stored: readonly StoredFinding[]): boolean {
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
 * Adds the session's calls to the project's usage of the day: each call new to the index counts
 * once, and call seconds grow by how much longer each call became (a recomputation that shortens
 * one takes the difference back), so a call processed in pieces is counted once in all.
 */
async function meterCalls(
  transaction: Transaction<Database>,
  projectId: string,
  sessionId: string,
  rows: readonly NewCall[],
): Promise<void> {
  const before = new Map(
    (
      await transaction
        .selectFrom('calls')
        .select(['pc', 'duration_ms'])
        .where('project_id', '=', projectId)
        .where('session_id', '=', sessionId)
        .execute()
    ).map((row) => [row.pc, Number(row.duration_ms ?? 0)]),
  );
  let calls = 0;
  let milliseconds = 0;
  for (const row of rows) {
    if (!before.has(row.pc)) calls += 1;
    milliseconds += Number(row.duration_ms ?? 0) - (before.get(row.pc) ?? 0);
  }
  // Seconds of all the calls: the per-call sums of milliseconds, rounded once per step.
  const totalBefore = [...before.values()].reduce((sum, value) => sum + value, 0);
  const seconds = Math.round((totalBefore + milliseconds) / 1000) - Math.round(totalBefore / 1000);
  await meter(transaction, projectId, { calls, call_seconds: seconds });
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
    session: CallSessionFacts | undefined;
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
  await meterCalls(transaction, projectId, sessionId, rows);
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
