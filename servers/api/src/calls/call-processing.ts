import { resolveThresholds } from '@svc/detectors';
import { type CallEvent, type CallSample, parseChunk } from '@svc/protocol';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BlobStore } from '../blob-store/index.ts';
import type { MasterKey } from '../crypto/index.ts';
import { insertBatches } from '../database/insert-batches.ts';
import type { Database } from '../database/schema.ts';
import type { NewCall, NewCallItem } from '../database/tables/calls.table.ts';
import type { Session } from '../database/tables/sessions.table.ts';
import { createId } from '../ids.ts';
import { errorOccurrence, findingOccurrences, recordOccurrences } from '../issues/clusters.ts';
import { notifyCustomEvents } from '../notifications/custom-events.ts';
import { readChunkBytes } from '../routes/sessions/chunk-reader.ts';
import { readSettings } from '../settings.ts';
import { type CallSummary, type PlacedCallItem, summarizeCalls } from './summarize-calls.ts';

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
}

/**
 * Claims up to `limit` due jobs for `leaseMs` (a worker that dies loses them when the lease
 * ends). Concurrent workers, in this process or others on the same PostgreSQL, never claim the
 * same job: `for update skip locked`.
 */
export async function claimCallJobs(
  database: Kysely<Database>,
  limit: number,
  leaseMs: number,
): Promise<ClaimedCallJob[]> {
  const { rows } = await sql<{
    project_id: string;
    session_id: string;
    generation: number;
    attempts: number;
  }>`
    update call_jobs set locked_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = attempts + 1
    where (project_id, session_id) in (
      select project_id, session_id from call_jobs
      where due_at <= now() and (locked_until is null or locked_until <= now())
      order by due_at
      limit ${limit}
      for update skip locked
    )
    returning project_id, session_id, generation, attempts`.execute(database);
  return rows.map((row) => ({
    projectId: row.project_id,
    sessionId: row.session_id,
    generation: row.generation,
    attempts: row.attempts,
  }));
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
      due_at: sql<Date>`case when generation = ${job.generation} then ${recheckAt ?? new Date()}::timestamptz else due_at end`,
    })
    .where((w) => w.and(where))
    .execute();
}

/**
 * Queues every session with call data (of one project, or of all) for processing again, due now:
 * after a change of detector thresholds, or of this server's processing. Items already read stay
 * in `call_items`, so this recomputes without reading blobs again.
 *
 * @returns how many sessions were queued.
 */
export async function queueCallReprocessing(database: Kysely<Database>, projectId?: string): Promise<number> {
  const { rows } = await sql<{ session_id: string }>`
    insert into call_jobs (project_id, session_id, due_at)
    select distinct project_id, session_id, now() from chunks
    where call_item_count > 0 ${projectId === undefined ? sql`` : sql`and project_id = ${projectId}`}
    order by project_id, session_id
    on conflict (project_id, session_id) do update
      set generation = call_jobs.generation + 1, due_at = now()
    returning session_id`.execute(database);
  return rows.length;
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

function itemRow(projectId: string, sessionId: string, entry: PlacedCallItem): NewCallItem {
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
    item: JSON.stringify(item) as never,
  };
}

/** Columns of a `calls` row that a recomputation never changes: its key and its id. */
const KEPT_CALL_COLUMNS = new Set(['project_id', 'id', 'session_id', 'pc']);

/** The `calls` row of a summary (its id is kept when the call exists). */
function callRow(
  projectId: string,
  sessionId: string,
  call: CallSummary,
  session: SessionFacts | undefined,
): NewCall {
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
    local_types: JSON.stringify(call.localTypes),
    remote_types: JSON.stringify(call.remoteTypes),
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
    codecs: JSON.stringify(call.codecs),
    sample_count: call.sampleCount,
    track_count: call.tracks.length,
    issue_kinds: JSON.stringify(call.issueKinds),
    issue_count: call.issueKinds.length,
    has_issue: call.hasIssue,
    max_severity: call.maxSeverity,
    series: JSON.stringify(call.series),
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
  calls: number;
  openCalls: number;
  findings: number;
  trackSamples: number;
  /** Occurrences newly recorded into issue clusters, and the notifications they caused. */
  occurrences: number;
  events: number;
  deliveries: number;
  /** When to look again (a call is still open), or undefined. */
  recheckAt?: Date;
}

/**
 * Processes one session's call data and errors:
 *
 * 1. reads the chunks with call items that were not read yet (late chunks included) from the
 *    blob store and validates their items as ingest did;
 * 2. recomputes every call of the session from all its items: a call row per peer connection
 *    (`scoreCall`, setup time, path, network, codec, the session's browser/os/device/release/user),
 *    per-track metric series, and `@svc/detectors` findings with the project's thresholds;
 * 3. writes the new items, the calls, their tracks and findings in one transaction;
 * 4. in that transaction, records the findings and the session's errors into the project's issue
 *    clusters, which write the notifications (events, outbox rows) their changes cause
 *    (`recordOccurrences`), matches new custom events against custom rules
 *    (`notifyCustomEvents`), and ends the job.
 *
 * Deterministic (the same items give the same rows) and idempotent: a job run twice, or a crash
 * between two runs, changes nothing. Calls with no `pc_closed` are closed once the session sent
 * nothing for the project's `calls.inactivityTimeoutSec`.
 */
export async function processCallJob(
  dependencies: CallProcessingDependencies,
  job: ClaimedCallJob,
  serverNow: number = Date.now(),
): Promise<CallProcessingResult> {
  const { database } = dependencies;
  const { projectId, sessionId } = job;
  const project = await database
    .selectFrom('projects')
    .select(['id', 'organization_id', 'wrapped_data_key', 'settings'])
    .where('id', '=', projectId)
    .executeTakeFirst();
  if (project === undefined) {
    await finishCallJob(database, job, undefined);
    return {
      chunksRead: 0,
      itemsAdded: 0,
      calls: 0,
      openCalls: 0,
      findings: 0,
      trackSamples: 0,
      occurrences: 0,
      events: 0,
      deliveries: 0,
    };
  }
  const settings = readSettings(project.settings);

  const unread = await database
    .selectFrom('chunks')
    .select(['session_id', 'seq', 'blob_key'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('call_item_count', '>', 0)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('call_items')
            .select(sql.lit(1).as('one'))
            .whereRef('call_items.project_id', '=', 'chunks.project_id')
            .whereRef('call_items.session_id', '=', 'chunks.session_id')
            .whereRef('call_items.seq', '=', 'chunks.seq'),
        ),
      ),
    )
    .orderBy('seq')
    .execute();
  const added: PlacedCallItem[] = [];
  for (const chunk of unread) {
    const bytes = await readChunkBytes(dependencies, dependencies.log, project, chunk);
    added.push(...callItemsOfChunk(bytes, chunk.seq));
  }

  const stored = await database
    .selectFrom('call_items')
    .select(['seq', 'event_index', 'item'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .execute();
  const seen = new Set(stored.map((row) => `${row.seq}/${row.event_index}`));
  const fresh = added.filter((entry) => !seen.has(`${entry.seq}/${entry.index}`));
  const items: PlacedCallItem[] = [
    ...stored.map((row) => ({
      seq: row.seq,
      index: row.event_index,
      item: row.item as unknown as CallSample | CallEvent,
    })),
    ...fresh,
  ];

  // The session's facts the calls copy, and when it was last seen alive: its newest chunk's
  // `sentAt` (client clock) and arrival (server clock).
  const session = await database
    .selectFrom('sessions')
    .select(SESSION_FACTS)
    .select(['started_at', 'url'])
    .select((select) => [
      select
        .selectFrom('chunks')
        .select(({ fn }) => fn.max('sent_at').as('sent'))
        .whereRef('chunks.project_id', '=', 'sessions.project_id')
        .whereRef('chunks.session_id', '=', 'sessions.id')
        .as('last_sent_at'),
      select
        .selectFrom('chunks')
        .select(({ fn }) => fn.max('received_at').as('received'))
        .whereRef('chunks.project_id', '=', 'sessions.project_id')
        .whereRef('chunks.session_id', '=', 'sessions.id')
        .as('last_received_at'),
    ])
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
  const alive = { sent: session?.last_sent_at, received: session?.last_received_at };
  const lastSent = alive?.sent == null ? 0 : new Date(alive.sent).getTime();
  const lastReceived = alive?.received == null ? serverNow : new Date(alive.received).getTime();
  const latestItem = items.reduce((latest, entry) => Math.max(latest, entry.item.t), 0);
  const aliveUntil = Math.max(lastSent, latestItem);
  const inactivityMs = settings.calls.inactivityTimeoutSec * 1000;
  const clientNow = aliveUntil + Math.max(0, serverNow - lastReceived);

  const { calls, findings } = summarizeCalls(items, {
    thresholds: resolveThresholds(settings.detectorThresholds),
    aliveUntil,
    clientNow,
    inactivityMs,
  });

  const open = calls.filter((call) => call.state === 'open');
  const recheckAt =
    open.length === 0
      ? undefined
      : new Date(
          serverNow +
            Math.max(1_000, inactivityMs - (clientNow - Math.min(...open.map((call) => call.lastItemAt)))),
        );

  const errors = await database
    .selectFrom('session_signals')
    .select(['seq', 'event_index', 't', 'name', 'message', 'details'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('kind', '=', 'error')
    .execute();
  const occurrences = [...findingOccurrences(findings), ...errors.map(errorOccurrence)];

  const recorded = await database.transaction().execute(async (transaction) => {
    const rows = fresh.map((entry) => itemRow(projectId, sessionId, entry));
    for (const batch of insertBatches(rows)) {
      await transaction
        .insertInto('call_items')
        .values(batch)
        .onConflict((conflict) => conflict.doNothing())
        .execute();
    }

    const callIds = new Map<string, string>();
    if (calls.length > 0) {
      const rows = calls.map((call) => callRow(projectId, sessionId, call, session));
      // Every column the row computes is replaced; the key and the id stay (a call keeps its id).
      const computed = Object.keys(rows[0] ?? {}).filter((column) => !KEPT_CALL_COLUMNS.has(column));
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

      const ids = [...callIds.values()];
      await transaction
        .deleteFrom('call_tracks')
        .where('project_id', '=', projectId)
        .where('call_id', 'in', ids)
        .execute();
      const tracks = calls.flatMap((call) => {
        const callId = callIds.get(call.pc);
        return callId === undefined
          ? []
          : call.tracks.map((track) => ({
              project_id: projectId,
              call_id: callId,
              track_id: track.id,
              kind: track.kind,
              dir: track.dir,
              sample_count: track.sampleCount,
              series: JSON.stringify(track.series),
            }));
      });
      // Each row holds a track's whole series: 500 rows keep one statement a few MB.
      for (const batch of insertBatches(tracks, 500)) {
        await transaction.insertInto('call_tracks').values(batch).execute();
      }
    }

    // Findings: one row per (pc, kind); a finding that no longer holds (a late chunk showed the
    // call connected after all) is removed, one that still holds keeps its created_at.
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
    let notified: { occurrences: number; events: number; deliveries: number } | undefined;
    if (session !== undefined) {
      const described = {
        id: sessionId,
        startedAt: new Date(session.started_at).getTime(),
        release: session.release,
        environment: session.environment,
        url: session.url,
      };
      const at = { now: new Date(serverNow), appUrl: dependencies.appUrl };
      const clustered = await recordOccurrences(transaction, project, described, occurrences, at);
      const custom = await notifyCustomEvents(transaction, project, described, at);
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
    chunksRead: unread.length,
    itemsAdded: fresh.length,
    calls: calls.length,
    openCalls: open.length,
    findings: findings.length,
    trackSamples: calls.reduce(
      (sum, call) => sum + call.tracks.reduce((tracks, track) => tracks + track.sampleCount, 0),
      0,
    ),
    occurrences: recorded?.occurrences ?? 0,
    events: recorded?.events ?? 0,
    deliveries: recorded?.deliveries ?? 0,
    ...(recheckAt === undefined ? {} : { recheckAt }),
  };
}
